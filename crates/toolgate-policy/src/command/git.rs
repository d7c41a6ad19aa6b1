//! `git`: which subcommands only read, which are routine development steps,
//! and which can lose work or publish it.

use super::classify::{Judgement, dangerous, dev, has_option, options, positionals, safe};
use super::words::Word;

pub(super) fn git(args: &[Word]) -> Judgement {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let t = word.text();
        match t {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => i += 2,
            "-c" | "--config-env" => {
                return dangerous("`git -c` can set options that run programs");
            }
            "--no-pager"
            | "-P"
            | "--bare"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-optional-locks"
            | "-p"
            | "--paginate"
            | "--no-lazy-fetch"
            | "--no-advice" => i += 1,
            _ if t.starts_with("--git-dir=")
                || t.starts_with("--work-tree=")
                || t.starts_with("--namespace=") =>
            {
                i += 1;
            }
            "--version" | "--help" | "-h" | "--html-path" | "--man-path" | "--info-path" => {
                return safe("`git --version` only prints");
            }
            _ if t.starts_with('-') => {
                return dangerous(format!("`git {t}` is an option toolgate does not know"));
            }
            _ => break,
        }
    }
    let Some(sub) = args.get(i).map(Word::text) else {
        return safe("`git` alone prints its usage");
    };
    let rest = args.get(i + 1..).unwrap_or_default();
    match sub {
        "status" | "log" | "show" | "diff" | "blame" | "annotate" | "shortlog" | "describe"
        | "rev-parse" | "rev-list" | "ls-files" | "ls-tree" | "cat-file" | "grep"
        | "whatchanged" | "name-rev" | "merge-base" | "count-objects" | "for-each-ref"
        | "show-ref" | "show-branch" | "check-ignore" | "check-attr" | "diff-tree"
        | "diff-files" | "diff-index" | "cherry" | "range-diff" | "version" | "help" | "var"
        | "verify-commit" | "verify-tag" | "check-ref-format" | "ls-remote" => {
            if has_option(rest, &[], &["output"]) {
                dangerous(format!("`git {sub} --output` writes to a file"))
            } else if has_option(rest, &[], &["ext-diff", "open-files-in-pager"])
                || has_option(rest, &['O'], &[]) && sub == "grep"
            {
                dangerous(format!("`git {sub}` with this option runs another program"))
            } else {
                safe(format!("`git {sub}` only reads"))
            }
        }
        "branch" => git_branch(rest),
        "tag" => {
            let listing = rest.is_empty() || has_option(rest, &['l'], &["list"]);
            if listing
                && !has_option(
                    rest,
                    &['d', 'a', 's', 'f', 'm', 'F', 'u'],
                    &["delete", "annotate", "sign", "force"],
                )
            {
                safe("`git tag` (listing) only reads")
            } else {
                dangerous("`git tag NAME` creates or deletes tags")
            }
        }
        "remote" => match rest.first().map(Word::text) {
            None | Some("-v" | "--verbose" | "show" | "get-url") => {
                safe("`git remote` (listing) only reads")
            }
            Some(action) => dangerous(format!("`git remote {action}` changes remotes")),
        },
        "stash" => match rest.first().map(Word::text) {
            Some("list" | "show") => safe("`git stash list` only reads"),
            None
            | Some(
                "push"
                | "save"
                | "pop"
                | "apply"
                | "-u"
                | "-m"
                | "--include-untracked"
                | "branch"
                | "create"
                | "store",
            ) => dev("`git stash` sets changes aside, recoverably"),
            Some(action) => dangerous(format!("`git stash {action}` can lose stashed changes")),
        },
        "config" => {
            let reading = has_option(
                rest,
                &['l'],
                &[
                    "get",
                    "get-all",
                    "get-regexp",
                    "get-urlmatch",
                    "list",
                    "show-origin",
                    "show-scope",
                    "get-color",
                    "get-colorbool",
                ],
            ) || rest
                .first()
                .is_some_and(|w| matches!(w.text(), "get" | "list"));
            let writing = has_option(
                rest,
                &['e'],
                &[
                    "add",
                    "unset",
                    "unset-all",
                    "replace-all",
                    "rename-section",
                    "remove-section",
                    "edit",
                ],
            );
            if reading && !writing {
                safe("`git config --get` only reads")
            } else {
                dangerous("`git config` changes settings, some of which run programs")
            }
        }
        "reflog" => match rest.first().map(Word::text) {
            None | Some("show") => safe("`git reflog` only reads"),
            Some(action) if action.starts_with('-') => safe("`git reflog` only reads"),
            Some(action) => dangerous(format!("`git reflog {action}` rewrites the reflog")),
        },
        "worktree" => match rest.first().map(Word::text) {
            Some("list") => safe("`git worktree list` only reads"),
            _ => dangerous("`git worktree` adds or removes working trees"),
        },
        "add" | "commit" | "fetch" | "mv" | "notes" => dev(format!(
            "`git {sub}` is a normal, recoverable development step"
        )),
        "switch" => {
            if has_option(
                rest,
                &['f', 'C'],
                &["discard-changes", "force", "force-create"],
            ) {
                dangerous("`git switch --discard-changes` throws away uncommitted changes")
            } else {
                dev("`git switch` changes branch")
            }
        }
        "checkout" => {
            let creates = has_option(rest, &['b'], &[]);
            let forced = has_option(rest, &['f', 'B'], &["force", "ours", "theirs"]);
            let paths =
                options(rest).count() < rest.len() || positionals(rest).any(|w| w.text() == ".");
            if creates && !forced && !paths {
                dev("`git checkout -b` creates a branch and switches to it")
            } else {
                dangerous("`git checkout` can discard uncommitted changes")
            }
        }
        "restore" => {
            let staged_only =
                has_option(rest, &['S'], &["staged"]) && !has_option(rest, &['W'], &["worktree"]);
            if staged_only {
                dev("`git restore --staged` only unstages")
            } else {
                dangerous("`git restore` discards uncommitted changes")
            }
        }
        "reset" => {
            if has_option(rest, &[], &["hard", "merge", "keep"]) {
                dangerous("`git reset --hard` discards uncommitted changes")
            } else {
                dev("`git reset` moves the branch and keeps the changes")
            }
        }
        "clean" => {
            if has_option(rest, &['n'], &["dry-run"]) && !has_option(rest, &['f'], &["force"]) {
                safe("`git clean -n` only lists what it would delete")
            } else {
                dangerous("`git clean` deletes untracked files")
            }
        }
        "push" => dangerous("`git push` publishes to a remote"),
        "rm" => dangerous("`git rm` deletes files"),
        _ => dangerous(format!("`git {sub}` is not known to be read-only")),
    }
}

fn git_branch(args: &[Word]) -> Judgement {
    const CHANGES: &[(&str, &str)] = &[
        ("-d", "deletes"),
        ("-D", "deletes"),
        ("--delete", "deletes"),
        ("-m", "renames"),
        ("-M", "renames"),
        ("--move", "renames"),
        ("-c", "copies"),
        ("-C", "copies"),
        ("--copy", "copies"),
        ("-f", "overwrites"),
        ("--force", "overwrites"),
        ("-u", "changes the upstream of"),
        ("--set-upstream-to", "changes the upstream of"),
        ("--unset-upstream", "changes the upstream of"),
        ("--edit-description", "edits"),
        ("-t", "creates"),
        ("--track", "creates"),
        ("--no-track", "creates"),
    ];
    const WITH_VALUE: &[&str] = &[
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
        "--abbrev",
        "--column",
        "--color",
    ];
    let mut listing = false;
    let mut positional = None;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let t = word.text();
        i += 1;
        let name = t.split_once('=').map_or(t, |(n, _)| n);
        if let Some((flag, what)) = CHANGES.iter().find(|(f, _)| *f == name) {
            return dangerous(format!("`git branch {flag}` {what} a branch"));
        }
        if t.starts_with('-') && !t.starts_with("--") && t.len() > 2 {
            // A cluster such as `-Df` or `-vv`.
            if t.chars()
                .skip(1)
                .any(|c| matches!(c, 'd' | 'D' | 'm' | 'M' | 'c' | 'C' | 'f' | 'u' | 't'))
            {
                return dangerous(format!(
                    "`git branch {t}` deletes, renames or changes a branch"
                ));
            }
            continue;
        }
        if matches!(t, "-l" | "--list") {
            listing = true;
        } else if WITH_VALUE.contains(&t) {
            // `--merged` and `--contains` take an optional commit.
            if args.get(i).is_some_and(|w| !w.text().starts_with('-')) {
                i += 1;
            }
        } else if !t.starts_with('-') && positional.is_none() {
            positional = Some(t);
        }
    }
    match positional {
        Some(name) if !listing => dangerous(format!("`git branch {name}` creates a branch")),
        _ => safe("`git branch` (listing) only reads"),
    }
}
