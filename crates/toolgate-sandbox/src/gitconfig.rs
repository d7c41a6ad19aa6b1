//! The user's `~/.gitconfig`, without what can hold credentials.
//!
//! Sandboxed processes do not see the home directory, but git without the
//! user's name, aliases and `safe.directory` is a worse git. So they see a
//! sanitised copy.
//!
//! # Rules
//!
//! 1. Only sections in [`KEPT_SECTIONS`] are kept: identity, core
//!    behaviour, aliases, colours, the porcelain's defaults. Everything else
//!    goes — `credential` (helpers and stored usernames), `http` (extra
//!    headers carry `Authorization`), `include`/`includeIf` (they pull in
//!    other files), `sendemail` (SMTP passwords), tool-specific sections
//!    (`github`, `hub`, `gitlab`) that hold tokens.
//! 2. A `url` section is kept only when its URL carries no user information
//!    (`https://user:token@host/`).
//! 3. Any kept value that contains a URL with a password is dropped.
//! 4. Continuation lines (`\` at the end) go with the line they continue.

/// Sections kept from the user's git configuration.
pub const KEPT_SECTIONS: &[&str] = &[
    "user",
    "core",
    "init",
    "color",
    "alias",
    "pull",
    "push",
    "fetch",
    "merge",
    "diff",
    "rebase",
    "branch",
    "status",
    "log",
    "format",
    "advice",
    "safe",
    "filter",
    "lfs",
    "pager",
    "help",
    "commit",
    "tag",
    "submodule",
    "protocol",
    "rerere",
    "column",
    "grep",
    "interactive",
    "blame",
    "apply",
    "checkout",
    "clone",
    "gc",
    "pack",
    "transfer",
    "url",
];

/// Whether a text holds a URL with a password or token in it.
fn has_userinfo(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let rest = &text[at + 3..];
        let authority = rest
            .split(|c: char| c == '/' || c == '"' || c.is_whitespace())
            .next()
            .unwrap_or_default();
        authority.contains('@')
    })
}

/// The section name of a header line (`[url "…"]` → `url`), lower-case.
fn section_name(header: &str) -> String {
    let inner = header.trim_start_matches('[');
    inner
        .split(|c: char| c == ']' || c == '"' || c == '.' || c.is_whitespace())
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Sanitises the text of a git configuration file (see the [rules](self)).
pub fn sanitize(text: &str) -> String {
    let mut out = String::new();
    let mut keep = false;
    let mut continuing = false;
    let mut keep_line = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if continuing {
            if keep_line {
                out.push_str(line);
                out.push('\n');
            }
            continuing = line.ends_with('\\');
            continue;
        }
        if trimmed.starts_with('[') {
            let name = section_name(trimmed);
            keep = KEPT_SECTIONS.contains(&name.as_str()) && !has_userinfo(trimmed);
            // A header may carry a key on the same line: `[core] editor = x`.
            if keep {
                out.push_str(line);
                out.push('\n');
            }
            continuing = false;
            continue;
        }
        keep_line = keep && !has_userinfo(line);
        if keep_line {
            out.push_str(line);
            out.push('\n');
        }
        continuing = line.ends_with('\\');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_the_rest_stays() {
        let text = r#"[user]
	name = Ada
	email = ada@example.com
[credential]
	helper = store
[credential "https://github.com"]
	username = ada
[http]
	extraHeader = Authorization: Bearer sk-secret
[url "https://ada:ghp_token@github.com/"]
	insteadOf = https://github.com/
[url "git@github.com:"]
	insteadOf = gh:
[alias]
	lg = log --oneline \
	  --graph
	pushall = !git push https://ada:pw@example.com/x
[includeIf "gitdir:~/work/"]
	path = ~/work/.gitconfig
[github]
	token = ghp_x
[safe]
	directory = *
"#;
        let clean = sanitize(text);
        for kept in [
            "name = Ada",
            "email = ada@example.com",
            "[url \"git@github.com:\"]",
            "insteadOf = gh:",
            "lg = log --oneline \\",
            "--graph",
            "directory = *",
        ] {
            assert!(clean.contains(kept), "{kept} kept in:\n{clean}");
        }
        for gone in [
            "helper",
            "username",
            "extraHeader",
            "ghp_token",
            "pushall",
            "includeIf",
            "path = ~/work",
            "ghp_x",
            "sk-secret",
        ] {
            assert!(!clean.contains(gone), "{gone} dropped from:\n{clean}");
        }
    }
}
