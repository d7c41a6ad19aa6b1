//! Arbitrary templates and argument values through dynamic tools' command
//! templates (`toolgate_dynamic::Template`). Nothing may panic, and
//! for every template that parses and every fill that succeeds:
//!
//! - the argument vector has exactly one word per template word after the
//!   program, whatever the values hold (spaces, newlines, `;`, quotes…):
//!   no value can add or remove an argument;
//! - every word that is a whole placeholder is exactly the value given;
//! - a word the value begins never begins with `-` unless that is allowed;
//! - the program is the template's first word, never a value.
//!
//!     cargo +nightly fuzz run command_template -- -max_total_time=600

#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolgate_dynamic::Template;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The first line is the template; the other lines are values, given
    // in turn to the parameters the template names.
    let mut lines = text.split('\n');
    let source = lines.next().unwrap_or_default();
    let Ok(template) = Template::parse(source) else {
        return;
    };
    let words: Vec<&str> = source.split_whitespace().collect();
    assert_eq!(template.program(), words[0]);
    let params: Vec<String> = template.params().into_iter().map(str::to_owned).collect();
    let mut args = Map::new();
    for (name, value) in params.iter().zip(lines.by_ref()) {
        args.insert(name.clone(), Value::String(value.to_owned()));
    }
    // A second value stream spelled with separators the template never
    // sees: every value gets a newline and a `;` appended.
    for value in args.values_mut() {
        if let Value::String(s) = value {
            s.push_str("\n;x");
        }
    }
    let Ok(argv) = template.fill(&args, &BTreeSet::new()) else {
        return;
    };
    assert_eq!(
        argv.len(),
        words.len() - 1,
        "{source:?} {args:?} -> {argv:?}"
    );
    let mut after_dashes = false;
    for (word, filled) in words[1..].iter().zip(&argv) {
        after_dashes |= *word == "--";
        if let Some(name) = word
            .strip_prefix("{{")
            .and_then(|w| w.strip_suffix("}}"))
            .filter(|n| params.iter().any(|p| p == n))
        {
            assert_eq!(Some(&Value::String(filled.clone())), args.get(name));
            assert!(
                after_dashes || !filled.starts_with('-'),
                "{filled:?} begins with a dash"
            );
        }
    }
});
