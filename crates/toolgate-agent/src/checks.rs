//! Look before answering, check before finishing: what a task names that
//! a run must have read or run before it ends, and the commands it says
//! must pass.
//!
//! # Rules
//!
//! The task is read as sentences (split at `.`, `!`, `?` or `;` followed
//! by a space or the end, and at line ends; never inside backticks).
//!
//! 1. A **file** is a span in backticks (not starting `./`), or a bare word (surrounding
//!    quotes, brackets and punctuation trimmed; no `://`) holding a `.` or
//!    a `/`, that names a regular file inside the workspace. Nothing is a
//!    file without a workspace.
//! 2. A **command** is a span in backticks that is not a file, has no line
//!    end, and whose first word is a program: a name found in a `PATH`
//!    directory, or a path (with a `/`) to a file in the workspace
//!    (`./run.sh`). `PORT`, `def load` and `calc.py` are not commands.
//!    A command in a sentence that says not to run it (`don't`, `do not`,
//!    `never`, `without`) is left out.
//! 3. A **test** counts when it is named as a file or by the command that
//!    runs it; a test's bare name (`test_add`) is not extracted.
//! 4. A command **must pass** when its sentence has `pass`, `passes`,
//!    `passing`, `succeed`, `succeeds`, `exit 0`, `exits 0`, `exit code 0`
//!    or `prints`. After `prints`, the next span in backticks or quotes, or
//!    else the next word, is text its output must hold (`prints ok`).
//! 5. A file has been looked at when a call that ran declared a read of it
//!    or a command that names it, or changed it and succeeded (an edit
//!    whose old text matched; the model acted on the file rather than
//!    answering about it); a command has been run when a call that
//!    ran declared a command holding it (spaces collapsed). A call that
//!    declares nothing it does (delegation, opaque tools) counts when its
//!    arguments name the file or hold the command: the agent it handed
//!    the work to looked.
//! 6. The task **asks for a change** when one of its sentences is not a
//!    question (does not end in `?`) and has a verb of `CHANGE_VERBS`
//!    where a clause starts: its first word, or the word after `,`, `;`,
//!    `:`, `and`, `then` or `please`. `In src/a.py, change X` and
//!    `Find the TODOs and write them to TODO.md` ask for one; `What port
//!    does a.py set?` and `Explain how to add a user` do not. Such a run
//!    does not end, in the small profile, before a call that ran has
//!    changed something, unless it names a command that must pass (which
//!    then decides).
//! 7. A file is **kept** (not to be changed by the run) when the task
//!    names it after a negation (`without`, `not`, `don't`, `never`,
//!    `no`) followed within two words by a change word of `KEEP_VERBS`
//!    (`without changing src/users.py`, `do not edit a.py or b.py`), in
//!    the same sentence; or names it between `leave` and `unchanged`,
//!    `untouched`, `alone` or `as is`. A call that declares a write to a
//!    kept file does not run, in any profile; the model is told why.
//! 8. The task **only adds** when it asks for a change (rule 6) and every
//!    change verb it has is `add`, `append` or `insert` (`Add a function
//!    multiply to src/calc.py`). In the small profile, a whole-file write
//!    of an existing file that drops a line the file holds (compared
//!    without the white space at its ends; blank lines aside) does not
//!    run for such a task: the model is shown the lines it dropped.
//! 9. A file **to create** is a word of a sentence that asks for a change
//!    (rule 6), in backticks or bare, that is a relative path ending in a
//!    file extension of `FILE_EXTENSIONS` (`TODO.md`, `src/new.py`; not
//!    `example.com` or `4.3.0`), that is no file of the workspace yet,
//!    whose directory is one, and that follows `to`, `into`, `create`,
//!    `file`, `named`, `called` or `as` within three words (`write them
//!    to a new file TODO.md`, `create hello.py`, `rename a.py to b.py`). The
//!    run does not end before each exists.
//! 10. A **rename** is a sentence whose change verb is `rename`, naming
//!     `OLD` and then `NEW` after `to`, both identifiers (letters, digits,
//!     `_`; in backticks or bare; `Rename the function get_user to
//!     fetch_user`), with the scope the sentence names after `in`, `under`,
//!     `across` or `throughout` when that is a directory or file of the
//!     workspace, else the whole workspace. The run does not end while
//!     `OLD` is still a whole word in a text file of the scope (hidden files
//!     and directories, `node_modules`, `target`, caches and files over
//!     1 MiB aside); the model is told where.
//!
//! The runner's rules say what happens when they are missing or failing.

use std::path::Path;

use toolgate_core::{Effect, Effects};

/// What a task names (see the module's rules).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskChecks {
    /// Files the run must look at before it answers (rule 1).
    pub files: Vec<String>,
    /// Commands the run must run before it answers (rule 2).
    pub commands: Vec<String>,
    /// Commands that must pass before the run ends (rule 4).
    pub must_pass: Vec<MustPass>,
    /// Whether the task asks for a change (rule 6).
    pub change: bool,
    /// Files the task says not to change (rule 7).
    pub keep: Vec<String>,
    /// Whether every change the task asks for adds (rule 8).
    pub adds_only: bool,
    /// Files the task asks to create (rule 9).
    pub creates: Vec<String>,
    /// Names the task renames (rule 10).
    pub renames: Vec<Rename>,
}

/// A name a task renames (rule 10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// The name to replace.
    pub from: String,
    /// The name to put in its place.
    pub to: String,
    /// Where, relative to the workspace: empty for all of it.
    pub scope: String,
}

/// A file that still holds a renamed name (rule 10): its path in the
/// workspace, and the numbers of the lines that hold it.
pub type Leftover = (String, Vec<usize>);

/// The most files [`TaskChecks::leftovers`] reads.
const MAX_SCANNED: usize = 2_000;

/// Whether `word` is an identifier (rule 10).
fn is_identifier(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && word.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The rename a sentence asks for (rule 10), under `root`.
fn rename(pieces: &[Piece], root: &Path) -> Option<Rename> {
    let words = tokens(pieces);
    let at = words.iter().position(|t| t.word == "rename")?;
    let to = at + words[at..].iter().position(|t| t.word == "to")?;
    let from = words[at + 1..to]
        .iter()
        .rev()
        .map(|t| &t.name)
        .find(|n| is_identifier(n))?;
    let new = words
        .get(to + 1)
        .map(|t| &t.name)
        .filter(|n| is_identifier(n))?;
    if from == new {
        return None;
    }
    let scope = words
        .windows(2)
        .skip(to + 1)
        .find(|w| matches!(w[0].word.as_str(), "in" | "under" | "across" | "throughout"))
        .map(|w| w[1].name.trim_end_matches('/').to_owned())
        .filter(|d| !d.is_empty() && !d.contains("..") && root.join(d).exists())
        .unwrap_or_default();
    Some(Rename {
        from: from.clone(),
        to: new.clone(),
        scope,
    })
}

/// Whether `name` names a directory or file the scan skips (rule 10).
fn skipped(name: &str) -> bool {
    name.starts_with('.')
        || matches!(name, "node_modules" | "target" | "__pycache__")
        || name.ends_with("_cache")
}

/// Whether `text` holds `word` as a whole word.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// The file extensions a file to create ends in (rule 9): source, text,
/// data and configuration files, no top-level domain.
const FILE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cfg", "conf", "cpp", "cs", "css", "csv", "env", "go", "h", "hpp", "html", "ini",
    "java", "js", "json", "jsx", "kt", "lock", "log", "lua", "md", "php", "pl", "py", "rb", "rs",
    "rst", "sh", "sql", "swift", "toml", "ts", "tsx", "txt", "xml", "yaml", "yml",
];

/// The words before a file to create (rule 9).
const CREATE_CUES: &[&str] = &["to", "into", "create", "file", "named", "called", "as"];

/// The files to create a sentence that asks for a change names (rule 9),
/// under `root`.
fn to_create(pieces: &[Piece], root: &Path) -> Vec<String> {
    let words = tokens(pieces);
    let mut out = Vec::new();
    for (i, t) in words.iter().enumerate() {
        let cued = words[i.saturating_sub(3)..i]
            .iter()
            .any(|w| CREATE_CUES.contains(&w.word.as_str()));
        if cued && is_new_file(root, &t.name) && !out.contains(&t.name) {
            out.push(t.name.clone());
        }
    }
    out
}

/// Whether `name` is a file the workspace at `root` could get (rule 9).
fn is_new_file(root: &Path, name: &str) -> bool {
    let path = Path::new(name);
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    !stem.is_empty()
        && FILE_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
        && !path.is_absolute()
        && !name.contains("..")
        && !name.contains("://")
        && !root.join(name).exists()
        && path
            .parent()
            .is_some_and(|dir| dir.as_os_str().is_empty() || root.join(dir).is_dir())
}

/// The change verbs that only add (rule 8).
const ADD_VERBS: &[&str] = &["add", "append", "insert"];

/// The change words that, after a negation, keep the files named next
/// (rule 7).
const KEEP_VERBS: &[&str] = &[
    "alter",
    "altering",
    "change",
    "changing",
    "edit",
    "editing",
    "modify",
    "modifying",
    "overwrite",
    "overwriting",
    "rewrite",
    "rewriting",
    "touch",
    "touching",
    "update",
    "updating",
    "write",
    "writing",
];

/// The words that end `leave FILE …` (rule 7).
const LEFT_AS: &[&str] = &["unchanged", "untouched", "alone", "as"];

/// One word of a sentence, for rules 7, 9 and 10.
struct Token {
    /// The word, lower-cased, punctuation trimmed (empty for a span in
    /// backticks).
    word: String,
    /// The word as written, without the punctuation around it that no
    /// path or name holds (a span in backticks: its text).
    name: String,
    /// Whether a clause ends after it (`,`, `;`, `:`).
    ends_clause: bool,
}

impl Token {
    /// The workspace file it names, if it names one (rule 1).
    fn file(&self, file: &dyn Fn(&str) -> bool) -> Option<&str> {
        let name = self.name.as_str();
        let named = if self.word.is_empty() {
            !name.starts_with("./")
        } else {
            (name.contains('.') || name.contains('/')) && !name.contains("://")
        };
        (named && file(name)).then_some(name)
    }
}

/// A sentence's words.
fn tokens(pieces: &[Piece]) -> Vec<Token> {
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Code(code) => out.push(Token {
                word: String::new(),
                name: code.clone(),
                ends_clause: false,
            }),
            Piece::Text(text) => {
                for raw in text.split_whitespace() {
                    let name = raw
                        .trim_matches(|c: char| {
                            !(c.is_alphanumeric() || matches!(c, '_' | '/' | '-' | '.'))
                        })
                        .trim_end_matches('.');
                    out.push(Token {
                        word: raw
                            .trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''))
                            .to_lowercase(),
                        name: name.to_owned(),
                        ends_clause: raw.ends_with([',', ';', ':']),
                    });
                }
            }
        }
    }
    out
}

/// The files a sentence says to keep (rule 7). A clause that follows
/// (after `,`, `;`, `:`, `and`, `but`, `then`) keeps nothing more: a
/// file wrongly kept would stop the change the task asks for.
fn kept(pieces: &[Piece], file: &dyn Fn(&str) -> bool) -> Vec<String> {
    let tokens = tokens(pieces);
    let mut out = Vec::new();
    let negation = |w: &str| matches!(w, "without" | "not" | "don't" | "dont" | "never" | "no");
    let mut keeping = false;
    for (i, t) in tokens.iter().enumerate() {
        if matches!(t.word.as_str(), "and" | "but" | "then") {
            keeping = false;
        }
        if negation(&t.word)
            && tokens[i + 1..]
                .iter()
                .take(2)
                .any(|n| KEEP_VERBS.contains(&n.word.as_str()))
        {
            keeping = true;
        }
        if t.word == "leave" {
            let rest = &tokens[i + 1..];
            if let Some(end) = rest.iter().position(|n| LEFT_AS.contains(&n.word.as_str())) {
                out.extend(
                    rest[..end]
                        .iter()
                        .filter_map(|n| n.file(file).map(str::to_owned)),
                );
            }
        }
        if keeping && let Some(name) = t.file(file) {
            out.push(name.to_owned());
        }
        if t.ends_clause {
            keeping = false;
        }
    }
    out
}

/// The verbs that ask for a change where a clause starts (rule 6).
pub(crate) const CHANGE_VERBS: &[&str] = &[
    "add",
    "append",
    "change",
    "create",
    "delete",
    "edit",
    "fix",
    "implement",
    "insert",
    "make",
    "modify",
    "move",
    "refactor",
    "remove",
    "rename",
    "replace",
    "rewrite",
    "save",
    "set",
    "update",
    "write",
];

/// The change verbs of a sentence where a clause starts (rule 6): none
/// when it asks for no change.
fn change_verbs(pieces: &[Piece]) -> Vec<&'static str> {
    let text: String = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.as_str(),
            Piece::Code(_) => " code ",
        })
        .collect();
    let mut verbs = Vec::new();
    if text.trim_end().ends_with('?') {
        return verbs;
    }
    let mut starts = true;
    for token in text.split_whitespace() {
        let word = token
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if starts && let Some(verb) = CHANGE_VERBS.iter().find(|v| **v == word) {
            verbs.push(*verb);
        }
        starts =
            token.ends_with([',', ';', ':']) || matches!(word.as_str(), "and" | "then" | "please");
    }
    verbs
}

/// A command the task says must pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MustPass {
    /// The command line.
    pub command: String,
    /// Text its output must hold, when the task says what it prints.
    pub prints: Option<String>,
}

/// A piece of a sentence: text, or a span in backticks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Code(String),
}

/// The task's sentences, as pieces.
fn sentences(task: &str) -> Vec<Vec<Piece>> {
    let mut out = Vec::new();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = task.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' {
            let mut code = String::new();
            let mut closed = false;
            for d in chars.by_ref() {
                if d == '`' {
                    closed = true;
                    break;
                }
                code.push(d);
            }
            if !text.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
            }
            if closed && !code.trim().is_empty() {
                pieces.push(Piece::Code(code.trim().to_owned()));
            } else if !closed {
                text.push_str(&code);
            }
            continue;
        }
        let ends = c == '\n'
            || (matches!(c, '.' | '!' | '?' | ';')
                && chars.peek().is_none_or(|n| n.is_whitespace()));
        text.push(c);
        if ends {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
            out.push(std::mem::take(&mut pieces));
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    if !pieces.is_empty() {
        out.push(pieces);
    }
    out
}

/// Whether `name` is a regular file inside `root`.
fn is_workspace_file(root: &Path, name: &str) -> bool {
    let name = name.strip_prefix("./").unwrap_or(name);
    if name.is_empty() || name.contains("..") || Path::new(name).is_absolute() {
        return false;
    }
    root.join(name).is_file()
}

/// Whether `program` is found in a `PATH` directory.
pub fn on_path(program: &str) -> bool {
    if program.is_empty() || program.contains('/') {
        return false;
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The words of a sentence's text, lower-cased.
fn words(pieces: &[Piece]) -> Vec<String> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(t),
            Piece::Code(_) => None,
        })
        .flat_map(|t| t.split_whitespace())
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect()
}

/// What the output must hold after `prints` in `pieces` (rule 4).
fn printed(pieces: &[Piece]) -> Option<String> {
    let mut after = false;
    for piece in pieces {
        match piece {
            Piece::Code(code) if after => return Some(code.clone()),
            Piece::Code(_) => {}
            Piece::Text(text) => {
                let mut rest = text.as_str();
                if !after {
                    let lower = text.to_lowercase();
                    let Some(at) = lower.find("prints ") else {
                        continue;
                    };
                    rest = &text[at + "prints ".len()..];
                    after = true;
                }
                let rest = rest.trim_start();
                if rest.is_empty() {
                    continue;
                }
                for quote in ['"', '\''] {
                    if let Some(body) = rest.strip_prefix(quote)
                        && let Some(end) = body.find(quote)
                    {
                        return Some(body[..end].to_owned());
                    }
                }
                let word = rest
                    .split_whitespace()
                    .next()?
                    .trim_matches(|c: char| !c.is_alphanumeric());
                return (!word.is_empty()).then(|| word.to_owned());
            }
        }
    }
    None
}

impl TaskChecks {
    /// What `task` names, with files looked up under `workspace` and
    /// programs by `is_program` (in a run: [`on_path`]).
    pub fn from_task(
        task: &str,
        workspace: Option<&Path>,
        is_program: &dyn Fn(&str) -> bool,
    ) -> Self {
        let mut checks = Self::default();
        let file = |name: &str| workspace.is_some_and(|root| is_workspace_file(root, name));
        let mut verbs = Vec::new();
        for sentence in sentences(task) {
            let asked = change_verbs(&sentence);
            if let (false, Some(root)) = (asked.is_empty(), workspace) {
                for name in to_create(&sentence, root) {
                    push(&mut checks.creates, &name);
                }
            }
            verbs.extend(asked);
            for name in kept(&sentence, &file) {
                push(&mut checks.keep, &name);
            }
            let words = words(&sentence);
            let has = |w: &[&str]| words.iter().any(|x| w.contains(&x.as_str()));
            let negated = has(&["don't", "dont", "not", "never", "without"]);
            let zero = words
                .windows(2)
                .any(|w| matches!(w[0].as_str(), "exit" | "exits") && w[1] == "0")
                || words
                    .windows(3)
                    .any(|w| w[0] == "exit" && w[1] == "code" && w[2] == "0");
            let must = zero || has(&["pass", "passes", "passing", "succeed", "succeeds", "prints"]);
            for piece in &sentence {
                match piece {
                    Piece::Code(code) if file(code) && !code.starts_with("./") => {
                        push(&mut checks.files, code);
                    }
                    Piece::Code(code) if !code.contains('\n') && !negated => {
                        let first = code.split_whitespace().next().unwrap_or_default();
                        let program = if first.contains('/') {
                            file(first)
                        } else {
                            is_program(first)
                        };
                        if !program {
                            continue;
                        }
                        if !checks.commands.contains(code) {
                            checks.commands.push(code.clone());
                        }
                        if must && !checks.must_pass.iter().any(|m| m.command == *code) {
                            checks.must_pass.push(MustPass {
                                command: code.clone(),
                                prints: printed(&sentence),
                            });
                        }
                    }
                    Piece::Code(_) => {}
                    Piece::Text(text) => {
                        for word in text.split_whitespace() {
                            let word = word.trim_matches(|c: char| {
                                !(c.is_alphanumeric() || matches!(c, '_' | '/' | '-'))
                            });
                            if (word.contains('.') || word.contains('/'))
                                && !word.contains("://")
                                && file(word)
                            {
                                push(&mut checks.files, word);
                            }
                        }
                    }
                }
            }
        }
        checks.change = !verbs.is_empty();
        if let Some(root) = workspace {
            for sentence in sentences(task) {
                if change_verbs(&sentence).contains(&"rename")
                    && let Some(r) = rename(&sentence, root)
                    && !checks.renames.contains(&r)
                {
                    checks.renames.push(r);
                }
            }
        }
        checks.adds_only = checks.change && verbs.iter().all(|v| ADD_VERBS.contains(v));
        checks
    }

    /// The file of `path` (workspace-relative) the task says to keep
    /// (rule 7), if it is one.
    pub fn kept(&self, path: &str) -> Option<&str> {
        let path = path.strip_prefix("./").unwrap_or(path);
        self.keep.iter().map(String::as_str).find(|k| *k == path)
    }

    /// Whether the task names nothing to check and asks for no change.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.commands.is_empty()
            && !self.change
            && self.creates.is_empty()
            && self.renames.is_empty()
    }

    /// Where the names the task renames (rule 10) are still found under
    /// `root`: per rename, the files (workspace-relative) and the numbers
    /// of their lines that hold the old name.
    pub fn leftovers(&self, root: &Path) -> Vec<(&Rename, Vec<Leftover>)> {
        self.renames
            .iter()
            .filter_map(|r| {
                let mut found = Vec::new();
                let mut scanned = 0;
                let mut stack = vec![root.join(&r.scope)];
                while let Some(path) = stack.pop() {
                    if scanned >= MAX_SCANNED {
                        break;
                    }
                    if path.is_dir() {
                        let Ok(entries) = std::fs::read_dir(&path) else {
                            continue;
                        };
                        let mut children: Vec<_> = entries
                            .filter_map(Result::ok)
                            .filter(|e| !skipped(&e.file_name().to_string_lossy()))
                            .map(|e| e.path())
                            .collect();
                        children.sort();
                        children.reverse();
                        stack.extend(children);
                        continue;
                    }
                    scanned += 1;
                    let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= 1 << 20);
                    let Some(text) = small.then(|| std::fs::read_to_string(&path).ok()).flatten()
                    else {
                        continue;
                    };
                    let lines: Vec<usize> = text
                        .lines()
                        .enumerate()
                        .filter(|(_, l)| has_word(l, &r.from))
                        .map(|(n, _)| n + 1)
                        .collect();
                    if !lines.is_empty() {
                        let shown = path.strip_prefix(root).unwrap_or(&path);
                        found.push((shown.to_string_lossy().into_owned(), lines));
                    }
                }
                (!found.is_empty()).then_some((r, found))
            })
            .collect()
    }

    /// The files to create (rule 9) that are not under `root` yet.
    pub fn not_created(&self, root: &Path) -> Vec<&str> {
        self.creates
            .iter()
            .filter(|f| !root.join(f).is_file())
            .map(String::as_str)
            .collect()
    }

    /// What has not been looked at or run yet (rule 5), given the declared
    /// effects, the arguments (JSON text) and the success of the calls that
    /// ran: `(files, commands)`.
    pub fn missing(&self, ran: &[(&Effects, &str, bool)]) -> (Vec<&str>, Vec<&str>) {
        let effects = || ran.iter().flat_map(|(e, _, _)| e.list());
        let changed = || {
            ran.iter()
                .filter(|(_, _, ok)| *ok)
                .flat_map(|(e, _, _)| e.changed_paths())
        };
        // What calls that declare nothing were asked to do.
        let handed = || {
            ran.iter()
                .filter(|(e, _, _)| e.list().is_empty())
                .map(|(_, arguments, _)| collapse(arguments))
        };
        let commands = || {
            effects().filter_map(|e| match e {
                Effect::Command { command, .. } => Some(collapse(command)),
                _ => None,
            })
        };
        let files = self
            .files
            .iter()
            .filter(|f| {
                let f = f.strip_prefix("./").unwrap_or(f);
                let read = effects().any(|e| {
                    matches!(e, Effect::Read { path, .. }
                        if path.strip_prefix("./").unwrap_or(path) == f)
                });
                let changed = changed().any(|p| p.strip_prefix("./").unwrap_or(p) == f);
                !read && !changed && !commands().chain(handed()).any(|c| c.contains(f))
            })
            .map(String::as_str)
            .collect();
        let run = self
            .commands
            .iter()
            .filter(|c| {
                let c = collapse(c);
                !commands().chain(handed()).any(|ran| ran.contains(&c))
            })
            .map(String::as_str)
            .collect();
        (files, run)
    }
}

fn push(list: &mut Vec<String>, item: &str) {
    let item = item.strip_prefix("./").unwrap_or(item);
    if !list.iter().any(|i| i == item) {
        list.push(item.to_owned());
    }
}

/// `s` with runs of white space made one space.
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (task, files, commands, must pass as (command, prints))
    type Row = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        &'static [(&'static str, Option<&'static str>)],
    );

    /// A workspace holding `files`, each with the text `x`.
    fn workspace_with(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    fn programs(p: &str) -> bool {
        matches!(p, "python3" | "cargo" | "make" | "grep" | "rm" | "pytest")
    }

    #[test]
    fn task_texts_case_table() {
        let dir = workspace_with(&[
            "version.txt",
            "calc.py",
            "tests/test_calc.py",
            "run.sh",
            "src/app.py",
        ]);
        let cases: &[Row] = &[
            (
                "What version does version.txt hold?",
                &["version.txt"],
                &[],
                &[],
            ),
            ("What is in `calc.py`?", &["calc.py"], &[], &[]),
            (
                "Fix calc.py so that `python3 tests/test_calc.py` prints ok.",
                &["calc.py"],
                &["python3 tests/test_calc.py"],
                &[("python3 tests/test_calc.py", Some("ok"))],
            ),
            (
                "Make `cargo test` pass.",
                &[],
                &["cargo test"],
                &[("cargo test", None)],
            ),
            (
                "Run `make check`. Then tell me what it says.",
                &[],
                &["make check"],
                &[],
            ),
            (
                "Change `PORT` in src/app.py to 9000.",
                &["src/app.py"],
                &[],
                &[],
            ),
            ("Rename `def load` to `def read`.", &[], &[], &[]),
            (
                "Don't run `rm -rf build`; just list the files.",
                &[],
                &[],
                &[],
            ),
            (
                "Run `./run.sh` until it exits 0",
                &[],
                &["./run.sh"],
                &[("./run.sh", None)],
            ),
            (
                "Run `./run.sh --fast`, it must exit 0.",
                &[],
                &["./run.sh --fast"],
                &[("./run.sh --fast", None)],
            ),
            (
                "List the TODOs (`grep -rn TODO .`)",
                &[],
                &["grep -rn TODO ."],
                &[],
            ),
            ("Look at missing.py and docs/.", &[], &[], &[]),
            (
                "See https://example.com/calc.py and `tests/test_calc.py`.",
                &["tests/test_calc.py"],
                &[],
                &[],
            ),
            (
                "`pytest -q` should succeed, and \"python3 calc.py\" prints \"4\".",
                &["calc.py"],
                &["pytest -q"],
                &[("pytest -q", Some("4"))],
            ),
        ];
        for (task, files, commands, must) in cases {
            let got = TaskChecks::from_task(task, Some(dir.path()), &programs);
            assert_eq!(got.files, *files, "{task}");
            assert_eq!(got.commands, *commands, "{task}");
            let must: Vec<MustPass> = must
                .iter()
                .map(|(c, p)| MustPass {
                    command: (*c).to_owned(),
                    prints: p.map(str::to_owned),
                })
                .collect();
            assert_eq!(got.must_pass, must, "{task}");
        }
        // No workspace: no files.
        let got = TaskChecks::from_task("What is in `calc.py`?", None, &programs);
        assert!(got.is_empty());
    }

    #[test]
    fn tasks_that_ask_for_a_change_case_table() {
        // (task, asks for a change)
        let cases: &[(&str, bool)] = &[
            (
                "In src/config.py, change the constant TIMEOUT from 30 to 60.",
                true,
            ),
            ("Fix the bug in `calc.py`.", true),
            (
                "Find every TODO under src/ and write them to TODO.md.",
                true,
            ),
            ("greeting() fails. Make greeting(3) return \"x\".", true),
            ("Please rename get_user to fetch_user.", true),
            ("Add a --verbose flag; then run the tests.", true),
            ("What port does src/config.py set?", false),
            ("What version is declared? Answer with the number.", false),
            ("Explain how to add a user.", false),
            ("How many users does USERS hold?", false),
            ("List the files that set a timeout.", false),
            ("Run `make check`. Then tell me what it says.", false),
        ];
        for (task, change) in cases {
            let got = TaskChecks::from_task(task, None, &programs);
            assert_eq!(got.change, *change, "{task}");
        }
        // A change is something to check even when nothing else is named.
        assert!(!TaskChecks::from_task("Fix the bug.", None, &programs).is_empty());
    }

    /// (task, the rename as (from, to, scope), where the old name is left)
    type RenameRow = (
        &'static str,
        Option<(&'static str, &'static str, &'static str)>,
        &'static [(&'static str, &'static [usize])],
    );

    #[test]
    fn renames_case_table() {
        let dir = tempfile::tempdir().unwrap();
        for (f, text) in [
            ("src/users.py", "def get_user(i):\n    return i\n"),
            (
                "src/report.py",
                "from users import get_user\n\nx = get_user(1)\n",
            ),
            ("src/other.py", "get_users = 1\nmy_get_user = 2\n"),
            ("docs/a.md", "get_user is documented here\n"),
            (".git/config", "get_user\n"),
        ] {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let cases: &[RenameRow] = &[
            (
                "Rename the function get_user to fetch_user everywhere in src/ (its definition and every call and import).",
                Some(("get_user", "fetch_user", "src")),
                &[("src/report.py", &[1, 3]), ("src/users.py", &[1])],
            ),
            (
                "Rename `get_user` to `fetch_user`.",
                Some(("get_user", "fetch_user", "")),
                &[
                    ("docs/a.md", &[1]),
                    ("src/report.py", &[1, 3]),
                    ("src/users.py", &[1]),
                ],
            ),
            ("Rename a.py to b.py.", None, &[]),
            ("Rename get_user to get_user.", None, &[]),
            ("Rename it.", None, &[]),
            ("Why would you rename get_user to fetch_user?", None, &[]),
            (
                "Rename the function nowhere_used to used in lib/.",
                Some(("nowhere_used", "used", "")),
                &[],
            ),
        ];
        for (task, expected, left) in cases {
            let checks = TaskChecks::from_task(task, Some(dir.path()), &programs);
            let got = checks
                .renames
                .first()
                .map(|r| (r.from.as_str(), r.to.as_str(), r.scope.as_str()));
            assert_eq!(got, *expected, "{task}");
            let found = checks.leftovers(dir.path());
            let found: Vec<(&str, &[usize])> = found
                .first()
                .map(|(_, f)| f.iter().map(|(p, l)| (p.as_str(), l.as_slice())).collect())
                .unwrap_or_default();
            assert_eq!(found, *left, "{task}");
        }
    }

    #[test]
    fn files_to_create_case_table() {
        let dir = workspace_with(&["src/calc.py", "a.py", "docs/guide.md"]);
        let cases: &[(&str, &[&str])] = &[
            (
                "Find every TODO comment under src/ and write them to a new file TODO.md, one line per TODO.",
                &["TODO.md"],
            ),
            ("Create hello.py that prints hi.", &["hello.py"]),
            ("Rename a.py to b.py.", &["b.py"]),
            (
                "Move the helpers into `src/helpers.py`.",
                &["src/helpers.py"],
            ),
            ("Save the report as docs/report.md", &["docs/report.md"]),
            // Files that exist, or could not be made here, or no file.
            ("Write the notes to docs/guide.md.", &[]),
            ("Write the result to /tmp/out.txt.", &[]),
            ("Write it to lib/new.py.", &[]),
            ("Change the URL to example.com.", &[]),
            ("Bump the version to 4.3.0.", &[]),
            ("Point the link to https://example.com/a.md.", &[]),
            // A question asks for nothing to be created.
            ("Would you write them to TODO.md?", &[]),
            ("Explain how hello.py would print hi.", &[]),
        ];
        for (task, creates) in cases {
            let checks = TaskChecks::from_task(task, Some(dir.path()), &programs);
            assert_eq!(checks.creates, *creates, "{task}");
            assert_eq!(checks.not_created(dir.path()), *creates, "{task}");
        }
        let checks = TaskChecks::from_task("Create hello.py.", Some(dir.path()), &programs);
        std::fs::write(dir.path().join("hello.py"), "print('hi')\n").unwrap();
        assert!(checks.not_created(dir.path()).is_empty());
    }

    #[test]
    fn tasks_that_only_add_case_table() {
        let cases: &[(&str, bool)] = &[
            ("Add a function multiply(a, b) to src/calc.py.", true),
            (
                "Add a --verbose flag to the parser; then insert a test for it.",
                true,
            ),
            ("Append a line to notes.txt.", true),
            ("Add a flag and fix the parser.", false),
            ("Add multiply and rename add to plus.", false),
            ("Fix the bug.", false),
            ("Rewrite calc.py.", false),
            ("What would you add to calc.py?", false),
            ("Explain how to add a user.", false),
        ];
        for (task, adds) in cases {
            let checks = TaskChecks::from_task(task, None, &programs);
            assert_eq!(checks.adds_only, *adds, "{task}");
        }
    }

    #[test]
    fn kept_files_case_table() {
        let dir = workspace_with(&[
            "src/users.py",
            "src/report.py",
            "a.py",
            "b.py",
            "config.yaml",
        ]);
        // (task, the files it says to keep)
        let cases: &[(&str, &[&str])] = &[
            (
                "Make greeting(3) return \"hello stranger\" without changing src/users.py.",
                &["src/users.py"],
            ),
            (
                "Fix src/report.py. Do not modify `src/users.py`.",
                &["src/users.py"],
            ),
            (
                "Fix a.py; don't touch b.py or config.yaml",
                &["b.py", "config.yaml"],
            ),
            ("Never edit config.yaml: fix a.py", &["config.yaml"]),
            ("Rename x in a.py and leave b.py unchanged.", &["b.py"]),
            (
                "Leave src/users.py as is and fix src/report.py.",
                &["src/users.py"],
            ),
            // The files to change are not kept.
            ("Fix src/report.py without changing how it prints.", &[]),
            ("Change a.py, not b.py's tests.", &[]),
            ("Do not change the API, and fix a.py.", &[]),
            ("Do not change the API and fix a.py.", &[]),
            ("Without changing the output, refactor a.py.", &[]),
            ("Fix a.py. It should not print anything.", &[]),
            ("No need to run tests; edit a.py.", &[]),
            // A file the workspace does not hold is no file.
            ("Fix a.py without changing c.py.", &[]),
        ];
        for (task, keep) in cases {
            let checks = TaskChecks::from_task(task, Some(dir.path()), &programs);
            assert!(!checks.adds_only || task.starts_with("Add"), "{task}");
            assert_eq!(checks.keep, *keep, "{task}");
            for k in *keep {
                assert_eq!(checks.kept(&format!("./{k}")), Some(*k), "{task}");
            }
        }
    }

    #[test]
    fn what_is_missing_is_read_from_declared_effects() {
        let checks = TaskChecks {
            files: vec!["calc.py".into(), "tests/test_calc.py".into()],
            commands: vec!["python3 tests/test_calc.py".into()],
            must_pass: Vec::new(),
            change: false,
            keep: Vec::new(),
            adds_only: false,
            creates: Vec::new(),
            renames: Vec::new(),
        };
        let none: Vec<(&Effects, &str, bool)> = Vec::new();
        assert_eq!(
            checks.missing(&none),
            (
                vec!["calc.py", "tests/test_calc.py"],
                vec!["python3 tests/test_calc.py"]
            )
        );
        let read = Effects::known([Effect::read("./calc.py")]);
        let run = Effects::known([Effect::command("python3  tests/test_calc.py -v", None)]);
        let ran = [(&read, "{}", true), (&run, "{}", false)];
        assert_eq!(checks.missing(&ran), (vec![], vec![]));
        // A listing of the tree is not a read of the files.
        let listed = Effects::known([Effect::read_tree(".")]);
        let ran = [(&listed, r#"{"path": "calc.py"}"#, true)];
        assert_eq!(checks.missing(&ran).0.len(), 2);
        // A delegation (no declared effects) that names them counts.
        let none = Effects::none();
        let task = r#"{"agent": "review", "task": "Read calc.py and tests/test_calc.py"}"#;
        let ran = [(&none, task, true)];
        let (files, commands) = checks.missing(&ran);
        assert!(files.is_empty());
        assert_eq!(commands, ["python3 tests/test_calc.py"]);
        // A change that succeeded counts; one that failed does not.
        let write = Effects::known([Effect::write(
            "calc.py",
            toolgate_core::Change::counted(1, 1, false),
        )]);
        assert_eq!(
            checks.missing(&[(&write, "{}", true)]).0,
            ["tests/test_calc.py"]
        );
        assert_eq!(checks.missing(&[(&write, "{}", false)]).0.len(), 2);
    }
}
