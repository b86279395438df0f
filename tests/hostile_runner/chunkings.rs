//! Chunkings: how one run cuts a case's input into feeds (a `Plan`), and
//! every plan a case gets: whole, byte by byte, every cut (small inputs),
//! every pair of cuts (tiny ones) and deterministic random chunkings.

use crate::catalogue::Case;
use crate::common::Rng;

/// How one run feeds the input: cut at `cuts` (sorted offsets), taking the
/// items after every feed, or (lazy) only after some feeds so that items queue up.
#[derive(Debug, Clone)]
pub struct Plan {
    pub label: String,
    pub cuts: Vec<usize>,
    pub lazy: bool,
}

/// The pieces of `input` cut at `cuts` (empty pieces included).
pub fn chunks<'a>(input: &'a [u8], cuts: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut from = 0;
    cuts.iter()
        .copied()
        .chain(std::iter::once(input.len()))
        .map(move |cut| {
            let cut = cut.clamp(from, input.len());
            let piece = &input[from..cut];
            from = cut;
            piece
        })
}

/// Whether a run takes the items after feed `feed_index` (a lazy one, after every third).
pub fn take_now(plan: &Plan, feed_index: usize) -> bool {
    !plan.lazy || feed_index % 3 == 2
}

/// Inputs up to this size are cut at every point (less in debug builds, which are ~20x slower).
const SMALL: usize = if cfg!(debug_assertions) { 1024 } else { 4096 };
/// Inputs up to this size are cut at every pair of points.
const TINY: usize = 40;
/// Inputs up to this size are also read byte by byte.
const BYTE_BY_BYTE_MAX: usize = if cfg!(debug_assertions) {
    256 << 10
} else {
    4 << 20
};
/// Random chunkings per case: 300, fewer for big inputs (about `RANDOM_BYTES`
/// in all), at least `MIN_RANDOM_RUNS`.
const RANDOM_RUNS: usize = 300;
const RANDOM_BYTES: usize = if cfg!(debug_assertions) {
    8 << 20
} else {
    128 << 20
};
const MIN_RANDOM_RUNS: usize = if cfg!(debug_assertions) { 1 } else { 3 };
/// A random chunking has at most about this many feeds.
const MAX_FEEDS: usize = 100_000;

fn random_cuts(len: usize, rng: &mut Rng) -> Vec<usize> {
    // Chunk sizes of one scale per run: tiny, small, page-sized, or a large share of the input.
    let hi = match rng.below(4) {
        0 => 8,
        1 => 100,
        2 => 8192,
        _ => len / 3 + 1,
    }
    .max(2 * len / MAX_FEEDS + 1);
    let mut cuts = Vec::new();
    let mut at = 0;
    loop {
        // Now and then a single byte, whatever the scale.
        at += if rng.below(16) == 0 {
            1
        } else {
            1 + rng.below(hi)
        };
        if at >= len {
            return cuts;
        }
        cuts.push(at);
    }
}

/// Every plan `case` gets, in order (the random ones seeded by the case's name).
pub fn plans(case: &Case) -> Vec<Plan> {
    let len = case.input.len();
    let mut plans = vec![Plan {
        label: "whole".into(),
        cuts: vec![],
        lazy: false,
    }];
    if len <= BYTE_BY_BYTE_MAX {
        for lazy in [false, true] {
            plans.push(Plan {
                label: format!("byte by byte{}", if lazy { ", lazy" } else { "" }),
                cuts: (1..len).collect(),
                lazy,
            });
        }
    }
    if len <= SMALL {
        for a in 0..=len {
            plans.push(Plan {
                label: format!("cut at {a}"),
                cuts: vec![a],
                lazy: false,
            });
        }
    }
    if len <= TINY {
        for a in 1..len {
            for b in a + 1..len {
                plans.push(Plan {
                    label: format!("cuts at {a}, {b}"),
                    cuts: vec![a, b],
                    lazy: false,
                });
            }
        }
    }
    let runs = (RANDOM_BYTES / len.max(1)).clamp(MIN_RANDOM_RUNS, RANDOM_RUNS);
    for run in 0..runs as u64 {
        let mut rng = Rng::named(&case.name, run);
        let cuts = random_cuts(len, &mut rng);
        plans.push(Plan {
            label: format!("random chunking #{run} ({} feeds)", cuts.len() + 1),
            cuts,
            lazy: rng.below(3) == 0,
        });
    }
    plans
}
