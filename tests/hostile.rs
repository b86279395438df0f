//! The hostile-input catalogue (`tests/hostile/`, format in its README.md):
//! every case is fed whole, byte by byte, cut at every point (small cases),
//! and in deterministic random chunkings, through the Rust API (`feed`, and
//! `read_from` with a source handing out the same pieces) and
//! through the C ABI (`mcp_line_reader_feed`), and its items must be exactly
//! the ones its `.expected` file lists.
//!
//! `HOSTILE_CASE=NAME` (or a comma-separated list) runs only those cases;
//! `--nocapture` shows how many runs each case had and how long it took.
//!
//! This file runs the cases; its parts are in `tests/hostile_runner/`:
//! `notation` (the byte notation), `expected` (the `.expected` files),
//! `catalogue` (loading the cases), `items` (what a reader gave against what
//! was expected), `chunkings` (the plans of each run), and the readers
//! `rust_api` and `c_api`.

#![cfg(feature = "capi")]

mod common;

#[path = "hostile_runner/c_api.rs"]
mod c_api;
#[path = "hostile_runner/catalogue.rs"]
mod catalogue;
#[path = "hostile_runner/chunkings.rs"]
mod chunkings;
#[path = "hostile_runner/expected.rs"]
mod expected;
#[path = "hostile_runner/items.rs"]
mod items;
#[path = "hostile_runner/notation.rs"]
mod notation;
#[path = "hostile_runner/rust_api.rs"]
mod rust_api;

use std::time::Instant;

use mcp_stdio::RpcKind;

use catalogue::{load_catalogue, Case};
use chunkings::{plans, Plan};
use items::{compare, Got, Kind, Want};

/// `read_from` prepares (zero-fills) 64 KiB on every call, however few bytes
/// the source gives (~1 µs in release, ~3 ms in debug builds): it gets the
/// plans, in order, as long as their pieces add up to at most this many calls.
const READ_FROM_BUDGET: usize = if cfg!(debug_assertions) { 300 } else { 200_000 };

/// Runs every plan of `case` through each API; returns the first failure of each.
fn run_case(case: &Case) -> Vec<String> {
    let start = Instant::now();
    let plans = plans(case);
    let mut failures = Vec::new();
    for (api, read) in [
        (
            "Rust feed",
            rust_api::read_rust_feed as fn(&Case, &Plan) -> Result<Vec<Got>, String>,
        ),
        ("Rust read_from", rust_api::read_rust_read_from),
        ("C mcp_line_reader_feed", c_api::read_c),
    ] {
        let mut read_from_calls = 0;
        for plan in &plans {
            if api == "Rust read_from" {
                let calls = plan.cuts.len() + 1;
                if read_from_calls + calls > READ_FROM_BUDGET {
                    continue;
                }
                read_from_calls += calls;
            }
            if let Err(e) = read(case, plan).and_then(|got| compare(case, &got)) {
                failures.push(format!("{} [{api}, {}]: {e}", case.name, plan.label));
                break;
            }
        }
    }
    eprintln!(
        "{:<36} {:>11} bytes {:>4} items {:>5} chunkings x 3 APIs {:>8.2?}{}",
        case.name,
        case.input.len(),
        case.want.len(),
        plans.len(),
        start.elapsed(),
        if failures.is_empty() { "" } else { "  FAILED" }
    );
    failures
}

fn run_cases(select: impl Fn(&Case) -> bool) {
    let mut failures = Vec::new();
    for mut case in load_catalogue().into_iter().filter(|c| select(c)) {
        case.load_input();
        failures.extend(run_case(&case));
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Inputs above this size (the 50 MB and 64 MiB lines) are in `big_cases`:
/// a minute in debug builds, a few seconds in release.
const BIG: usize = 8 << 20;

#[test]
fn small_cases() {
    run_cases(|c| c.input_len <= BIG);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "slow in debug builds: cargo test --release --test hostile"
)]
fn big_cases() {
    run_cases(|c| c.input_len > BIG);
}

#[test]
fn the_catalogue_is_complete() {
    if std::env::var("HOSTILE_CASE").is_ok() {
        return;
    }
    let cases = load_catalogue();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    // Every kind of item and every setting appears somewhere.
    let has = |f: &dyn Fn(&Case) -> bool| cases.iter().any(f);
    for kind in [
        Kind::Json(None),
        Kind::ParseError,
        Kind::InvalidJsonRpc,
        Kind::Json(Some(RpcKind::Request)),
        Kind::Json(Some(RpcKind::Notification)),
        Kind::Json(Some(RpcKind::Response)),
        Kind::Json(Some(RpcKind::Error)),
        Kind::Json(Some(RpcKind::Batch)),
    ] {
        assert!(
            has(&|c| c
                .want
                .iter()
                .any(|w| matches!(w, Want::Item(k, _) if *k == kind))),
            "no case yields {kind:?}"
        );
    }
    assert!(has(&|c| c
        .want
        .iter()
        .any(|w| matches!(w, Want::TooLong { .. }))));
    assert!(has(&|c| c.skip_invalid) && has(&|c| !c.finish));
    assert!(has(&|c| c.input_len >= 50_000_000), "the 50 MB line");
}
