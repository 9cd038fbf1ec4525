//! A tiny deterministic PRNG (splitmix64), so that a seed printed by a failing run
//! regenerates exactly the same cases on any machine, with no dependency.

pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// An independent stream per case: case `n` of seed `s` can be regenerated alone
    /// (PERMAUDIT_CONFORMANCE_ONLY) without generating cases 0..n first.
    pub fn for_case(seed: u64, stream: u64, index: u64) -> Self {
        let mut r = Rng::new(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let skip = r.next_u64();
        Rng::new(skip ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0). The modulo bias is irrelevant for test generation.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p` percent.
    pub fn percent(&mut self, p: u32) -> bool {
        (self.next_u64() % 100) < u64::from(p)
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    pub fn pick_ref<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}
