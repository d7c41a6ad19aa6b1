//! A small TTL cache of tool outputs (seed 002's `TtlCache`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Outputs kept for `ttl`, at most `capacity` of them.
///
/// # Rules
///
/// 1. An entry is returned while younger than the TTL, never after; a TTL
///    of zero turns the cache off.
/// 2. When full, expired entries go first, then the oldest.
#[derive(Debug)]
pub(crate) struct TtlCache<V> {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<String, (Instant, V)>>,
}

impl<V: Clone> TtlCache<V> {
    pub(crate) fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            ttl,
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The entry for `key` stored less than the TTL before `now`.
    pub(crate) fn get(&self, key: &str, now: Instant) -> Option<V> {
        if self.ttl.is_zero() {
            return None;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match entries.get(key) {
            Some((stored, value)) if now.saturating_duration_since(*stored) < self.ttl => {
                Some(value.clone())
            }
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Stores `value` for `key` as of `now`.
    pub(crate) fn insert(&self, key: String, value: V, now: Instant) {
        if self.ttl.is_zero() || self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, (stored, _)| now.saturating_duration_since(*stored) < self.ttl);
            if entries.len() >= self.capacity
                && let Some(oldest) = entries
                    .iter()
                    .min_by_key(|(_, (stored, _))| *stored)
                    .map(|(k, _)| k.clone())
            {
                entries.remove(&oldest);
            }
        }
        entries.insert(key, (now, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_after_the_ttl() {
        let cache = TtlCache::new(Duration::from_secs(60), 10);
        let t0 = Instant::now();
        cache.insert("a".into(), 1, t0);
        // (seconds after storing, expected)
        let cases: &[(u64, Option<i32>)] = &[
            (0, Some(1)),
            (30, Some(1)),
            (59, Some(1)),
            (60, None),
            (61, None),
        ];
        for (after, expected) in cases {
            let cache = TtlCache::new(Duration::from_secs(60), 10);
            cache.insert("a".into(), 1, t0);
            assert_eq!(
                cache.get("a", t0 + Duration::from_secs(*after)),
                *expected,
                "{after}s"
            );
        }
        assert_eq!(cache.get("b", t0), None);
    }

    #[test]
    fn zero_ttl_is_off() {
        let cache = TtlCache::new(Duration::ZERO, 10);
        let now = Instant::now();
        cache.insert("a".into(), 1, now);
        assert_eq!(cache.get("a", now), None);
    }

    #[test]
    fn full_cache_drops_expired_then_oldest() {
        let cache = TtlCache::new(Duration::from_secs(100), 2);
        let t0 = Instant::now();
        let at = |s| t0 + Duration::from_secs(s);
        cache.insert("old".into(), 1, at(0));
        cache.insert("mid".into(), 2, at(10));
        cache.insert("new".into(), 3, at(20));
        assert_eq!(cache.get("old", at(20)), None);
        assert_eq!(cache.get("mid", at(20)), Some(2));
        assert_eq!(cache.get("new", at(20)), Some(3));
        // "mid" has expired by 115: it goes, and "new" stays.
        cache.insert("newest".into(), 4, at(115));
        assert_eq!(cache.get("new", at(115)), Some(3));
        assert_eq!(cache.get("newest", at(115)), Some(4));
        assert_eq!(cache.get("mid", at(50)), None);
    }
}
