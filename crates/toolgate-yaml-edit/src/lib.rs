//! Small edits of a block-style YAML file's text that keep its comments
//! and layout: append to or remove from a list, set an entry of a mapping,
//! two levels down (`confirmation.rules`, `ui.permissions`).
//!
//! Each edit returns `None` when the text is not in a shape it edits with
//! certainty (flow collections, values on the key's line, odd
//! indentation). A caller must check that the edited text parses to the
//! value it expects and rewrite the whole file otherwise (toolgate-host's
//! `UserRules::save` does): a wrong edit can cost the comments, never the
//! content.
//!
//! A crate of its own because it is a text algorithm with no knowledge of
//! toolgate's configuration, tested (and fuzzable) on its own.

/// One line: its indentation and its text after it.
struct Line<'a> {
    indent: usize,
    body: &'a str,
}

impl Line<'_> {
    /// Not blank and not a comment.
    fn significant(&self) -> bool {
        !self.body.is_empty() && !self.body.starts_with('#')
    }

    /// Whether the line is `key:` with nothing after it but a comment.
    fn is_bare_key(&self, key: &str) -> bool {
        self.body
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(" #"))
    }

    fn is_item(&self) -> bool {
        self.body == "-" || self.body.starts_with("- ")
    }
}

fn lines(text: &str) -> Vec<Line<'_>> {
    text.lines()
        .map(|l| {
            let body = l.trim_start_matches(' ');
            Line {
                indent: l.len() - body.len(),
                body: body.trim_end(),
            }
        })
        .collect()
}

/// Where `section.key` stands in the text.
enum Place {
    /// No `section:` at the top level.
    NoSection,
    /// `section:` at `line`, without `key`; its children are indented by
    /// `indent`.
    NoKey { line: usize, indent: usize },
    /// `key:` at `line`, indented by `indent`; its block's content is the
    /// significant lines in `first..end` (`first == end`: empty).
    Key {
        line: usize,
        indent: usize,
        first: usize,
        end: usize,
    },
}

/// Finds `section.key`; `None` when the text has a shape not edited here
/// (a tab, a value on the section's or key's line, a section twice).
fn find(text: &str, section: &str, key: &str) -> Option<Place> {
    if text.contains('\t') || text.contains('\r') {
        return None;
    }
    let lines = lines(text);
    // One document only: markers and directives are left to a rewrite.
    if lines.iter().any(|l| {
        l.indent == 0
            && (l.body.starts_with("---") || l.body.starts_with("...") || l.body.starts_with('%'))
    }) {
        return None;
    }
    let tops: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].indent == 0 && lines[i].significant())
        .collect();
    let mut found = tops.iter().filter(|&&i| {
        lines[i].body.starts_with(section) && lines[i].body[section.len()..].starts_with(':')
    });
    let Some(&start) = found.next() else {
        return Some(Place::NoSection);
    };
    if found.next().is_some() || !lines[start].is_bare_key(section) {
        return None;
    }
    let end = tops
        .iter()
        .copied()
        .find(|&i| i > start)
        .unwrap_or(lines.len());
    let children: Vec<usize> = (start + 1..end)
        .filter(|&i| lines[i].significant())
        .collect();
    let Some(&first_child) = children.first() else {
        return Some(Place::NoKey {
            line: start,
            indent: 2,
        });
    };
    let indent = lines[first_child].indent;
    let mut keys = children
        .iter()
        .filter(|&&i| lines[i].indent == indent && lines[i].body.starts_with(key))
        .filter(|&&i| lines[i].body[key.len()..].starts_with(':'));
    let Some(&line) = keys.next() else {
        return Some(Place::NoKey {
            line: start,
            indent,
        });
    };
    if keys.next().is_some() || !lines[line].is_bare_key(key) {
        return None;
    }
    // The key's block: the lines after it that are indented more, or list
    // items at its own indentation.
    let mut first = line + 1;
    let mut last = line;
    let mut block_indent = None;
    for (i, l) in lines.iter().enumerate().take(end).skip(line + 1) {
        if !l.significant() {
            continue;
        }
        let within = match block_indent {
            None => l.indent > indent || (l.indent == indent && l.is_item()),
            Some(b) => l.indent > b || (l.indent == b && (l.is_item() || b > indent)),
        };
        if !within {
            break;
        }
        if block_indent.is_none() {
            block_indent = Some(l.indent);
            first = i;
        }
        last = i;
    }
    Some(Place::Key {
        line,
        indent,
        first: if block_indent.is_some() {
            first
        } else {
            line + 1
        },
        end: last + 1,
    })
}

fn join(mut out: Vec<String>) -> String {
    let mut text = std::mem::take(&mut out).join("\n");
    text.push('\n');
    text
}

fn owned(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

/// Adds `key:` holding the one line `child` where `find` found no key:
/// under `section:`, or in a new `section:` at the end.
fn add_key(out: &mut Vec<String>, place: &Place, section: &str, key: &str, child: &str) {
    match *place {
        Place::NoSection => {
            out.push(format!("{section}:"));
            out.push(format!("  {key}:"));
            out.push(format!("    {child}"));
        }
        Place::NoKey { line, indent } => {
            let pad = " ".repeat(indent);
            out.insert(line + 1, format!("{pad}{key}:"));
            out.insert(line + 2, format!("{pad}  {child}"));
        }
        Place::Key { .. } => {}
    }
}

/// `text` with `item` (one line of flow YAML) appended to the list at
/// `section.key`, created if missing.
pub fn append_item(text: &str, section: &str, key: &str, item: &str) -> Option<String> {
    let mut out = owned(text);
    match find(text, section, key)? {
        place @ (Place::NoSection | Place::NoKey { .. }) => {
            add_key(&mut out, &place, section, key, &format!("- {item}"));
        }
        Place::Key {
            line,
            indent,
            first,
            end,
        } => {
            let lines = lines(text);
            let item_indent = if first < end {
                let l = &lines[first];
                if !l.is_item() {
                    return None;
                }
                l.indent
            } else {
                indent + 2
            };
            let at = if first < end { end } else { line + 1 };
            out.insert(at, format!("{}- {item}", " ".repeat(item_indent)));
        }
    }
    Some(join(out))
}

/// `text` with item `index` (from 0) of the list at `section.key`
/// removed; the last item leaves `key: []`.
pub fn remove_item(text: &str, section: &str, key: &str, index: usize) -> Option<String> {
    let Place::Key {
        line,
        indent,
        first,
        end,
    } = find(text, section, key)?
    else {
        return None;
    };
    let lines = lines(text);
    if first >= end || !lines[first].is_item() {
        return None;
    }
    let item_indent = lines[first].indent;
    let starts: Vec<usize> = (first..end)
        .filter(|&i| lines[i].indent == item_indent && lines[i].is_item())
        .collect();
    let from = *starts.get(index)?;
    let to = starts.get(index + 1).copied().unwrap_or(end);
    let mut out = owned(text);
    out.drain(from..to);
    if starts.len() == 1 {
        out[line] = format!("{}{key}: []", " ".repeat(indent));
    }
    Some(join(out))
}

/// `text` with `name: value` set in the mapping at `section.key`
/// (replacing the entry's line, or added at the mapping's end). `value` is
/// one line of flow YAML; `name` is written plain when it is a plain word,
/// else quoted.
pub fn set_entry(text: &str, section: &str, key: &str, name: &str, value: &str) -> Option<String> {
    let quoted = serde_json::to_string(name).ok()?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let written = if plain { name } else { quoted.as_str() };
    let mut out = owned(text);
    match find(text, section, key)? {
        place @ (Place::NoSection | Place::NoKey { .. }) => {
            add_key(
                &mut out,
                &place,
                section,
                key,
                &format!("{written}: {value}"),
            );
        }
        Place::Key {
            line,
            indent,
            first,
            end,
        } => {
            let lines = lines(text);
            let entry_indent = if first < end {
                lines[first].indent
            } else {
                indent + 2
            };
            let pad = " ".repeat(entry_indent);
            let existing = (first..end).find(|&i| {
                lines[i].indent == entry_indent
                    && [name, quoted.as_str()]
                        .iter()
                        .any(|n| lines[i].body.starts_with(&format!("{n}:")))
            });
            let entry = format!("{pad}{written}: {value}");
            match existing {
                Some(i) => out[i] = entry,
                None if first < end => out.insert(end, entry),
                None => out.insert(line + 1, entry),
            }
        }
    }
    Some(join(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> serde_yaml_ng::Value {
        serde_yaml_ng::from_str(text).unwrap()
    }

    #[test]
    fn appending_keeps_comments_and_lands_in_the_list() {
        let cases: &[(&str, &str)] = &[
            (
                "# my config\nllm:\n  model: m # the model\nconfirmation:\n  # rules I trust\n  rules:\n    - {tool: a, decision: allow}  # first\n\n# tail\n",
                "confirmation: {rules: [{tool: a, decision: allow}, {tool: b, decision: ask}]}\nllm: {model: m}\n",
            ),
            (
                "confirmation:\n  mode: yolo\n  rules:\n  - tool: a\n    decision: allow\n",
                "confirmation: {mode: yolo, rules: [{tool: a, decision: allow}, {tool: b, decision: ask}]}\n",
            ),
            (
                "confirmation:\n  mode: yolo # fast\n",
                "confirmation: {mode: yolo, rules: [{tool: b, decision: ask}]}\n",
            ),
            (
                "# only a comment\n",
                "confirmation: {rules: [{tool: b, decision: ask}]}\n",
            ),
            (
                "confirmation:\n  rules:\n  # none yet\nllm:\n  model: m\n",
                "confirmation: {rules: [{tool: b, decision: ask}]}\nllm: {model: m}\n",
            ),
        ];
        for (text, expected) in cases {
            let out = append_item(text, "confirmation", "rules", "{tool: b, decision: ask}")
                .unwrap_or_else(|| panic!("no edit of {text:?}"));
            assert_eq!(yaml(&out), yaml(expected), "{text:?} became {out:?}");
            for comment in text.lines().filter_map(|l| l.find('#').map(|at| &l[at..])) {
                assert!(out.contains(comment), "{comment:?} lost in {out:?}");
            }
        }
    }

    #[test]
    fn shapes_not_edited_here_are_left_to_a_rewrite() {
        for text in [
            "confirmation: {rules: []}\n",
            "confirmation:\n  rules: []\n",
            "confirmation:\n\trules:\n",
            "---\nconfirmation:\n  rules:\n",
            "confirmation:\n  rules:\n    - a\nconfirmation:\n  mode: yolo\n",
        ] {
            assert_eq!(
                append_item(text, "confirmation", "rules", "x"),
                None,
                "{text:?}"
            );
        }
    }

    #[test]
    fn removing_an_item_keeps_the_rest() {
        let text = "confirmation:\n  rules:\n    # a\n    - tool: a\n      decision: allow\n    - {tool: b, decision: ask} # b\n    - {tool: c, decision: deny}\nllm:\n  model: m\n";
        let out = remove_item(text, "confirmation", "rules", 0).unwrap();
        assert_eq!(
            yaml(&out),
            yaml(
                "confirmation: {rules: [{tool: b, decision: ask}, {tool: c, decision: deny}]}\nllm: {model: m}\n"
            )
        );
        assert!(out.contains("# b"));
        let out = remove_item(&out, "confirmation", "rules", 1).unwrap();
        assert_eq!(
            yaml(&out),
            yaml("confirmation: {rules: [{tool: b, decision: ask}]}\nllm: {model: m}\n")
        );
        let out = remove_item(&out, "confirmation", "rules", 0).unwrap();
        assert_eq!(
            yaml(&out),
            yaml("confirmation: {rules: []}\nllm: {model: m}\n")
        );
        assert_eq!(remove_item(&out, "confirmation", "rules", 0), None);
    }

    #[test]
    fn entries_are_set_or_added() {
        let text = "# ui\nui:\n  permissions:\n    plan: full # read-only anyway\n";
        let out = set_entry(text, "ui", "permissions", "build", "\"full\"").unwrap();
        assert_eq!(
            yaml(&out),
            yaml("ui: {permissions: {plan: full, build: full}}")
        );
        let out = set_entry(&out, "ui", "permissions", "plan", "\"sandbox\"").unwrap();
        assert_eq!(
            yaml(&out),
            yaml("ui: {permissions: {plan: sandbox, build: full}}")
        );
        assert!(out.starts_with("# ui\n"));
        let out = set_entry("llm:\n  model: m\n", "ui", "permissions", "build", "full").unwrap();
        assert_eq!(
            yaml(&out),
            yaml("llm: {model: m}\nui: {permissions: {build: full}}")
        );
    }

    /// Every text of up to four lines from a vocabulary of awkward lines
    /// (about 100,000 texts): no edit panics. (Whether an edit is right is
    /// the caller's check: it uses an edited text only when it reads back
    /// as exactly the intended value.)
    #[test]
    fn no_text_of_awkward_lines_makes_an_edit_panic() {
        const LINES: &[&str] = &[
            "confirmation:",
            "  rules:",
            "  - {tool: a, decision: allow}",
            "    - x",
            "rules: []",
            "  # c",
            "",
            "ui:",
            "  permissions:",
            "    build: full",
            "---",
            "confirmation: {}",
            " -",
            "é: ü",
            "\t",
            "  rules: # c",
            "confirmation:x",
            "- ",
        ];
        let n = LINES.len();
        let mut texts = 0;
        for len in 0..=4_u32 {
            for mut code in 0..n.pow(len) {
                let mut text = String::new();
                for _ in 0..len {
                    text.push_str(LINES[code % n]);
                    text.push('\n');
                    code /= n;
                }
                texts += 1;
                let _ = append_item(&text, "confirmation", "rules", "{tool: b, decision: ask}");
                let _ = remove_item(&text, "confirmation", "rules", 0);
                let _ = set_entry(&text, "ui", "permissions", "build", "\"full\"");
            }
        }
        assert!(texts > 100_000, "{texts}");
    }
}
