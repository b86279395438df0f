//! What the tests share: the examples they run.

use std::path::PathBuf;
use std::sync::OnceLock;

/// target/<profile>/examples/<name>. `cargo test` builds the examples
/// with the tests; `cargo test --test X` does not, so a nested cargo (the
/// lock is free while tests run) builds them once per run.
pub fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    BUILT.get_or_init(|| {
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--quiet", "--examples"]);
        if release {
            cargo.arg("--release");
        }
        let status = cargo.status().unwrap();
        assert!(status.success(), "cargo build --examples failed");
    });
    profile_dir.join("examples").join(name)
}
