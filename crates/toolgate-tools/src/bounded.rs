//! Results whose size does not depend on the input: the listing tools keep
//! only what they can show, however many names they walk past.
//!
//! A directory may hold millions of entries and a path may be 4 KiB long.
//! Collecting every name and sorting them afterwards would make toolgate's
//! own memory grow with whatever the workspace holds; a [`Shortlist`]
//! keeps the first entries in order as they stream by and only counts the
//! rest.

use std::collections::BTreeMap;

/// The most bytes of text a listing or search result holds (paths, lines
/// and separators; the closing notes come on top). Counts limit what a
/// model is shown; this limits what a result can weigh when the names or
/// lines are long.
pub(crate) const MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// How a note names [`MAX_OUTPUT_BYTES`]: `the 256 KiB output limit`.
pub(crate) fn output_limit() -> String {
    format!("the {} KiB output limit", MAX_OUTPUT_BYTES / 1024)
}

/// The first entries of a listing in key order, bounded in number and in
/// bytes, and how many were offered in all.
///
/// Entries may be offered in any order; keys are distinct (the paths of one
/// walk). Kept are the entries a listing shows that adds lines in key order
/// while it has fewer than `max_items` lines and fewer than `max_bytes`
/// bytes (a newline after each text): so the last line kept may cross
/// `max_bytes`, by at most its own length. Memory is bounded by the limits,
/// not by what was offered.
#[derive(Debug)]
pub(crate) struct Shortlist<K> {
    kept: BTreeMap<K, String>,
    /// Bytes of the kept texts, a newline each.
    bytes: usize,
    max_items: usize,
    max_bytes: usize,
    offered: usize,
}

impl<K: Ord> Shortlist<K> {
    /// An empty shortlist of at most `max_items` entries (at least one) and
    /// `max_bytes` bytes.
    pub(crate) fn new(max_items: usize, max_bytes: usize) -> Self {
        Self {
            kept: BTreeMap::new(),
            bytes: 0,
            max_items: max_items.max(1),
            max_bytes,
            offered: 0,
        }
    }

    /// Counts an entry, and keeps it if it is among the first.
    pub(crate) fn offer(&mut self, key: K, text: String) {
        self.offered += 1;
        if self.is_full()
            && self
                .kept
                .last_key_value()
                .is_some_and(|(last, _)| key > *last)
        {
            return;
        }
        self.bytes += text.len() + 1;
        if let Some(old) = self.kept.insert(key, text) {
            self.bytes -= old.len() + 1;
        }
        while self.kept.len() > 1 && self.over() {
            if let Some((_, text)) = self.kept.pop_last() {
                self.bytes -= text.len() + 1;
            }
        }
    }

    /// Whether no entry after the last kept one could be shown.
    fn is_full(&self) -> bool {
        self.kept.len() >= self.max_items || self.bytes >= self.max_bytes
    }

    /// Whether the last entry kept could not be shown: the listing was full
    /// before it.
    fn over(&self) -> bool {
        let last = self
            .kept
            .last_key_value()
            .map_or(0, |(_, text)| text.len() + 1);
        self.kept.len() > self.max_items || self.bytes - last >= self.max_bytes
    }

    /// How many entries were offered, kept or not.
    pub(crate) fn offered(&self) -> usize {
        self.offered
    }

    /// The kept texts, in key order.
    pub(crate) fn into_texts(self) -> Vec<String> {
        self.kept.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shortlist(max_items: usize, max_bytes: usize, names: &[&str]) -> (Vec<String>, usize) {
        let mut list = Shortlist::new(max_items, max_bytes);
        for name in names {
            list.offer((*name).to_owned(), (*name).to_owned());
        }
        let offered = list.offered();
        (list.into_texts(), offered)
    }

    #[test]
    fn keeps_the_first_in_order_within_both_limits() {
        // (max_items, max_bytes, offered, kept)
        let cases: &[(usize, usize, &[&str], &[&str])] = &[
            (3, 100, &["d", "b", "a", "c"], &["a", "b", "c"]),
            (10, 100, &["b", "a"], &["a", "b"]),
            (0, 100, &["b", "a"], &["a"]),
            // "aa\n" and "bb\n" are 6 bytes: full, nothing more shows.
            (10, 6, &["cc", "bb", "aa"], &["aa", "bb"]),
            // Lines are added while under the limit: "bb" crosses it.
            (10, 5, &["cc", "bb", "aa"], &["aa", "bb"]),
            (10, 4, &["cc", "bb", "aa"], &["aa", "bb"]),
            (10, 3, &["cc", "bb", "aa"], &["aa"]),
            // One entry alone over the limit is still kept.
            (10, 2, &["long", "zz"], &["long"]),
            (10, 2, &["zz", "long"], &["long"]),
        ];
        for (max_items, max_bytes, names, kept) in cases {
            let (texts, offered) = shortlist(*max_items, *max_bytes, names);
            assert_eq!(texts, *kept, "{max_items} {max_bytes} {names:?}");
            assert_eq!(offered, names.len(), "{names:?}");
        }
    }

    #[test]
    fn memory_does_not_grow_with_what_is_offered() {
        let mut list = Shortlist::new(5, 1000);
        for i in (0..100_000u32).rev() {
            list.offer(i, i.to_string());
            assert!(list.kept.len() <= 5);
        }
        assert_eq!(list.offered(), 100_000);
        assert_eq!(list.into_texts(), ["0", "1", "2", "3", "4"]);
    }
}
