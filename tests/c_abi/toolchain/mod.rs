//! The toolchain driver the C ABI tests share: it finds the sources and the
//! library `cargo test` built, compiles and links C against it, runs the
//! programs (plain, under valgrind, with the sanitizers) and judges what they
//! printed. No tests here: they are in the files next to `toolchain/`.

pub mod compile;
pub mod library;
pub mod program_output;
pub mod run;
pub mod sources;
pub mod work_dir;
