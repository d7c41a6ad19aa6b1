//! A class with the reason for it: what each rule of the classifier, and the
//! wrappers and builtins seen while parsing, say about one command.

use toolgate_core::CommandClass;

/// A class and the reason for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The class.
    pub class: CommandClass,
    /// Why, in words a person reads in a confirmation prompt.
    pub reason: String,
}

/// A `safe` judgement.
pub fn safe(reason: impl Into<String>) -> Judgement {
    Judgement {
        class: CommandClass::Safe,
        reason: reason.into(),
    }
}

/// A `dev` judgement.
pub fn dev(reason: impl Into<String>) -> Judgement {
    Judgement {
        class: CommandClass::Dev,
        reason: reason.into(),
    }
}

/// A `dangerous` judgement.
pub fn dangerous(reason: impl Into<String>) -> Judgement {
    Judgement {
        class: CommandClass::Dangerous,
        reason: reason.into(),
    }
}

/// A word for a reason: on one line, and not too long to read.
pub fn short(raw: &str) -> String {
    const MAX: usize = 48;
    let one_line = raw.trim_end().replace('\n', "\u{23ce}");
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let mut out: String = one_line.chars().take(MAX).collect();
    out.push('\u{2026}');
    out
}
