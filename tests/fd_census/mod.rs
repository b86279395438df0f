//! Which descriptors this process has open, and which a test left behind.
//!
//! A test that counts descriptors shares its process with the test
//! harness and with threads of other tests (waiting for their turn), which
//! may hold a descriptor open for a moment: one open at the first look and
//! closed at the second made a count go *down*; one opened at the second
//! would make it go up. So the check is not "as many after as before" but
//! "none open now that was not open before", looked at again for up to a
//! second when it fails (a stranger's descriptor closes within that; one
//! the library leaked stays), and a failure names each descriptor with
//! what it points to.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The open descriptors of this process, each with what it points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptors(BTreeMap<i32, String>);

impl Descriptors {
    /// This process's descriptors now (the listing's own left out).
    pub fn now() -> Descriptors {
        let dir = std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd");
        let listing = format!("/proc/{}/fd", std::process::id());
        let mut open = BTreeMap::new();
        for entry in dir.flatten() {
            let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            // A descriptor closed meanwhile has no target.
            if let Ok(target) = std::fs::read_link(entry.path()) {
                let target = target.to_string_lossy().into_owned();
                if target != listing {
                    open.insert(fd, target);
                }
            }
        }
        Descriptors(open)
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Those open here that were not open in `before` (or were, pointing
    /// elsewhere).
    fn new_since(&self, before: &Descriptors) -> Vec<(i32, String)> {
        self.0
            .iter()
            .filter(|(fd, target)| before.0.get(fd) != Some(target))
            .map(|(fd, target)| (*fd, target.clone()))
            .collect()
    }

    /// Panics, naming them, when descriptors opened since `before` are
    /// still open after a second of looking again.
    #[track_caller]
    pub fn assert_none_left_since(before: &Descriptors, what: &str) {
        let give_up = Instant::now() + Duration::from_secs(1);
        loop {
            let left = Descriptors::now().new_since(before);
            if left.is_empty() {
                return;
            }
            if Instant::now() >= give_up {
                panic!("{what}: descriptors left behind: {left:?} (open before: {before:?})");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
