//! Panics never cross the C boundary.
//!
//! Unwinding out of an `extern "C"` function aborts the host process, so every
//! entry point runs its body inside [`ffi_boundary!`], which turns a panic
//! into the entry point's panic value (`MCP_STATUS_PANIC`, NULL, 0...). A
//! reader whose call panicked is left marked as unusable (see `reader.rs`).
//!
//! With the `panic-injection` feature (and in unit tests) a test can make a
//! named entry point panic at its fault point, to prove all of this.

/// Runs `$body` (a block, which may `return` early) and returns its value, or
/// `$on_panic` if it panicked. `$name` is the entry point's own name: the
/// compiler checks that such a function exists, and a test build records it,
/// so that [`fault_point`] knows which entry point it is in without any
/// entry point spelling its name as a string.
macro_rules! ffi_boundary {
    ($name:ident, $on_panic:expr, $body:block) => {{
        let _ = $name;
        $crate::ffi::boundary::enter(stringify!($name));
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| $body)) {
            Ok(value) => value,
            Err(_) => $on_panic,
        }
    }};
}

#[cfg(any(test, feature = "panic-injection"))]
mod injection {
    use std::cell::{Cell, RefCell};
    use std::ffi::{c_char, CStr};

    thread_local! {
        // Test-only, and per thread so that parallel tests do not disturb each other.
        static PANIC_IN: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
        static ENTERED: Cell<&'static str> = const { Cell::new("") };
    }

    /// Records the entry point this thread is in (called by `ffi_boundary!`).
    pub(crate) fn enter(entry_point: &'static str) {
        ENTERED.with(|e| e.set(entry_point));
    }

    /// Panics if a test asked for a panic in the entry point this thread is in.
    /// Every entry point reaches exactly one fault point (a reader's, inside
    /// `with_reader`, where a panic leaves the reader poisoned).
    pub(crate) fn fault_point() {
        let entry_point = ENTERED.with(Cell::get);
        let armed = PANIC_IN.with(|p| p.borrow().as_deref() == Some(entry_point.as_bytes()));
        if armed {
            panic!("injected panic in {entry_point}");
        }
    }

    /// Test only (built with the `panic-injection` feature): makes the entry
    /// point named `name` panic inside its boundary on every later call from
    /// this thread; NULL disarms it.
    ///
    /// # Safety
    /// `name` is NULL or a NUL-terminated string.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn mcp_test_inject_panic(name: *const c_char) {
        let name = if name.is_null() {
            None
        } else {
            // SAFETY: the caller passes a NUL-terminated string.
            Some(unsafe { CStr::from_ptr(name) }.to_bytes().to_vec())
        };
        PANIC_IN.with(|p| *p.borrow_mut() = name);
    }
}

#[cfg(any(test, feature = "panic-injection"))]
pub use injection::mcp_test_inject_panic;
#[cfg(any(test, feature = "panic-injection"))]
pub(crate) use injection::{enter, fault_point};

/// Without injection, entering records nothing...
#[cfg(not(any(test, feature = "panic-injection")))]
#[inline(always)]
pub(crate) fn enter(_entry_point: &'static str) {}

/// ...and a fault point is nothing.
#[cfg(not(any(test, feature = "panic-injection")))]
#[inline(always)]
pub(crate) fn fault_point() {}
