//! Option tables, and the one matcher that reads every program's options.
//!
//! A program that may be `safe` has a [`Spec`]: the options known to only
//! change what it reads or prints, and the options known to write files, run
//! programs or load code, each with what it does. [`scan`] reads the
//! arguments the way GNU `getopt_long` does and judges them against the
//! spec:
//!
//! - an option in the read-only table is fine;
//! - an option in the danger table makes the command `dangerous`, with that
//!   option's reason (`` `sort --compress-program` runs a program ``);
//! - anything else (an option toolgate does not know, a cluster with an
//!   unknown letter, a value given to an option that takes none, an
//!   ambiguous abbreviation) makes it `dev`: never `safe`.
//!
//! # GNU abbreviations
//!
//! `getopt_long` accepts any unambiguous prefix of a long option: `--in`
//! is `sed --in-place`, `--to-com=x` is `tar --to-command=x`. So a long
//! option that is not exactly in the tables is matched as a prefix:
//!
//! 1. an exact name wins (`rg --pre` is `--pre`, not `--pre-glob`);
//! 2. a prefix of any dangerous option is dangerous, even if it also
//!    prefixes read-only ones (the program would reject the ambiguity, but
//!    toolgate does not count on that);
//! 3. a prefix of exactly one read-only option is that option;
//! 4. a prefix of several read-only options is `dev` (ambiguous);
//! 5. a prefix of nothing is unknown, so `dev`.
//!
//! Our tables list only part of a program's options, so the real program may
//! resolve a prefix differently: `--co` may be unique to toolgate and
//! ambiguous to the program. That only ever makes the program reject the
//! line. It can never make toolgate call an option read-only that the
//! program reads as a dangerous one: a prefix the program resolves to an
//! unlisted option matches nothing in our tables, and is `dev`. Programs
//! that do not abbreviate (clap, lexopt, Go's `flag`) reject prefixes
//! outright, which the same rules also cover.
//!
//! # The table syntax
//!
//! Each entry is one option and its aliases, separated by `|`:
//!
//! | spelling     | meaning                                                  |
//! |--------------|----------------------------------------------------------|
//! | `-x`         | a short flag (may be clustered: `-xy`)                    |
//! | `-x=`        | a short option with an argument (`-xVALUE` or `-x VALUE`) |
//! | `-x[=]`      | a short option with an optional attached argument (`-x`, `-xVALUE`) |
//! | `--name`     | a long flag                                              |
//! | `--name=`    | a long option with an argument (`--name=V` or `--name V`) |
//! | `--name[=]`  | a long option with an optional argument (only `--name=V`) |
//! | `-name`      | a whole word starting with one dash (`find -newer`, `xxd -ps`) |
//! | `-name=`     | the same, with an argument in the next word               |

use crate::judgement::{Judgement, dangerous, dev, short};
use crate::words::Word;

/// How a program's options are judged (see the [module docs](self)).
#[derive(Debug)]
pub struct Spec {
    /// Options that only change what is read or printed, in one or more
    /// tables (so common sets can be shared, as `git log` and `git show`
    /// share the diff options).
    pub read: &'static [&'static [&'static str]],
    /// Options that write files, run programs or load code, with what they
    /// do, said after the option: "runs a program for each file".
    pub danger: &'static [(&'static str, &'static str)],
    /// `-NUM` is an option (`head -5`, `git log -3`).
    pub numeric: bool,
    /// The tables list every option the program has (GNU coreutils 9 and
    /// the like), so a word whose value is only known at run time
    /// (`"$f"`, `*.rs`) cannot turn into an option that writes or runs
    /// anything. Otherwise such a word in option position is `dev`.
    pub complete: bool,
}

impl Spec {
    /// A spec with read-only options only.
    pub const fn read(read: &'static [&'static [&'static str]], complete: bool) -> Self {
        Self {
            read,
            danger: &[],
            numeric: false,
            complete,
        }
    }
}

/// Whether an option takes an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A flag.
    No,
    /// An argument, attached or in the next word.
    Required,
    /// An optional argument, attached only.
    Optional,
}

/// One spelling of an option, parsed from the table syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Alias<'s> {
    /// The name without dashes: `o`, `output`, `newer`.
    name: &'s str,
    form: Form,
    arg: Arg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Short,
    Long,
    /// A whole word with one dash.
    Word,
}

fn alias(spelling: &str) -> Alias<'_> {
    let (body, arg) = if let Some(b) = spelling.strip_suffix("[=]") {
        (b, Arg::Optional)
    } else if let Some(b) = spelling.strip_suffix('=') {
        (b, Arg::Required)
    } else {
        (spelling, Arg::No)
    };
    let (name, form) = if let Some(long) = body.strip_prefix("--") {
        (long, Form::Long)
    } else {
        let name = body.strip_prefix('-').unwrap_or(body);
        if name.chars().count() == 1 {
            (name, Form::Short)
        } else {
            (name, Form::Word)
        }
    };
    Alias { name, form, arg }
}

fn aliases(entry: &str) -> impl Iterator<Item = Alias<'_>> {
    entry.split('|').map(alias)
}

/// A value given to an option: `x` in `-o x`, `-ox`, `--output=x`.
#[derive(Debug, Clone, Copy)]
pub struct Value<'a> {
    /// The value as written, quotes removed.
    pub text: &'a str,
    /// Whether the value is exactly `text` (no expansion, substitution or
    /// pattern).
    pub literal: bool,
}

/// A read-only option found in the arguments.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The table entry, all aliases (`-o|--output=`).
    pub entry: &'static str,
    /// The value given to it, for an option that takes one.
    pub value: Option<Value<'a>>,
}

impl Found<'_> {
    /// Whether this option is `spelling` (`-t`, `--list`), or an alias of it.
    pub fn is(&self, spelling: &str) -> bool {
        let wanted = alias(spelling);
        aliases(self.entry).any(|a| a.name == wanted.name && a.form == wanted.form)
    }
}

/// The arguments of a command, read against its [`Spec`].
#[derive(Debug, Default)]
pub struct Scanned<'a> {
    /// The options given, in order.
    pub options: Vec<Found<'a>>,
    /// The operands (words that are not options), in order; after `--`,
    /// every word.
    pub operands: Vec<&'a Word>,
}

impl<'a> Scanned<'a> {
    /// Whether any of `spellings` was given.
    pub fn has(&self, spellings: &[&str]) -> bool {
        self.options
            .iter()
            .any(|f| spellings.iter().any(|s| f.is(s)))
    }

    /// The values given to any of `spellings`, in order.
    pub fn values<'s>(&'s self, spellings: &'s [&str]) -> impl Iterator<Item = Value<'a>> + 's {
        self.options
            .iter()
            .filter(|f| spellings.iter().any(|s| f.is(s)))
            .filter_map(|f| f.value)
    }
}

/// What a table said about one option.
enum Lookup {
    Read(&'static str, Arg),
    /// The entry, what it does, and whether the spelling met takes an
    /// argument (to skip it when reading on).
    Danger(&'static str, &'static str, Arg),
    /// Several read-only options start with this prefix.
    Ambiguous(Vec<&'static str>),
    Unknown,
}

fn entries(spec: &Spec) -> impl Iterator<Item = &'static str> + '_ {
    spec.read.iter().flat_map(|table| table.iter().copied())
}

/// The entries that may name `needle` (a cheap substring test before the
/// aliases are parsed), read-only ones then dangerous ones.
fn candidates<'s>(
    spec: &'s Spec,
    needle: &'s str,
) -> (
    impl Iterator<Item = &'static str> + 's,
    impl Iterator<Item = (&'static str, &'static str)> + 's,
) {
    (
        entries(spec).filter(move |e| e.contains(needle)),
        spec.danger
            .iter()
            .copied()
            .filter(move |(e, _)| e.contains(needle)),
    )
}

/// Looks a long option (without `--` and `=value`) up, abbreviations
/// included (see the [module docs](self)).
fn lookup_long(spec: &Spec, name: &str) -> Lookup {
    let long = |entry: &'static str| aliases(entry).filter(|a| a.form == Form::Long);
    let (read, danger) = candidates(spec, name);
    let read: Vec<&'static str> = read.collect();
    let danger: Vec<(&'static str, &'static str)> = danger.collect();
    for &(entry, what) in &danger {
        if let Some(a) = long(entry).find(|a| a.name == name) {
            return Lookup::Danger(entry, what, a.arg);
        }
    }
    for &entry in &read {
        if let Some(a) = long(entry).find(|a| a.name == name) {
            return Lookup::Read(entry, a.arg);
        }
    }
    if name.is_empty() {
        return Lookup::Unknown;
    }
    for &(entry, what) in &danger {
        if let Some(a) = long(entry).find(|a| a.name.starts_with(name)) {
            return Lookup::Danger(entry, what, a.arg);
        }
    }
    let mut found: Vec<(&'static str, Arg)> = Vec::new();
    for &entry in &read {
        if let Some(a) = long(entry).find(|a| a.name.starts_with(name))
            && !found.iter().any(|(e, _)| *e == entry)
        {
            found.push((entry, a.arg));
        }
    }
    match found.as_slice() {
        [] => Lookup::Unknown,
        [(entry, arg)] => Lookup::Read(entry, *arg),
        _ => Lookup::Ambiguous(found.iter().map(|(e, _)| *e).collect()),
    }
}

fn lookup_short(spec: &Spec, c: char) -> Lookup {
    let is = |a: &Alias<'_>| a.form == Form::Short && a.name.starts_with(c);
    let mut buf = [0; 4];
    let (read, danger) = candidates(spec, c.encode_utf8(&mut buf));
    for (entry, what) in danger {
        if let Some(a) = aliases(entry).find(is) {
            return Lookup::Danger(entry, what, a.arg);
        }
    }
    for entry in read {
        if let Some(a) = aliases(entry).find(is) {
            return Lookup::Read(entry, a.arg);
        }
    }
    Lookup::Unknown
}

fn lookup_word(spec: &Spec, word: &str) -> Option<Lookup> {
    let is = |a: &Alias<'_>| a.form == Form::Word && a.name == word;
    let (read, danger) = candidates(spec, word);
    for (entry, what) in danger {
        if let Some(a) = aliases(entry).find(is) {
            return Some(Lookup::Danger(entry, what, a.arg));
        }
    }
    for entry in read {
        if let Some(a) = aliases(entry).find(is) {
            return Some(Lookup::Read(entry, a.arg));
        }
    }
    None
}

/// The long spelling of an entry, for reasons: `--output` for `-o|--output=`.
fn long_spelling(entry: &str) -> String {
    let first = aliases(entry)
        .find(|a| a.form == Form::Long)
        .or_else(|| aliases(entry).next());
    match first {
        Some(Alias {
            name,
            form: Form::Long,
            ..
        }) => format!("--{name}"),
        Some(Alias { name, .. }) => format!("-{name}"),
        None => entry.to_owned(),
    }
}

/// Whether a word whose value is only known at run time could be an option:
/// it does not start with text that rules a leading `-` out (`src/$f`,
/// `./*`, `~/x` cannot be options; `"$f"`, `*.rs`, `{-x,y}` can).
pub fn may_be_option(word: &Word) -> bool {
    if word.is_literal() {
        return false;
    }
    match word.text().chars().next() {
        None => false,
        Some(c) => !(c.is_alphanumeric() || "/._~,:=%^".contains(c)),
    }
}

/// Reads `args` against `spec` (see the [module docs](self)).
///
/// `program` names the command in reasons (`sort`, `git log`).
///
/// # Errors
///
/// The judgement when the arguments are not all read-only: `dangerous` for
/// an option in the danger table, `dev` for one toolgate does not know.
pub fn scan<'a>(program: &str, spec: &Spec, args: &'a [Word]) -> Result<Scanned<'a>, Judgement> {
    let mut reader = Reader::new(program, spec, args);
    reader.run(Mode::Strict);
    match reader.problem {
        Some(problem) => Err(problem),
        None => Ok(reader.out),
    }
}

/// Reads the options of a wrapper (`env`, `timeout`, `flock`): up to the
/// first operand, where the wrapped command starts, without stopping at a
/// problem (the wrapped command must still be found).
///
/// Returns what was read, the index of the first operand (`args.len()` if
/// none), and the first problem found, if any.
pub fn scan_prefix<'a>(
    program: &str,
    spec: &Spec,
    args: &'a [Word],
) -> (Scanned<'a>, usize, Option<Judgement>) {
    let mut reader = Reader::new(program, spec, args);
    let stop = reader.run(Mode::Prefix);
    (reader.out, stop, reader.problem)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Options anywhere before `--` (GNU permutes them); stop at the first
    /// problem.
    Strict,
    /// Options until the first operand; go on after a problem.
    Prefix,
}

struct Reader<'a, 'p> {
    program: &'p str,
    spec: &'p Spec,
    args: &'a [Word],
    out: Scanned<'a>,
    problem: Option<Judgement>,
}

impl<'a, 'p> Reader<'a, 'p> {
    fn new(program: &'p str, spec: &'p Spec, args: &'a [Word]) -> Self {
        Self {
            program,
            spec,
            args,
            out: Scanned::default(),
            problem: None,
        }
    }

    /// Records a problem; in strict mode, the first one ends the reading.
    fn problem(&mut self, j: Judgement, mode: Mode) -> bool {
        let worse = self.problem.as_ref().is_none_or(|p| j.class > p.class);
        if worse {
            self.problem = Some(j);
        }
        mode == Mode::Strict
    }

    /// The value of an option taking the next word.
    fn next_value(&self, i: &mut usize) -> Option<Value<'a>> {
        let value = self.args.get(*i).map(value_of);
        *i += 1;
        value
    }

    /// Reads the arguments; returns the index where reading stopped.
    fn run(&mut self, mode: Mode) -> usize {
        let program = self.program;
        let spec = self.spec;
        let mut i = 0;
        let mut dashes = false;
        while let Some(word) = self.args.get(i) {
            let text = word.text();
            if dashes || text == "-" || !text.starts_with('-') {
                if mode == Mode::Prefix {
                    return i;
                }
                i += 1;
                if !dashes && may_be_option(word) && !spec.complete {
                    let j = dev(format!(
                        "`{program}` is given `{}`, which may turn into an option at run time",
                        short(word.raw())
                    ));
                    if self.problem(j, mode) {
                        return i;
                    }
                }
                self.out.operands.push(word);
                continue;
            }
            i += 1;
            if text == "--" {
                if mode == Mode::Prefix {
                    return i;
                }
                dashes = true;
                continue;
            }
            let literal = word.is_literal();
            if let Some(long) = text.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (long, None),
                };
                let j = match lookup_long(spec, name) {
                    Lookup::Danger(entry, what, arg) => {
                        if arg == Arg::Required && attached.is_none() {
                            i += 1;
                        }
                        dangerous(format!("`{program} {}` {what}", long_spelling(entry)))
                    }
                    Lookup::Unknown => unknown(program, name_of(text)),
                    Lookup::Ambiguous(entries) => {
                        let all: Vec<String> = entries.iter().map(|e| long_spelling(e)).collect();
                        dev(format!(
                            "`{program} --{name}` could be any of `{}`",
                            all.join("`, `")
                        ))
                    }
                    Lookup::Read(entry, arg) => {
                        let value = match (arg, attached) {
                            (Arg::No, Some(_)) => {
                                let j = dev(format!(
                                    "`{program} {}` is given a value it does not take",
                                    name_of(text)
                                ));
                                if self.problem(j, mode) {
                                    return i;
                                }
                                None
                            }
                            (_, Some(v)) => Some(Value { text: v, literal }),
                            (Arg::Required, None) => self.next_value(&mut i),
                            (Arg::No | Arg::Optional, None) => None,
                        };
                        self.out.options.push(Found { entry, value });
                        continue;
                    }
                };
                if self.problem(j, mode) {
                    return i;
                }
                continue;
            }
            let cluster = text.get(1..).unwrap_or_default();
            if let Some(lookup) = lookup_word(spec, cluster) {
                match lookup {
                    Lookup::Danger(entry, what, arg) => {
                        if arg == Arg::Required {
                            i += 1;
                        }
                        let j = dangerous(format!("`{program} {}` {what}", entry_word(entry)));
                        if self.problem(j, mode) {
                            return i;
                        }
                    }
                    Lookup::Read(entry, arg) => {
                        let value = if arg == Arg::Required {
                            self.next_value(&mut i)
                        } else {
                            None
                        };
                        self.out.options.push(Found { entry, value });
                    }
                    Lookup::Ambiguous(_) | Lookup::Unknown => {}
                }
                continue;
            }
            if spec.numeric && !cluster.is_empty() && cluster.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            for (pos, c) in cluster.char_indices() {
                let rest = cluster.get(pos + c.len_utf8()..).unwrap_or_default();
                match lookup_short(spec, c) {
                    Lookup::Danger(_, what, arg) => {
                        if arg == Arg::Required && rest.is_empty() {
                            i += 1;
                        }
                        let j = dangerous(format!("`{program} -{c}` {what}"));
                        if self.problem(j, mode) {
                            return i;
                        }
                        // The rest of the cluster may be this option's value.
                        break;
                    }
                    Lookup::Unknown | Lookup::Ambiguous(_) => {
                        if self.problem(unknown(program, &format!("-{c}")), mode) {
                            return i;
                        }
                        break;
                    }
                    Lookup::Read(entry, Arg::No) => {
                        self.out.options.push(Found { entry, value: None });
                    }
                    Lookup::Read(entry, Arg::Optional) => {
                        let value = (!rest.is_empty()).then_some(Value {
                            text: rest,
                            literal,
                        });
                        self.out.options.push(Found { entry, value });
                        break;
                    }
                    Lookup::Read(entry, Arg::Required) => {
                        let value = if rest.is_empty() {
                            self.next_value(&mut i)
                        } else {
                            Some(Value {
                                text: rest,
                                literal,
                            })
                        };
                        self.out.options.push(Found { entry, value });
                        break;
                    }
                }
            }
        }
        i.min(self.args.len())
    }
}

fn value_of(word: &Word) -> Value<'_> {
    Value {
        text: word.text(),
        literal: word.is_literal(),
    }
}

/// The option part of a word: `--color` for `--color=always`.
fn name_of(text: &str) -> &str {
    text.split_once('=').map_or(text, |(n, _)| n)
}

fn entry_word(entry: &str) -> String {
    aliases(entry)
        .next()
        .map_or_else(|| entry.to_owned(), |a| format!("-{}", a.name))
}

fn unknown(program: &str, option: &str) -> Judgement {
    dev(format!(
        "`{program} {}` is not an option toolgate knows to be read-only",
        short(option)
    ))
}

/// Checks a table for mistakes a reader would not see: unparseable
/// spellings, aliases disagreeing on their argument, an option listed twice.
/// Used by the invariant tests over every table.
pub fn validate(spec: &Spec) -> Result<(), String> {
    let mut seen: Vec<(String, Form)> = Vec::new();
    let all = entries(spec).chain(spec.danger.iter().map(|(e, _)| *e));
    for entry in all {
        // A short flag may stand for a long option with an optional
        // argument (`-C|--demangle[=]`), but an argument is required by all
        // or by none.
        let required: Vec<bool> = aliases(entry)
            .filter(|a| a.form != Form::Word)
            .map(|a| a.arg == Arg::Required)
            .collect();
        if required.iter().any(|r| *r) && !required.iter().all(|r| *r) {
            return Err(format!("`{entry}`: aliases disagree on the argument"));
        }
        for a in aliases(entry) {
            if a.name.is_empty() || a.name.contains(['=', '[', ']', ' ']) {
                return Err(format!("`{entry}`: bad spelling"));
            }
            let key = (a.name.to_owned(), a.form);
            if seen.contains(&key) {
                return Err(format!("`{entry}`: `{}` is listed twice", a.name));
            }
            seen.push(key);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::CommandClass;

    const SORTISH: Spec = Spec {
        read: &[&[
            "-r|--reverse",
            "--revision=",
            "-k=|--key=",
            "-t=|--field-separator=",
            "--color[=]",
            "--compact",
            "-i[=]|--in-memory[=]",
        ]],
        danger: &[
            ("-o=|--output=", "writes its output to a file"),
            ("--compress-program=", "runs a program"),
        ],
        numeric: true,
        complete: false,
    };

    fn class(args: &str) -> (CommandClass, String) {
        let words: Vec<Word> = args.split_whitespace().map(Word::literal).collect();
        match scan("sortish", &SORTISH, &words) {
            Ok(_) => (CommandClass::Safe, String::new()),
            Err(j) => (j.class, j.reason),
        }
    }

    #[test]
    fn options_are_judged_against_the_tables() {
        use CommandClass::{Dangerous as X, Dev as D, Safe as S};
        let cases: &[(&str, CommandClass)] = &[
            ("-r f", S),
            ("--reverse f", S),
            ("-rk2 f", S),
            ("-r -k 2 f", S),
            ("-k2,2n -t: f", S),
            ("--key=2 f", S),
            ("--key 2 f", S),
            ("-5 f", S),
            ("-- -o f", S),
            // Abbreviations.
            ("--reve f", S),
            ("--col=always f", S),
            ("--rev f", D),
            ("--re f", D),
            ("--co f", X),
            ("--comp f", X),
            ("--c f", X),
            ("--compr=gzip f", X),
            ("--out=x f", X),
            ("--o x", X),
            // Dangerous options in every spelling.
            ("-o out f", X),
            ("-oout f", X),
            ("-ro out f", X),
            ("--output=x f", X),
            ("--compress-program gzip", X),
            // Unknown options, values given to flags, unknown letters.
            ("--frobnicate f", D),
            ("-rz f", D),
            ("--reverse=yes f", D),
            ("-x", D),
            // An optional argument is attached only.
            ("-ifoo f", S),
            ("--in-memory=x f", S),
        ];
        for (args, want) in cases {
            assert_eq!(class(args).0, *want, "{args}: {}", class(args).1);
        }
    }

    #[test]
    fn reasons_name_the_option_in_full() {
        assert_eq!(
            class("--compr=gzip").1,
            "`sortish --compress-program` runs a program"
        );
        assert_eq!(class("-ro x").1, "`sortish -o` writes its output to a file");
        assert_eq!(
            class("--rev").1,
            "`sortish --rev` could be any of `--reverse`, `--revision`"
        );
        assert_eq!(
            class("--frob=1").1,
            "`sortish --frob` is not an option toolgate knows to be read-only"
        );
    }

    #[test]
    fn values_and_operands_are_returned() {
        let words: Vec<Word> = "-k 2 -t: a -r -- -b"
            .split_whitespace()
            .map(Word::literal)
            .collect();
        let scanned = scan("sortish", &SORTISH, &words).unwrap();
        let operands: Vec<&str> = scanned.operands.iter().map(|w| w.text()).collect();
        assert_eq!(operands, ["a", "-b"]);
        assert!(scanned.has(&["--reverse"]));
        assert!(scanned.has(&["-t"]));
        let keys: Vec<&str> = scanned.values(&["--key"]).map(|v| v.text).collect();
        assert_eq!(keys, ["2"]);
        let seps: Vec<&str> = scanned.values(&["-t"]).map(|v| v.text).collect();
        assert_eq!(seps, [":"]);
    }

    #[test]
    fn the_test_table_is_valid() {
        assert_eq!(validate(&SORTISH), Ok(()));
    }
}
