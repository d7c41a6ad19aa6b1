//! The contact book of `phone_call`: a JSON file, replaced atomically,
//! and the phone numbers in it.

use std::fmt;
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The longest contact name, in characters.
const MAX_NAME_CHARS: usize = 100;

/// Normalizes a phone number to E.164 (`+` and 8 to 15 digits, the first
/// not 0).
///
/// # Rules
///
/// 1. Spaces, dashes, dots and parentheses are dropped
///    (`+54 9 (11) 1234-5678` → `+5491112345678`).
/// 2. A leading `00` (the international prefix) becomes `+`.
/// 3. A number without the country code (no `+`) is refused: toolgate
///    cannot know the country.
pub fn normalize_number(text: &str) -> Result<String, String> {
    let compact: String = text
        .trim()
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')' | '\u{a0}'))
        .collect();
    let compact = match compact.strip_prefix("00") {
        Some(rest) => format!("+{rest}"),
        None => compact,
    };
    let Some(digits) = compact.strip_prefix('+') else {
        return Err(format!(
            "`{}` has no country code; write it in international form, like +34600111222",
            text.trim()
        ));
    };
    let valid = (8..=15).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    if valid {
        Ok(compact)
    } else {
        Err(format!(
            "`{}` is not a phone number in international form (+ then 8 to 15 digits, like +34600111222)",
            text.trim()
        ))
    }
}

/// One contact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    /// The name, as first saved.
    pub name: String,
    /// The number, in E.164 form.
    pub number: String,
}

/// The contacts file.
///
/// # Wire format
///
/// `{"contacts": [{"name": "Mom", "number": "+5491112345678"}, …]}`,
/// sorted by name (case-insensitively), pretty-printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactBook {
    /// The contacts.
    pub contacts: Vec<Contact>,
}

impl ContactBook {
    /// The contact named `name`, case-insensitively.
    pub fn find(&self, name: &str) -> Option<&Contact> {
        let name = name.trim();
        self.contacts
            .iter()
            .find(|c| c.name.to_lowercase() == name.to_lowercase())
    }

    pub(crate) fn names(&self) -> String {
        if self.contacts.is_empty() {
            return "none yet".to_owned();
        }
        self.contacts
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Adds a contact, or changes the number of the one with that name.
    /// Returns the number it replaced.
    pub(crate) fn upsert(&mut self, name: &str, number: String) -> Result<Option<String>, String> {
        let name = name.trim();
        if name.is_empty() {
            return Err("add_contact needs `contact`: the person's name".to_owned());
        }
        if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
            return Err(format!(
                "a contact name is one line of at most {MAX_NAME_CHARS} characters"
            ));
        }
        let lower = name.to_lowercase();
        let old = if let Some(existing) = self
            .contacts
            .iter_mut()
            .find(|c| c.name.to_lowercase() == lower)
        {
            Some(std::mem::replace(&mut existing.number, number))
        } else {
            self.contacts.push(Contact {
                name: name.to_owned(),
                number,
            });
            None
        };
        self.contacts.sort_by_key(|c| c.name.to_lowercase());
        Ok(old)
    }

    pub(crate) fn remove(&mut self, name: &str) -> Result<Contact, String> {
        let name = name.trim();
        let at = self
            .contacts
            .iter()
            .position(|c| c.name.to_lowercase() == name.to_lowercase())
            .ok_or_else(|| {
                format!(
                    "no contact is named \"{name}\"; saved contacts: {}",
                    self.names()
                )
            })?;
        Ok(self.contacts.remove(at))
    }

    pub(crate) fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_owned());
        text.push('\n');
        text
    }
}

/// Reads the contact book: empty when the file does not exist; an error
/// (never an empty book) when it cannot be read or parsed, so that a
/// damaged file is not overwritten.
pub(crate) fn read_book(path: &Path) -> Result<(ContactBook, Option<String>), String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(|book| (book, Some(text)))
            .map_err(|e| {
                format!(
                    "the contacts file {} is not valid ({e}); fix or remove it",
                    path.display()
                )
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((ContactBook::default(), None)),
        Err(e) => Err(format!(
            "cannot read the contacts file {}: {e}",
            path.display()
        )),
    }
}

/// Writes the contact book atomically: a temporary file in the same
/// directory, flushed to disk, readable by the owner only, then renamed
/// over the old one. A reader sees the old book or the new one, never a
/// part; a crash leaves the old one.
pub(crate) fn write_book(path: &Path, book: &ContactBook) -> Result<(), String> {
    let fail =
        |e: &dyn fmt::Display| format!("cannot write the contacts file {}: {e}", path.display());
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => dir,
        None => Path::new("."),
    };
    toolgate_core::private_files::create_dir_all(dir).map_err(|e| fail(&e))?;
    let mut temp = tempfile::Builder::new()
        .prefix(".contacts-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| fail(&e))?;
    temp.write_all(book.to_text().as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| fail(&e))?;
    // tempfile creates the file 0600 on Unix: phone numbers are personal.
    temp.persist(path).map_err(|e| fail(&e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_normalized_to_e164_or_refused() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("+34600111222", Ok("+34600111222")),
            ("+54 9 11 1234-5678", Ok("+5491112345678")),
            (" +1 (555) 010.0000 ", Ok("+15550100000")),
            ("0034600111222", Ok("+34600111222")),
            ("+123456789012345", Ok("+123456789012345")),
            ("600111222", Err("has no country code")),
            ("+1234567", Err("not a phone number")),
            ("+1234567890123456", Err("not a phone number")),
            ("+0034600111222", Err("not a phone number")),
            ("+34 600 ABC 222", Err("not a phone number")),
            ("+34600111222;ext=1", Err("not a phone number")),
            ("", Err("has no country code")),
            ("+", Err("not a phone number")),
        ];
        for (text, expected) in cases {
            match (normalize_number(text), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got, *want, "{text:?}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{text:?}: {got}"),
                (got, want) => panic!("{text:?}: expected {want:?}, got {got:?}"),
            }
        }
    }
}
