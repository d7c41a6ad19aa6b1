//! `git`: which subcommands only read, which are routine development steps,
//! and which can lose work or publish it.
//!
//! `git`'s option space is too large to vouch for, so `safe` is limited to
//! the read-only subcommands below with the options in their tables
//! (`options.rs` reads them, abbreviations included); any other option is
//! `dev`, and options that run programs (`--ext-diff`, `--textconv`,
//! `grep -O`, `-c`, `--config-env`, `--exec-path=DIR`, `-p`) or write
//! (`--output`) are `dangerous`.
//!
//! # What the tables cannot see
//!
//! Git runs programs named in its configuration: `core.fsmonitor` on
//! `git status`, `diff.<driver>.textconv` and `diff.external` on
//! `git diff`/`log -p`, `core.pager` when the output is a terminal (it
//! never is under toolgate, so no pager starts). The configuration of the
//! repository is a file in the workspace, outside what a command line
//! shows, in the current directory as much as under `git -C DIR`, which is
//! therefore allowed. The kernel profile of a `safe` command is what keeps
//! such a configured program from starting: it may run only the programs
//! the line names.
//!
//! `git status` refreshes the index and writes it back when it can; that
//! write is opportunistic (git carries on silently when it fails, as it
//! does under the `safe` profile). `git --no-optional-locks status` skips
//! it.

use super::hooks;
use toolgate_shell::judgement::{Judgement, dangerous, dev, safe, short};
use toolgate_shell::options::{Scanned, Spec, scan, scan_prefix};
use toolgate_shell::words::Word;

#[rustfmt::skip]
const GLOBAL: Spec = Spec {
    read: &[&[
        "-C=", "--git-dir=", "--work-tree=", "--namespace=", "-P|--no-pager", "--no-optional-locks",
        "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
        "--no-replace-objects", "--no-lazy-fetch", "--no-advice", "--bare", "--version",
        "-h|--help", "--html-path", "--man-path", "--info-path", "--exec-path[=]",
    ]],
    danger: &[
        (
            "-c=",
            "sets configuration, which can name programs to run (`core.pager`, `core.fsmonitor`, aliases)",
        ),
        (
            "--config-env=",
            "sets configuration, which can name programs to run (`core.pager`, `core.fsmonitor`, aliases)",
        ),
        ("-p|--paginate", "pipes the output through a pager program"),
        ("--super-prefix=", "is an internal option"),
    ],
    numeric: false,
    complete: false,
};

/// Options of the diff machinery: `diff`, `show`, `log -p`, `diff-tree`, …
#[rustfmt::skip]
const DIFF_OPTS: &[&str] = &[
    "-p|-u|--patch", "-s|--no-patch", "-U=|--unified=", "--output-indicator-new=",
    "--output-indicator-old=", "--output-indicator-context=", "--raw", "--patch-with-raw", "-t",
    "--indent-heuristic", "--no-indent-heuristic", "--minimal", "--patience", "--histogram",
    "--anchored=", "--diff-algorithm=", "--stat[=]", "--stat-width=", "--stat-name-width=",
    "--stat-graph-width=", "--stat-count=", "--compact-summary", "--numstat", "--shortstat",
    "-X[=]|--dirstat[=]", "--cumulative", "--dirstat-by-file[=]", "--summary", "--patch-with-stat",
    "-z", "--name-only", "--name-status", "--submodule[=]", "--color[=]", "--no-color",
    "--color-moved[=]", "--no-color-moved", "--color-moved-ws=", "--no-color-moved-ws",
    "--word-diff[=]", "--word-diff-regex=", "--color-words[=]", "--no-renames", "--rename-empty",
    "--no-rename-empty", "--check", "--ws-error-highlight=", "--full-index", "--binary",
    "--abbrev[=]", "-B[=]|--break-rewrites[=]", "-M[=]|--find-renames[=]", "-C[=]|--find-copies[=]",
    "--find-copies-harder", "-D|--irreversible-delete", "-l[=]", "--diff-filter=", "-S=", "-G=",
    "--find-object=", "--pickaxe-all", "--pickaxe-regex", "-O=", "--skip-to=", "--rotate-to=", "-R",
    "--relative[=]", "--no-relative", "-a|--text", "--ignore-cr-at-eol", "--ignore-space-at-eol",
    "-b|--ignore-space-change", "-w|--ignore-all-space", "--ignore-blank-lines",
    "-I=|--ignore-matching-lines=", "--inter-hunk-context=", "-W|--function-context", "--exit-code",
    "--quiet", "--no-ext-diff", "--no-textconv", "--ignore-submodules[=]", "--src-prefix=",
    "--dst-prefix=", "--no-prefix", "--default-prefix", "--line-prefix=",
    "--ita-invisible-in-index", "--ita-visible-in-index",
];

const DIFF_DANGER: &[(&str, &str)] = &[
    (
        "--ext-diff",
        "runs the external diff program named in the configuration",
    ),
    (
        "--textconv",
        "runs the text-conversion programs named in the configuration",
    ),
    ("--output=", "writes its output to a file"),
];

/// Options that choose and print commits: `log`, `rev-list`, `shortlog`, …
#[rustfmt::skip]
const REV_OPTS: &[&str] = &[
    "-n=|--max-count=", "--skip=", "--since=|--after=", "--until=|--before=", "--since-as-filter=",
    "--author=", "--committer=", "--grep-reflog=", "--grep=", "--all-match", "--invert-grep",
    "-i|--regexp-ignore-case", "--basic-regexp", "-E|--extended-regexp", "-F|--fixed-strings",
    "-P|--perl-regexp", "--remove-empty", "--merges", "--no-merges", "--min-parents=",
    "--max-parents=", "--no-min-parents", "--no-max-parents", "--first-parent",
    "--exclude-first-parent-only", "--not", "--all", "--branches[=]", "--tags[=]", "--remotes[=]",
    "--glob=", "--exclude=", "--exclude-hidden=", "--reflog", "--alternate-refs",
    "--single-worktree", "--ignore-missing", "--bisect", "--cherry-mark", "--cherry-pick",
    "--left-only", "--right-only", "--cherry", "-g|--walk-reflogs", "--merge", "--boundary",
    "--simplify-by-decoration", "--show-pulls", "--full-history", "--dense", "--sparse",
    "--simplify-merges", "--ancestry-path[=]", "--date-order", "--author-date-order",
    "--topo-order", "--reverse", "--no-walk[=]", "--do-walk", "--pretty[=]", "--format=",
    "--abbrev-commit", "--no-abbrev-commit", "--oneline", "--encoding=", "--expand-tabs[=]",
    "--no-expand-tabs", "--notes[=]", "--no-notes", "--show-notes[=]", "--standard-notes",
    "--no-standard-notes", "--relative-date", "--date=", "--parents", "--children", "--left-right",
    "--graph", "--show-linear-break[=]", "-c", "--cc", "--dd", "-m", "--diff-merges=",
    "--no-diff-merges", "--combined-all-paths", "--follow", "--no-decorate", "--decorate[=]",
    "--decorate-refs=", "--decorate-refs-exclude=", "--clear-decorations", "--source",
    "--mailmap|--use-mailmap", "--no-mailmap|--no-use-mailmap", "--full-diff", "--log-size", "-L=",
    "--count", "--objects", "--objects-edge", "--objects-edge-aggressive", "--indexed-objects",
    "--unpacked", "--object-names", "--no-object-names", "--timestamp", "--header",
    "--no-commit-header", "--commit-header", "--in-commit-order", "--disk-usage[=]", "--stdin",
];

const REV_DANGER: &[(&str, &str)] = &[
    (
        "--ext-diff",
        "runs the external diff program named in the configuration",
    ),
    (
        "--textconv",
        "runs the text-conversion programs named in the configuration",
    ),
    ("--output=", "writes its output to a file"),
    ("--show-signature", "runs `gpg` to check signatures"),
    ("--remerge-diff", "writes temporary objects"),
];

const LOG: Spec = Spec {
    read: &[REV_OPTS, DIFF_OPTS],
    danger: REV_DANGER,
    numeric: true,
    complete: false,
};

#[rustfmt::skip]
const DIFF: Spec = Spec {
    read: &[
        DIFF_OPTS,
        &[
            "--cached|--staged", "--no-index", "--merge-base", "-1|--base", "-2|--ours",
            "-3|--theirs", "-0",
        ],
    ],
    danger: DIFF_DANGER,
    numeric: false,
    complete: false,
};

/// `diff-tree`, `diff-files`, `diff-index`.
#[rustfmt::skip]
const DIFF_PLUMBING: Spec = Spec {
    read: &[
        DIFF_OPTS,
        &[
            "-r", "--root", "--merge-base", "-m", "-c", "--cc", "--combined-all-paths", "--always",
            "--no-commit-id", "-v", "--pretty[=]", "--format=", "--cached", "-1|--base",
            "-2|--ours", "-3|--theirs", "-0", "-q",
        ],
    ],
    danger: DIFF_DANGER,
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
const STATUS: Spec = Spec::read(
    &[&[
        "-s|--short", "-b|--branch", "--show-stash", "--porcelain[=]", "--long", "-v|--verbose",
        "-u[=]|--untracked-files[=]", "--ignore-submodules[=]", "--ignored[=]", "-z", "--column[=]",
        "--no-column", "--ahead-behind", "--no-ahead-behind", "--renames", "--no-renames",
        "--find-renames[=]",
    ]],
    false,
);

#[rustfmt::skip]
const BLAME: Spec = Spec {
    read: &[&[
        "-b", "--root", "--show-stats", "-L=", "-l", "-t", "-S=", "--reverse=", "--first-parent",
        "-p|--porcelain", "--line-porcelain", "--incremental", "--encoding=", "--contents=",
        "--date=", "--progress", "--no-progress", "-M[=]", "-C[=]", "--ignore-rev=",
        "--ignore-revs-file=", "--color-lines", "--color-by-age", "--minimal", "-c",
        "--score-debug", "-f|--show-name", "-n|--show-number", "-s", "-e|--show-email", "-w",
        "--abbrev=", "--no-textconv",
    ]],
    danger: &[(
        "--textconv",
        "runs the text-conversion programs named in the configuration",
    )],
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
const REV_PARSE: Spec = Spec::read(
    &[&[
        "--parseopt", "--sq-quote", "--keep-dashdash", "--stop-at-non-option", "--stuck-long",
        "--revs-only", "--no-revs", "--flags", "--no-flags", "--default=", "--prefix=", "--verify",
        "-q|--quiet", "--sq", "--short[=]", "--not", "--abbrev-ref[=]", "--symbolic",
        "--symbolic-full-name", "--output-object-format=", "--all", "--branches[=]", "--tags[=]",
        "--remotes[=]", "--glob=", "--exclude=", "--exclude-hidden=", "--disambiguate=",
        "--local-env-vars", "--path-format=", "--git-dir", "--git-common-dir", "--resolve-git-dir=",
        "--git-path=", "--show-toplevel", "--show-superproject-working-tree", "--shared-index-path",
        "--absolute-git-dir", "--is-inside-git-dir", "--is-inside-work-tree",
        "--is-bare-repository", "--is-shallow-repository", "--show-cdup", "--show-prefix",
        "--show-object-format[=]", "--show-ref-format", "--since=|--after=", "--until=|--before=",
        "--end-of-options",
    ]],
    false,
);

#[rustfmt::skip]
const LS_FILES: Spec = Spec::read(
    &[&[
        "-c|--cached", "-d|--deleted", "-m|--modified", "-o|--others", "-i|--ignored", "-s|--stage",
        "-u|--unmerged", "-k|--killed", "-z", "-t", "-v", "-f", "--directory",
        "--no-empty-directory", "--eol", "--exclude-standard", "-x=|--exclude=",
        "-X=|--exclude-from=", "--exclude-per-directory=", "--error-unmatch", "--full-name",
        "--recurse-submodules", "--abbrev[=]", "--debug", "--deduplicate", "--format=", "--sparse",
        "--with-tree=",
    ]],
    false,
);

#[rustfmt::skip]
const GREP: Spec = Spec {
    read: &[&[
        "--cached", "--untracked", "--no-index", "--no-exclude-standard", "--exclude-standard",
        "--recurse-submodules", "-a|--text", "--no-textconv", "-i|--ignore-case", "-I",
        "--max-depth=", "-r|--recursive", "--no-recursive", "-w|--word-regexp", "-v|--invert-match",
        "-h", "-H", "--full-name", "-E|--extended-regexp", "-G|--basic-regexp", "-P|--perl-regexp",
        "-F|--fixed-strings", "-n|--line-number", "--column", "-l|--files-with-matches|--name-only",
        "-L|--files-without-match", "-z|--null", "-o|--only-matching", "-c|--count", "--color[=]",
        "--no-color", "--break", "--heading", "-p|--show-function", "-A=|--after-context=",
        "-B=|--before-context=", "-C=|--context=", "-W|--function-context", "-m=|--max-count=",
        "--threads=", "-f=", "-e=", "--and", "--or", "--not", "--all-match", "-q|--quiet",
    ]],
    danger: &[
        (
            "-O[=]|--open-files-in-pager[=]",
            "opens the matching files in a pager or editor program",
        ),
        (
            "--textconv",
            "runs the text-conversion programs named in the configuration",
        ),
    ],
    numeric: true,
    complete: false,
};

#[rustfmt::skip]
const DESCRIBE: Spec = Spec::read(
    &[&[
        "--all", "--tags", "--contains", "--abbrev=", "--candidates=", "--exact-match", "--debug",
        "--long", "--match=", "--exclude=", "--always", "--first-parent",
    ]],
    false,
);

#[rustfmt::skip]
const BRANCH: Spec = Spec {
    read: &[&[
        "-a|--all", "-r|--remotes", "-l|--list", "-v|--verbose", "-q|--quiet", "--abbrev=",
        "--no-abbrev", "--color[=]", "--no-color", "--column[=]", "--no-column", "--sort=",
        "--merged=", "--no-merged=", "--contains=", "--no-contains=", "--points-at=", "--format=",
        "-i|--ignore-case", "--omit-empty", "--show-current",
    ]],
    danger: &[
        ("-d|--delete", "deletes a branch"),
        ("-D", "deletes a branch"),
        ("-m|--move", "renames a branch"),
        ("-M", "renames a branch"),
        ("-c|--copy", "copies a branch"),
        ("-C", "copies a branch"),
        ("-f|--force", "overwrites a branch"),
        ("-u=|--set-upstream-to=", "changes the upstream of a branch"),
        ("--unset-upstream", "changes the upstream of a branch"),
        (
            "--edit-description",
            "edits a branch description in an editor",
        ),
        ("-t[=]|--track[=]", "creates a branch"),
        ("--no-track", "creates a branch"),
        ("--recurse-submodules", "creates branches in submodules"),
        ("--create-reflog", "creates a branch"),
    ],
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
const TAG: Spec = Spec {
    read: &[&[
        "-l|--list", "-n[=]", "--sort=", "--contains=", "--no-contains=", "--merged=",
        "--no-merged=", "--points-at=", "--format=", "--color[=]", "-i|--ignore-case",
        "--column[=]", "--no-column", "--omit-empty",
    ]],
    danger: &[
        ("-d|--delete", "deletes a tag"),
        ("-a|--annotate", "creates a tag"),
        ("-s|--sign", "creates a signed tag, running `gpg`"),
        ("-u=|--local-user=", "creates a signed tag, running `gpg`"),
        ("-f|--force", "replaces a tag"),
        ("-m=|--message=", "creates a tag"),
        ("-F=|--file=", "creates a tag"),
        ("-e|--edit", "opens an editor"),
        ("-v|--verify", "runs `gpg` to verify a tag"),
        ("--cleanup=", "creates a tag"),
        ("--create-reflog", "creates a tag"),
        ("--trailer=", "creates a tag"),
    ],
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
const CONFIG: Spec = Spec {
    read: &[&[
        "--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l|--list", "--show-origin",
        "--show-scope", "--name-only", "-z|--null", "--global", "--system", "--local", "--worktree",
        "-f=|--file=", "--blob=", "-t=|--type=", "--bool", "--int", "--bool-or-int", "--path",
        "--expiry-date", "--default=", "--includes", "--no-includes", "--get-color",
        "--get-colorbool", "--fixed-value", "--all", "--regexp", "--url=",
    ]],
    danger: &[
        ("--add", "changes settings"),
        ("--unset", "changes settings"),
        ("--unset-all", "changes settings"),
        ("--replace-all", "changes settings"),
        ("--rename-section", "changes settings"),
        ("--remove-section", "changes settings"),
        ("-e|--edit", "opens the settings in an editor"),
        ("--comment=", "changes settings"),
    ],
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
const CLEAN: Spec = Spec {
    read: &[&[
        "-n|--dry-run", "-d", "-x", "-X", "-q|--quiet", "-e=|--exclude=",
    ]],
    danger: &[
        ("-f|--force", "deletes untracked files"),
        (
            "-i|--interactive",
            "asks on the terminal, then deletes files",
        ),
    ],
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
const LS_TREE: Spec = Spec::read(
    &[&[
        "-d", "-r", "-t", "-l|--long", "-z", "--name-only|--name-status", "--object-only",
        "--full-name", "--full-tree", "--abbrev[=]", "--format=",
    ]],
    false,
);

#[rustfmt::skip]
const CAT_FILE: Spec = Spec {
    read: &[&[
        "-t", "-s", "-e", "-p", "--batch[=]", "--batch-check[=]", "--batch-command[=]",
        "--batch-all-objects", "--buffer", "--unordered", "--follow-symlinks",
        "--allow-unknown-type", "--path=", "-Z", "--mailmap|--use-mailmap",
        "--no-mailmap|--no-use-mailmap",
    ]],
    danger: &[
        (
            "--textconv",
            "runs the text-conversion programs named in the configuration",
        ),
        (
            "--filters",
            "runs the filter programs named in the configuration",
        ),
    ],
    numeric: false,
    complete: false,
};

const SHORTLOG: Spec = Spec {
    read: &[
        REV_OPTS,
        &["-s|--summary", "-e|--email", "--group=", "-w[=]"],
    ],
    danger: REV_DANGER,
    numeric: true,
    complete: false,
};

#[rustfmt::skip]
const FOR_EACH_REF: Spec = Spec::read(
    &[&[
        "--count=", "--sort=", "--format=", "--color[=]", "--points-at=", "--merged=",
        "--no-merged=", "--contains=", "--no-contains=", "--ignore-case", "--omit-empty",
        "--exclude=", "--include-root-refs", "--stdin", "-s|--shell", "-p|--perl", "--python",
        "--tcl",
    ]],
    false,
);

#[rustfmt::skip]
const SHOW_REF: Spec = Spec::read(
    &[&[
        "--head", "--heads|--branches", "--tags", "-d|--dereference", "-s|--hash[=]", "--abbrev[=]",
        "--verify", "-q|--quiet", "--exclude-existing[=]", "--exists",
    ]],
    false,
);

#[rustfmt::skip]
const SMALL: Spec = Spec::read(
    &[&[
        // name-rev
        "--tags", "--refs=", "--exclude=", "--all", "--annotate-stdin", "--name-only",
        "--no-undefined", "--always",
        // merge-base
        "-a", "--octopus", "--independent", "--is-ancestor", "--fork-point",
        // count-objects
        "-v|--verbose",
        "-H|--human-readable",
        // check-ignore, check-attr
        "-q|--quiet", "--stdin", "-z", "-n|--non-matching", "--no-index", "--cached", "--source=",
        // cherry, version, var, check-ref-format, worktree list
        "--build-options", "-l", "--normalize", "--allow-onelevel", "--no-allow-onelevel",
        "--refspec-pattern", "--branch", "--porcelain", "--expire=",
    ]],
    false,
);

#[rustfmt::skip]
const SHOW_BRANCH: Spec = Spec::read(
    &[&[
        "-r|--remotes", "-a|--all", "--current", "--topo-order", "--date-order", "--sparse",
        "--more=", "--list", "--merge-base", "--independent", "--no-name", "--sha1-name",
        "--topics", "-g[=]|--reflog[=]", "--color[=]", "--no-color",
    ]],
    false,
);

#[rustfmt::skip]
const RANGE_DIFF: Spec = Spec {
    read: &[
        DIFF_OPTS,
        &[
            "--creation-factor=", "--no-dual-color", "--left-only", "--right-only", "--notes[=]",
            "--no-notes",
        ],
    ],
    danger: DIFF_DANGER,
    numeric: false,
    complete: false,
};

const STASH_SHOW: Spec = Spec {
    read: &[DIFF_OPTS, &["--include-untracked", "--only-untracked"]],
    danger: DIFF_DANGER,
    numeric: false,
    complete: false,
};

fn read_with(name: &str, spec: &Spec, args: &[Word]) -> Result<(), Judgement> {
    scan(name, spec, args).map(|_| ())
}

pub(super) fn git(args: &[Word]) -> Judgement {
    let (global, stop, problem) = scan_prefix("git", &GLOBAL, args);
    if let Some(what) =
        config_settings(args.get(..stop).unwrap_or_default()).find_map(hooks::git_config)
    {
        return dangerous(what);
    }
    if let Some(j) = problem {
        return j;
    }
    if global.values(&["--exec-path"]).next().is_some() {
        return dangerous(
            "`git --exec-path=DIR` runs git's subcommands from a directory of the caller's choosing",
        );
    }
    let Some(sub) = args.get(stop) else {
        return safe("`git` with these options only prints");
    };
    if !sub.is_literal() {
        return dangerous(format!(
            "the `git` subcommand `{}` is only known at run time",
            short(sub.raw())
        ));
    }
    let sub = sub.text();
    let rest = args.get(stop + 1..).unwrap_or_default();
    if rest
        .iter()
        .take_while(|w| w.text() != "--")
        .any(|w| w.text() == "--help")
    {
        return dev(format!(
            "`git {sub} --help` opens the manual in another program"
        ));
    }
    if let Some(option) = rest.iter().map(Word::text).find(|t| {
        ["--upload-pack", "--receive-pack", "--exec"]
            .iter()
            .any(|o| t.split_once('=').map_or(*t, |(n, _)| n) == *o)
    }) {
        return dangerous(format!(
            "`git {sub} {}` runs a program of the caller's choosing",
            short(option.split_once('=').map_or(option, |(n, _)| n))
        ));
    }
    // `%G?`, `%GS`, … in a format verify signatures with `gpg`.
    if let Some(format) = rest
        .iter()
        .map(Word::text)
        .find(|t| t.contains("%G") || t.contains("%(signature"))
    {
        return dangerous(format!(
            "`git {sub}` with the format `{}` runs `gpg` to check signatures",
            short(format)
        ));
    }
    let name = format!("git {sub}");
    let reads = |spec: &Spec| match read_with(&name, spec, rest) {
        Ok(()) => safe(format!("`git {sub}` only reads")),
        Err(j) => j,
    };
    match sub {
        "status" => reads(&STATUS),
        "log" | "show" | "whatchanged" | "rev-list" => reads(&LOG),
        "diff" => reads(&DIFF),
        "diff-tree" | "diff-files" | "diff-index" => reads(&DIFF_PLUMBING),
        "blame" | "annotate" => reads(&BLAME),
        "shortlog" => reads(&SHORTLOG),
        "rev-parse" => reads(&REV_PARSE),
        "ls-files" => reads(&LS_FILES),
        "ls-tree" => reads(&LS_TREE),
        "cat-file" => reads(&CAT_FILE),
        "grep" => reads(&GREP),
        "describe" => reads(&DESCRIBE),
        "for-each-ref" => reads(&FOR_EACH_REF),
        "show-ref" => reads(&SHOW_REF),
        "show-branch" => reads(&SHOW_BRANCH),
        "range-diff" => reads(&RANGE_DIFF),
        "name-rev" | "merge-base" | "count-objects" | "check-ignore" | "check-attr" | "cherry"
        | "version" | "var" | "check-ref-format" => reads(&SMALL),
        "help" => {
            let lists = rest.iter().all(|w| {
                matches!(
                    w.text(),
                    "-a" | "--all" | "-g" | "--guides" | "-c" | "--config"
                )
            });
            if lists {
                safe("`git help` only prints")
            } else {
                dev("`git help COMMAND` opens the manual in another program")
            }
        }
        "branch" => listing(&name, &BRANCH, rest, "branch"),
        "tag" => listing(&name, &TAG, rest, "tag"),
        "remote" => remote(rest),
        "config" => config(rest),
        "stash" => stash(rest),
        "reflog" => match rest.first().map(Word::text) {
            None | Some("show") => reads_rest(&name, &LOG, rest.get(1..).unwrap_or_default()),
            Some("exists") => safe("`git reflog exists` only reads"),
            Some(action) if action.starts_with('-') => reads(&LOG),
            Some(action) => dangerous(format!("`git reflog {action}` rewrites the reflog")),
        },
        "worktree" => match rest.first().map(Word::text) {
            Some("list") => reads_rest(&name, &SMALL, rest.get(1..).unwrap_or_default()),
            _ => dangerous("`git worktree` adds or removes working trees"),
        },
        "clean" => match scan(&name, &CLEAN, rest) {
            Ok(scanned) if scanned.has(&["-n"]) => {
                safe("`git clean -n` only lists what it would delete")
            }
            Ok(_) => dangerous("`git clean` deletes untracked files"),
            Err(j) => j,
        },
        "verify-commit" | "verify-tag" => {
            dangerous(format!("`git {sub}` runs `gpg` to check signatures"))
        }
        "ls-remote" | "fetch-pack" => dangerous(format!("`git {sub}` contacts a remote")),
        "add" | "commit" | "fetch" | "mv" | "notes" => dev(format!(
            "`git {sub}` is a normal, recoverable development step"
        )),
        "switch" => {
            if has(
                rest,
                &["-f", "-C", "--discard-changes", "--force", "--force-create"],
            ) {
                dangerous("`git switch --discard-changes` throws away uncommitted changes")
            } else {
                dev("`git switch` changes branch")
            }
        }
        "checkout" => {
            let creates = has(rest, &["-b"]);
            let forced = has(rest, &["-f", "-B", "--force", "--ours", "--theirs"]);
            let paths = rest.iter().any(|w| w.text() == "--")
                || rest
                    .iter()
                    .filter(|w| !w.text().starts_with('-'))
                    .any(|w| w.text() == ".");
            if creates && !forced && !paths {
                dev("`git checkout -b` creates a branch and switches to it")
            } else {
                dangerous("`git checkout` can discard uncommitted changes")
            }
        }
        "restore" => {
            let staged_only = has(rest, &["-S", "--staged"]) && !has(rest, &["-W", "--worktree"]);
            if staged_only {
                dev("`git restore --staged` only unstages")
            } else {
                dangerous("`git restore` discards uncommitted changes")
            }
        }
        "reset" => {
            if has(rest, &["--hard", "--merge", "--keep"]) {
                dangerous("`git reset --hard` discards uncommitted changes")
            } else {
                dev("`git reset` moves the branch and keeps the changes")
            }
        }
        "push" => dangerous("`git push` publishes to a remote"),
        "rm" => dangerous("`git rm` deletes files"),
        "difftool" | "mergetool" => dangerous(format!("`git {sub}` runs an external tool")),
        _ => dangerous(format!("`git {sub}` is not known to be read-only")),
    }
}

/// The `KEY=VALUE` settings of `git -c` and `--config-env` among git's
/// own options.
fn config_settings(global: &[Word]) -> impl Iterator<Item = &str> {
    let mut iter = global.iter().map(Word::text);
    std::iter::from_fn(move || {
        while let Some(t) = iter.next() {
            match t {
                "-c" | "--config-env" => return iter.next(),
                _ => {
                    if let Some(v) = t
                        .strip_prefix("--config-env=")
                        .or_else(|| t.strip_prefix("-c").filter(|v| !v.is_empty()))
                    {
                        return Some(v);
                    }
                }
            }
        }
        None
    })
}

fn reads_rest(name: &str, spec: &Spec, args: &[Word]) -> Judgement {
    match read_with(name, spec, args) {
        Ok(()) => safe(format!("`{name}` only reads")),
        Err(j) => j,
    }
}

/// Whether any of `spellings` is among the options (a short letter also in
/// a cluster: `-fd` has `-f`).
fn has(args: &[Word], spellings: &[&str]) -> bool {
    args.iter()
        .map(Word::text)
        .take_while(|t| *t != "--")
        .any(|t| {
            spellings.iter().any(|s| {
                if s.starts_with("--") {
                    t.split_once('=').map_or(t, |(n, _)| n) == *s
                } else {
                    let c = s.trim_start_matches('-');
                    t.starts_with('-')
                        && !t.starts_with("--")
                        && t.get(1..).is_some_and(|cl| cl.contains(c))
                }
            })
        })
}

/// `git branch` and `git tag`: listing reads; a name without `--list`
/// creates one.
fn listing(name: &str, spec: &Spec, args: &[Word], what: &str) -> Judgement {
    let scanned: Scanned<'_> = match scan(name, spec, args) {
        Ok(s) => s,
        Err(j) => return j,
    };
    match scanned.operands.first() {
        Some(operand) if !scanned.has(&["--list"]) => dangerous(format!(
            "`git {what} {}` creates a {what}",
            short(operand.raw())
        )),
        _ => safe(format!("`git {what}` (listing) only reads")),
    }
}

fn remote(args: &[Word]) -> Judgement {
    let texts: Vec<&str> = args.iter().map(Word::text).collect();
    match texts.as_slice() {
        [] | ["-v" | "--verbose"] => safe("`git remote` (listing) only reads"),
        ["get-url", rest @ ..]
            if rest
                .iter()
                .all(|t| !t.starts_with('-') || matches!(*t, "--push" | "--all")) =>
        {
            safe("`git remote get-url` only reads")
        }
        ["show", "-n", ..] => safe("`git remote show -n` only reads"),
        ["show", ..] => dangerous("`git remote show` contacts the remote"),
        [action, ..] => dangerous(format!(
            "`git remote {}` changes remotes or contacts them",
            short(action)
        )),
    }
}

fn config(args: &[Word]) -> Judgement {
    let scanned = match scan("git config", &CONFIG, args) {
        Ok(s) => s,
        Err(j) => return j,
    };
    let reading = scanned.has(&[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "--get-color",
        "--get-colorbool",
    ]);
    let operands: Vec<&str> = scanned.operands.iter().map(|w| w.text()).collect();
    let reads = reading
        || matches!(operands.as_slice(), ["get" | "list", ..] | [_])
            && !matches!(
                operands.first(),
                Some(&("set" | "unset" | "edit" | "rename-section" | "remove-section"))
            );
    if reads {
        safe("`git config --get` only reads")
    } else {
        dangerous("`git config` changes settings, some of which run programs")
    }
}

fn stash(args: &[Word]) -> Judgement {
    let rest = args.get(1..).unwrap_or_default();
    match args.first().map(Word::text) {
        Some("list") => reads_rest("git stash list", &LOG, rest),
        Some("show") => reads_rest("git stash show", &STASH_SHOW, rest),
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
        Some(action) => dangerous(format!(
            "`git stash {}` can lose stashed changes",
            short(action)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_shell::options::validate;

    #[test]
    fn every_table_is_valid() {
        let all: &[(&str, &Spec)] = &[
            ("global", &GLOBAL),
            ("log", &LOG),
            ("diff", &DIFF),
            ("diff-tree", &DIFF_PLUMBING),
            ("status", &STATUS),
            ("blame", &BLAME),
            ("rev-parse", &REV_PARSE),
            ("ls-files", &LS_FILES),
            ("grep", &GREP),
            ("describe", &DESCRIBE),
            ("branch", &BRANCH),
            ("tag", &TAG),
            ("config", &CONFIG),
            ("clean", &CLEAN),
            ("ls-tree", &LS_TREE),
            ("cat-file", &CAT_FILE),
            ("shortlog", &SHORTLOG),
            ("for-each-ref", &FOR_EACH_REF),
            ("show-ref", &SHOW_REF),
            ("small", &SMALL),
            ("show-branch", &SHOW_BRANCH),
            ("range-diff", &RANGE_DIFF),
            ("stash show", &STASH_SHOW),
        ];
        for (name, spec) in all {
            assert_eq!(validate(spec), Ok(()), "{name}");
        }
    }
}
