//! Shared by the integration tests: the model of the contract
//! (`tests/contract_model`, shared with the fuzz targets), and what only the
//! tests need: reading a stream cut at given offsets, and a small
//! deterministic random generator.

#![allow(dead_code)]

#[path = "../contract_model/mod.rs"]
mod contract_model;

pub use contract_model::*;

/// Feeds `stream` cut at `cuts` (sorted offsets), taking items after every
/// feed, then finishes: all the items, in order.
pub fn read_chunked(s: Settings, stream: &[u8], cuts: &[usize]) -> Vec<Item> {
    let mut r = reader(s);
    let mut items = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        let cut = cut.clamp(from, stream.len());
        r.feed(&stream[from..cut]).unwrap();
        items.extend(drain(&mut r));
        from = cut;
    }
    r.finish().unwrap();
    items.extend(drain(&mut r));
    items
}

/// SplitMix64: a small deterministic generator, so that test data and
/// chunkings are the same on every run.
pub struct Rng(pub u64);

impl Rng {
    /// A generator seeded from a name and a run number.
    pub fn named(name: &str, run: u64) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        Rng(h ^ run.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `per_mille`/1000.
    pub fn chance(&mut self, per_mille: usize) -> bool {
        self.below(1000) < per_mille
    }
}
