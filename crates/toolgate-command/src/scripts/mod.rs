//! Reading the small programs given to `sed` and `awk`.
//!
//! `sed -n '1,20p' f` and `awk '{print $1}' f` are among the commands agents
//! run most, and both only read. But both languages can also write files
//! (`sed 's/a/b/w out'`, `awk '{print > "out"}'`) and run commands
//! (`sed 's/x/id/e'`, `awk '{system("id")}'`). Each language is read with a
//! lexer of its own that knows where its strings, regular expressions and
//! comments start and end, so that a feature cannot hide behind text the
//! lexer took for data; anything it cannot read with certainty counts as
//! found, so a miss makes a command `dangerous`, never `safe`.

use toolgate_core::CommandClass;

use toolgate_shell::judgement::Judgement;

pub(crate) mod awk;
pub(crate) mod sed;

/// What a script does beyond reading and printing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The least class of a command running the script.
    pub(crate) class: CommandClass,
    /// What the script does, said after "the `awk` program" or "the `sed`
    /// script": "runs commands with `system()`".
    pub(crate) what: &'static str,
}

impl Finding {
    fn dangerous(what: &'static str) -> Self {
        Self {
            class: CommandClass::Dangerous,
            what,
        }
    }

    fn dev(what: &'static str) -> Self {
        Self {
            class: CommandClass::Dev,
            what,
        }
    }

    /// The judgement on a command running the script, which `subject`
    /// names ("the `sed` script").
    pub(crate) fn judgement(self, subject: &str) -> Judgement {
        Judgement {
            class: self.class,
            reason: format!("{subject} {}", self.what),
        }
    }
}
