//! Each test's scratch directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;

/// A fresh directory for one test, under `CARGO_TARGET_TMPDIR/c_abi/`, named
/// after the test and the process id; removed on success, kept on failure.
pub struct WorkDir(PathBuf);

impl WorkDir {
    pub fn new(test: &str) -> WorkDir {
        let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("c_abi")
            .join(format!("{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap_or_else(|e| panic!("create {}: {e}", d.display()));
        WorkDir(d)
    }

    /// The directory itself.
    pub fn dir(&self) -> &Path {
        &self.0
    }

    /// A file (or directory) `name` in it.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}
