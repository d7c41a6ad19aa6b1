//! xorshift64*: deterministic pseudo-random numbers without a dependency,
//! for the generated-input tests of several crates (included with
//! `#[path]`, as `toolgate-command/tests/common/safe_rows.rs` is).

/// The generator; the field is its state (the seed, nonzero).
pub(crate) struct Rng(pub(crate) u64);

#[allow(dead_code, reason = "each including test uses a part")]
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
}
