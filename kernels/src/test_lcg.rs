//! The seeded generator the unit tests draw their rows, scores and lists from (Knuth's
//! MMIX linear congruential step): one sequence per seed, whatever the machine.

/// A generator at `Lcg(seed)`; each draw steps it once.
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    /// The next state.
    pub(crate) fn step(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// A number below `bound` (from the state's high bits).
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        (self.step() >> 33) % bound
    }

    /// A value in [-0.5, 0.5) (24 bits of the state).
    pub(crate) fn centred(&mut self) -> f32 {
        ((self.step() >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }
}
