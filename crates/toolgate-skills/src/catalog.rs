//! The skills block of the system prompt.

use std::fmt::Write as _;

use crate::skill::Skill;

/// The instruction that opens the catalog.
pub const CATALOG_INSTRUCTION: &str = "Skills hold instructions for specific jobs. \
When a task matches one, call `skill` with its name first.";

/// The most characters of a description shown in the catalog.
pub const CATALOG_DESCRIPTION_CHARS: usize = 200;

/// The system-prompt block that tells the model which skills exist:
/// [`CATALOG_INSTRUCTION`], then one line per skill, `- name: description`,
/// in the order given.
///
/// Only names and descriptions go in: a body reaches the model when the
/// skill is activated, never before. A description is put on one line
/// (runs of whitespace become one space) and cut to at most
/// [`CATALOG_DESCRIPTION_CHARS`] characters, ending in `…` when cut, so that one long description
/// cannot crowd a small model's context. No skills, no block: the result is
/// empty.
///
/// ```
/// use toolgate_skills::{SkillFile, Skill, SkillOrigin, catalog_block};
///
/// # fn main() -> Result<(), toolgate_skills::SkillError> {
/// let text = "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nSecret steps.\n";
/// let file = SkillFile::parse("skills/pdf/SKILL.md".as_ref(), text)?;
/// let block = catalog_block(&[Skill::from_file(file, SkillOrigin::User)]);
/// assert!(block.ends_with("\n- pdf: Fill in PDF forms.\n"));
/// assert!(!block.contains("Secret steps"));
/// # Ok(())
/// # }
/// ```
pub fn catalog_block(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut block = format!("## Skills\n{CATALOG_INSTRUCTION}\n");
    for skill in skills {
        let _ = writeln!(
            block,
            "- {}: {}",
            skill.name,
            one_line(&skill.description, CATALOG_DESCRIPTION_CHARS)
        );
    }
    block
}

/// `text` on one line, cut to at most `max` characters (at a word's end
/// when one is near), the last an ellipsis.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let mut words = text.split_whitespace();
    let mut line = words.next().unwrap_or_default().to_owned();
    for word in words {
        line.push(' ');
        line.push_str(word);
    }
    if line.chars().count() <= max {
        return line;
    }
    // The ellipsis counts: the result is at most `max` characters.
    let cut = line
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(line.len(), |(at, _)| at);
    let kept = &line[..cut];
    // At a word's end when one is near.
    let kept = match kept.rfind(' ') {
        Some(space) if cut - space <= 30 => &kept[..space],
        _ => kept,
    };
    format!("{}…", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn descriptions_fit_on_one_line() {
        let cases = [
            ("short", 10, "short"),
            ("  spaced\n\tout  text ", 50, "spaced out text"),
            ("exactly10!", 10, "exactly10!"),
            ("eleven char", 10, "eleven…"),
            ("ten chars and more", 10, "ten…"),
            (
                "abcdefghijklmnopqrstuvwxyz0123456789abcdef more",
                40,
                "abcdefghijklmnopqrstuvwxyz0123456789abc…",
            ),
            ("ñandú ñandú", 5, "ñand…"),
            ("", 5, ""),
        ];
        for (text, max, expected) in cases {
            assert_eq!(one_line(text, max), expected, "{text:?}");
        }
    }
}
