//! C ABI tests: builds the C programs in `tests/c/` and the C++ program in
//! `tests/cpp/` against `include/mcp_stdio.h` and the `libmcp_stdio.so` /
//! `libmcp_stdio.a` that `cargo test` builds with the lib (crate types
//! cdylib + staticlib + rlib; taken from target/<profile>/deps/, see
//! `toolchain::library`), runs them in several configurations, and checks
//! the shared library's exported symbols and SONAME.
//!
//! One test binary (`cargo test --test c_abi`) in two parts:
//! - `toolchain/`, the driver the tests share: where the sources are
//!   (`sources`), where the built library is and how to link it (`library`),
//!   compiling C (`compile`), running tools and programs, under valgrind or
//!   the sanitizers too (`run`), judging what a program printed
//!   (`program_output`), and each test's scratch directory (`work_dir`);
//! - one file per kind of test: `c_programs` (the C tests in `tests/c`
//!   against the shared and the static library, plain, under valgrind and
//!   under ASan+UBSan), `header` (the header on its own, the C++ consumer),
//!   `shared_lib` (exported symbols, SONAME), `readme_example` (the README's C
//!   example) and `panics` (panic injection: no panic crosses the boundary).
//!
//! Needs on the machine: a C/C++ compiler as `cc` / `c++` (gcc and g++, with
//! libasan/libubsan), `valgrind`, and binutils (`nm`, `readelf`, `objdump`).
//! A missing tool is a test failure, never a skip.
//!
//! Every test works in its own directory under `CARGO_TARGET_TMPDIR`
//! (named after the test and the process id), so the tests run in parallel,
//! and concurrent `cargo test` runs do not clash. The directory is removed
//! when the test passes and kept for inspection when it fails.
#![cfg(feature = "capi")]

mod toolchain;

mod c_programs;
mod header;
mod panics;
mod readme_example;
mod shared_lib;
