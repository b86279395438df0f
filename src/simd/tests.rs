//! Every kernel of every level the CPU has, against a scalar reference:
//! every byte value in every lane, and the ends of texts. Levels the CPU
//! lacks are reported and skipped here (CI on a CPU that has them runs them).

use super::*;

/// The scalar reference of `Kernels::string_specials_*`.
fn scalar_specials(bytes: &[u8], non_ascii: bool, e2: bool) -> u64 {
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| {
            b == b'"' || b == b'\\' || b < 0x20 || (non_ascii && b >= 0x80) || (e2 && b == 0xE2)
        })
        .fold(0, |m, (k, _)| m | 1 << k)
}

/// Runs `check` at every level the CPU has; the levels run.
fn at_every_level<F: WithKernels<Output = ()> + Copy>(check: F) -> Vec<SimdLevel> {
    let run: Vec<SimdLevel> = SimdLevel::ALL_LEVELS
        .into_iter()
        .filter(|&level| dispatch_at(level, check).is_some())
        .collect();
    if !run.contains(&SimdLevel::Avx512) {
        println!("this CPU lacks some levels: only {run:?} were run");
    }
    assert!(run.contains(&SimdLevel::Portable));
    run
}

/// 64 bytes of `fill` with `b` in lane `lane`.
fn with_byte(fill: u8, lane: usize, b: u8) -> [u8; 64] {
    let mut run = [fill; 64];
    run[lane] = b;
    run
}

#[derive(Clone, Copy)]
struct EveryByteInEveryLane;
impl WithKernels for EveryByteInEveryLane {
    type Output = ();
    fn run<K: Kernels>(self, k: K) {
        // Miri runs the same code paths with fewer lanes and the bytes at
        // the edges of each class (it is slow).
        let lanes: Vec<usize> = if cfg!(miri) {
            vec![0, 15, 16, 63]
        } else {
            (0..64).collect()
        };
        let bytes: Vec<u8> = if cfg!(miri) {
            vec![
                0, 0x1F, 0x20, b'"', b'\\', b'a', 0x7F, 0x80, 0xE1, 0xE2, 0xE3, 0xFF,
            ]
        } else {
            (0..=255).collect()
        };
        for &b in &bytes {
            for &lane in &lanes {
                let run = with_byte(b'a', lane, b);
                let block: &[u8; 16] = run[lane / 16 * 16..][..16].try_into().unwrap();
                for (non_ascii, e2) in [(false, false), (false, true), (true, false)] {
                    let want = scalar_specials(&run, non_ascii, e2);
                    let got = if non_ascii {
                        k.string_specials_64::<true>(&run, e2)
                    } else {
                        k.string_specials_64::<false>(&run, e2)
                    };
                    assert_eq!(got, want, "byte {b:#04x} in lane {lane}");
                    let want16 = scalar_specials(block, non_ascii, e2) as u32;
                    let got16 = if non_ascii {
                        k.string_specials_16::<true>(block, e2)
                    } else {
                        k.string_specials_16::<false>(block, e2)
                    };
                    assert_eq!(got16, want16, "byte {b:#04x} in lane {lane} of 16");
                }
            }
        }
    }
}

#[test]
fn string_specials_every_byte_value_in_every_lane() {
    at_every_level(EveryByteInEveryLane);
}

#[derive(Clone, Copy)]
struct MixedRuns;
impl WithKernels for MixedRuns {
    type Output = ();
    fn run<K: Kernels>(self, k: K) {
        // The runs repeat every 12 seeds (`seed * 13 % 12 == seed % 12`):
        // Miri, which is slow, runs each distinct one once.
        let seeds = if cfg!(miri) { 12 } else { 64usize };
        for seed in 0..seeds {
            let run: [u8; 64] = std::array::from_fn(|j| {
                [
                    b'a', b'"', 0xE2, b'\\', 0x05, 0xC3, b'z', 0x1F, 0x20, 0x7F, 0x80, 0xFF,
                ][(j * 7 + seed * 13) % 12]
            });
            assert_eq!(
                k.string_specials_64::<false>(&run, false),
                scalar_specials(&run, false, false)
            );
            assert_eq!(
                k.string_specials_64::<false>(&run, true),
                scalar_specials(&run, false, true)
            );
            assert_eq!(
                k.string_specials_64::<true>(&run, false),
                scalar_specials(&run, true, false)
            );
        }
    }
}

#[test]
fn string_specials_of_mixed_runs() {
    at_every_level(MixedRuns);
}

#[derive(Clone, Copy)]
struct WhitespaceEnds;
impl WithKernels for WhitespaceEnds {
    type Output = ();
    fn run<K: Kernels>(self, k: K) {
        let lens: &[usize] = if cfg!(miri) {
            &[0, 1, 17, 33, 65]
        } else {
            &[
                0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 97, 130, 200,
            ]
        };
        for &len in lens {
            for other in [
                None,
                Some(b'x'),
                Some(0x0B),
                Some(0xA0),
                Some(0x0C),
                Some(0),
            ] {
                // Under Miri, the other byte at either side of each block
                // boundary and at the ends only.
                let ats = (0..len).filter(|&at| {
                    !cfg!(miri) || at < 2 || at % 16 == 0 || at % 16 == 15 || at + 2 > len
                });
                for at in ats {
                    let mut text: Vec<u8> = (0..len).map(|j| b" \n\t\r"[j % 4]).collect();
                    if let Some(b) = other {
                        text[at] = b;
                    }
                    for from in [0, 1, at, at + 1, len].into_iter().filter(|&f| f <= len) {
                        let want = text[from..]
                            .iter()
                            .position(|&b| !super::is_whitespace(b))
                            .map_or(len, |j| from + j);
                        assert_eq!(k.whitespace_end(&text, from), want, "{text:?} from {from}");
                    }
                }
            }
        }
    }
}

#[test]
fn whitespace_ends_at_the_first_other_byte() {
    at_every_level(WhitespaceEnds);
}

#[test]
fn the_level_is_never_above_what_the_cpu_has() {
    let level = simd_level();
    assert!(level.is_supported());
    assert!(SimdLevel::Portable.is_supported());
    for level in SimdLevel::ALL_LEVELS {
        if !level.is_supported() {
            assert!(
                !force_simd_level(level),
                "{level:?} forced on a CPU without it"
            );
        }
    }
    assert_eq!(simd_level(), level);
    // Names are what MCP_STDIO_SIMD takes.
    let names: Vec<&str> = SimdLevel::ALL_LEVELS.iter().map(|l| l.name()).collect();
    assert_eq!(names[1..], ["avx2", "avx512"]);
}
