//! The failure catalogue (examples/catalogue.rs) runs here: every case on
//! every transport, its table printed (`--nocapture`). Asserted are this
//! crate's rows only: no process left behind, a close within twice the
//! grace (plus 1 s), memory bounded by the line limit, and the reason in
//! the host's error when the server dies at once. rmcp's own rows are
//! measured and printed, not judged (docs/rmcp.md has one run's table).
#![cfg(target_os = "linux")]

mod support;

#[test]
fn the_catalogue_runs_and_this_transport_leaves_nothing_behind() {
    let catalogue = support::example("catalogue");
    assert!(
        catalogue.exists(),
        "{catalogue:?}: build the examples (cargo test does)"
    );
    let out = std::process::Command::new(&catalogue)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(rows.len(), 6 * 4, "every case on every transport");
    for row in &rows {
        println!("{row}");
    }
    for row in rows.iter().filter(|r| r["transport"] == "mcp-stdio") {
        let case = row["case"].as_str().unwrap();
        assert_eq!(row["left_behind"], 0, "{row}");
        assert!(row["peak_rss_kib"].as_u64().unwrap() < 48 << 10, "{row}");
        let outcome = row["outcome"].as_str().unwrap();
        if case == "dies-at-once" {
            assert!(
                outcome.contains(
                    "server exited with code 1 before its first message: \
                     ModuleNotFoundError: No module named 'foo'"
                ),
                "{row}"
            );
        } else {
            assert_eq!(outcome, "ok", "{row}");
            let close = row["close_ms"].as_u64().unwrap();
            assert!(close <= 5000, "{row}");
        }
    }
}
