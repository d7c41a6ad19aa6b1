//! Commands given inside another command's arguments: the script of
//! `sh -c SCRIPT` and the commands of `find -exec`.

use crate::words::Word;

/// Shells whose `-c` argument is a script we parse.
pub(super) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// The script word of `sh -c SCRIPT` (with options before it, `-lc`, `-e -c`,
/// `-o pipefail -c`), if the shell is given one.
pub(super) fn shell_script_arg(args: &[Word]) -> Option<&Word> {
    let mut has_c = false;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text();
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if let Some(cluster) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) {
            if cluster.starts_with('-') {
                // Long options (`--norc`, `--login`) take no argument.
                i += 1;
                continue;
            }
            if cluster.contains('c') {
                has_c = true;
            }
            if cluster.contains('o') || cluster.contains('O') {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    if has_c { args.get(i) } else { None }
}

/// The command words of each `-exec … ;` / `-exec … +` in a `find` command.
pub(super) fn find_exec_commands(args: &[Word]) -> Vec<Vec<Word>> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(word) = iter.next() {
        if matches!(word.text(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let words: Vec<Word> = iter
                .by_ref()
                .take_while(|w| !matches!(w.text(), ";" | "+"))
                .cloned()
                .collect();
            if !words.is_empty() {
                out.push(words);
            }
        }
    }
    out
}
