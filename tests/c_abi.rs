//! C ABI tests: builds the C programs in `tests/c/` and the C++ program in
//! `tests/cpp/` against `include/mcp_stdio.h` and the `libmcp_stdio.so` /
//! `libmcp_stdio.a` that `cargo test` builds with the lib (crate types
//! cdylib + staticlib + rlib; taken from target/<profile>/deps/, see
//! `deps_dir`), runs them in several configurations, and checks
//! the shared library's exported symbols and SONAME.
//!
//! Needs on the machine: a C/C++ compiler as `cc` / `c++` (gcc and g++, with
//! libasan/libubsan), `valgrind`, and binutils (`nm`, `readelf`, `objdump`).
//! A missing tool is a test failure, never a skip.
//!
//! Every test works in its own directory under `CARGO_TARGET_TMPDIR`
//! (named after the test and the process id), so the tests run in parallel,
//! and concurrent `cargo test` runs do not clash. The directory is removed
//! when the test passes and kept for inspection when it fails.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;

/// The C test programs in tests/c (one idea per file).
const C_TESTS: &[&str] = &[
    "test_args",
    "test_reader",
    "test_limits",
    "test_flags_jsonrpc",
    "test_encode",
    "test_meta",
];

/// Every function of the C API (include/mcp_stdio.h).
const API_FUNCTIONS: &[&str] = &[
    "mcp_line_reader_new",
    "mcp_line_reader_set_max_line_len",
    "mcp_line_reader_set_flags",
    "mcp_line_reader_feed",
    "mcp_line_reader_next_message",
    "mcp_line_reader_finish",
    "mcp_line_reader_buffered_len",
    "mcp_line_reader_free",
    "mcp_encode",
    "mcp_buffer_free",
    "mcp_status_str",
    "mcp_stdio_version",
    "mcp_stdio_abi_version",
];

/// Native libraries the staticlib needs (what
/// `cargo rustc --lib --crate-type staticlib -- --print native-static-libs`
/// prints on x86_64 Linux/glibc; cross-checked against rustc in
/// `static_link_native_libs_match_rustc`).
const NATIVE_STATIC_LIBS: &[&str] = &[
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

const C_WARNINGS: &[&str] = &["-Wall", "-Wextra", "-Wpedantic", "-Werror"];
const SANITIZE: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-omit-frame-pointer",
    "-fno-sanitize-recover=all",
];

const CI_PACKAGES: &str = "gcc g++ libc6-dev libasan8 libubsan1 binutils valgrind";

// ---------------------------------------------------------------------------
// locations

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn include_dir() -> PathBuf {
    manifest_dir().join("include")
}

fn header() -> PathBuf {
    let h = include_dir().join("mcp_stdio.h");
    assert!(h.is_file(), "header {} is missing", h.display());
    h
}

/// target/<profile>/deps/ (or target/<triple>/<profile>/deps/): the
/// directory of this test binary (target/<profile>/deps/c_abi-<hash>).
///
/// The library's artifacts are taken from here, not from target/<profile>/:
/// `cargo test` compiles the lib once with all its crate types (cdylib,
/// staticlib, rlib) into deps/, links this test against deps/libmcp_stdio.rlib,
/// but only `cargo build` copies (uplifts) the .so/.a to target/<profile>/.
/// A target/<profile>/libmcp_stdio.so can therefore be stale or missing
/// during `cargo test`, while deps/ always has the ones from this build.
fn deps_dir() -> PathBuf {
    let exe = env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary has a parent directory");
    assert_eq!(
        deps.file_name().and_then(|n| n.to_str()),
        Some("deps"),
        "expected the test binary in target/<profile>/deps/, found {}",
        exe.display()
    );
    deps.to_path_buf()
}

struct Lib {
    dir: PathBuf,
    shared: PathBuf,
    static_: PathBuf,
}

/// The cdylib and staticlib that `cargo test` built with the rlib this test
/// binary links. They must exist and come from the same rustc invocation.
fn lib() -> Lib {
    let dir = deps_dir();
    let shared = dir.join("libmcp_stdio.so");
    let static_ = dir.join("libmcp_stdio.a");
    let rlib = dir.join("libmcp_stdio.rlib");
    for p in [&shared, &static_, &rlib] {
        if !p.is_file() {
            let found: Vec<String> = fs::read_dir(&dir)
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.starts_with("libmcp_stdio"))
                        .collect()
                })
                .unwrap_or_default();
            panic!(
                "{} is missing: `cargo test` should build the cdylib and staticlib with the lib \
                 (crate-type = [\"cdylib\", \"staticlib\", \"rlib\"] in Cargo.toml); \
                 libmcp_stdio* in {}: {found:?}",
                p.display(),
                dir.display()
            );
        }
    }
    // rustc writes all crate types of the lib in one invocation, within
    // moments of each other; a .so/.a much older than the rlib is stale.
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).expect("mtime");
    let rlib_time = mtime(&rlib);
    for p in [&shared, &static_] {
        if let Ok(age) = rlib_time.duration_since(mtime(p)) {
            assert!(
                age.as_secs() < 10,
                "{} is {:.1}s older than {}: stale, not built with the lib this test uses",
                p.display(),
                age.as_secs_f64(),
                rlib.display()
            );
        }
    }
    Lib {
        dir,
        shared,
        static_,
    }
}

/// A fresh directory for one test; removed on success, kept on failure.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new(test: &str) -> WorkDir {
        let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("c_abi")
            .join(format!("{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap_or_else(|e| panic!("create {}: {e}", d.display()));
        WorkDir(d)
    }
    fn path(&self, name: &str) -> PathBuf {
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

// ---------------------------------------------------------------------------
// running tools

fn describe(cmd: &Command) -> String {
    let mut s = String::new();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            s.push_str(&format!("{}={} ", k.to_string_lossy(), v.to_string_lossy()));
        }
    }
    s.push_str(&cmd.get_program().to_string_lossy());
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

fn report(cmd: &str, out: &Output) -> String {
    format!(
        "command: {cmd}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a command; a tool that cannot be started is a failure, not a skip.
/// ASan and UBSan settings for a sanitized test program: leaks detected,
/// every report fatal, stack traces printed.
fn with_sanitizer_options(cmd: &mut Command) -> &mut Command {
    cmd.env(
        "ASAN_OPTIONS",
        "detect_leaks=1:halt_on_error=1:abort_on_error=0",
    )
    .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
}

/// Fails when a sanitized program's stderr holds a sanitizer report.
fn no_sanitizer_report(desc: &str, out: &Output) -> Result<(), String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    for marker in [
        "ERROR: AddressSanitizer",
        "ERROR: LeakSanitizer",
        "runtime error:",
    ] {
        if stderr.contains(marker) {
            return Err(format!(
                "sanitizer report ({marker})\n{}",
                report(desc, out)
            ));
        }
    }
    Ok(())
}

fn run(cmd: &mut Command) -> (String, Output) {
    let desc = describe(cmd);
    match cmd.output() {
        Ok(out) => (desc, out),
        Err(e) => panic!(
            "could not run `{desc}`: {e}\n(is `{}` installed? these tests need the Debian \
             packages: {CI_PACKAGES})",
            cmd.get_program().to_string_lossy()
        ),
    }
}

fn run_ok(cmd: &mut Command) -> Output {
    let (desc, out) = run(cmd);
    assert!(
        out.status.success(),
        "command failed\n{}",
        report(&desc, &out)
    );
    out
}

fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(run_ok(cmd).stdout).expect("tool output is UTF-8")
}

/// Checks the result of one test program: exit status 0 and a last stdout
/// line `N passed, 0 failed` with N > 0.
fn check_program_output(desc: &str, out: &Output) -> Result<u64, String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let counts = parse_summary(last);
    match (out.status.success(), counts) {
        (true, Some((passed, 0))) if passed > 0 => Ok(passed),
        _ => Err(format!(
            "test program failed (want exit status 0 and a last line `N passed, 0 failed`, \
             got last line {last:?})\n{}",
            report(desc, out)
        )),
    }
}

fn parse_summary(line: &str) -> Option<(u64, u64)> {
    let (p, rest) = line.trim().split_once(" passed, ")?;
    let f = rest.strip_suffix(" failed")?;
    Some((p.parse().ok()?, f.parse().ok()?))
}

fn finish(what: &str, results: Vec<(String, Result<u64, String>)>) {
    let mut failures = Vec::new();
    for (name, r) in &results {
        match r {
            Ok(n) => eprintln!("{what}: {name}: {n} checks passed"),
            Err(e) => failures.push(format!("===== {what}: {name} =====\n{e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} programs failed:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// building

fn c_source(name: &str) -> PathBuf {
    let p = manifest_dir()
        .join("tests")
        .join("c")
        .join(format!("{name}.c"));
    assert!(p.is_file(), "{} is missing", p.display());
    p
}

fn crate_version_define() -> String {
    format!("-DMCP_TEST_CRATE_VERSION=\"{}\"", env!("CARGO_PKG_VERSION"))
}

/// `cc -std=c99 <warnings> -g -I include <extra_cflags> src <link args> -o out`
fn compile_c(src: &Path, out: &Path, extra_cflags: &[&str], link: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new("cc");
    cmd.arg("-std=c99")
        .args(C_WARNINGS)
        .arg("-g")
        .arg("-I")
        .arg(include_dir())
        .arg(crate_version_define())
        .args(extra_cflags)
        .arg(src)
        .args(link)
        .arg("-o")
        .arg(out);
    let (desc, o) = run(&mut cmd);
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("compilation failed\n{}", report(&desc, &o)))
    }
}

fn shared_link_args(lib: &Lib) -> Vec<String> {
    vec![
        format!("-L{}", lib.dir.display()),
        "-lmcp_stdio".to_string(),
    ]
}

fn static_link_args(lib: &Lib) -> Vec<String> {
    let mut v = vec![lib.static_.display().to_string()];
    v.extend(NATIVE_STATIC_LIBS.iter().map(|s| s.to_string()));
    v
}

fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}

/// DT_NEEDED entries of an ELF file.
fn needed(elf: &Path) -> Vec<String> {
    let out = stdout_of(Command::new("readelf").arg("-d").arg(elf));
    out.lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split_once('[')?.1.split_once(']')?.0.to_string()))
        .collect()
}

/// Prepares a directory for LD_LIBRARY_PATH in which the program's
/// DT_NEEDED name for our library (libmcp_stdio.so.0, from the SONAME) is a
/// symlink to the freshly built deps/libmcp_stdio.so, as an installed
/// library would be.
fn library_path_for(program: &Path, lib: &Lib, work: &WorkDir) -> Result<String, String> {
    let ours: Vec<String> = needed(program)
        .into_iter()
        .filter(|n| n.starts_with("libmcp_stdio.so"))
        .collect();
    if ours.len() != 1 {
        return Err(format!(
            "{} should depend on exactly one libmcp_stdio.so*, DT_NEEDED: {:?}",
            program.display(),
            needed(program)
        ));
    }
    let libdir = work.path("lib");
    fs::create_dir_all(&libdir).map_err(|e| e.to_string())?;
    let link = libdir.join(&ours[0]);
    if !link.exists() {
        std::os::unix::fs::symlink(&lib.shared, &link).map_err(|e| {
            format!(
                "symlink {} -> {}: {e}",
                link.display(),
                lib.shared.display()
            )
        })?;
    }
    Ok(libdir.display().to_string())
}

fn build_shared(name: &str, lib: &Lib, work: &WorkDir) -> Result<(PathBuf, String), String> {
    let exe = work.path(&format!("{name}-shared"));
    compile_c(&c_source(name), &exe, &[], &as_strs(&shared_link_args(lib)))?;
    let ld_path = library_path_for(&exe, lib, work)?;
    Ok((exe, ld_path))
}

// ---------------------------------------------------------------------------
// (1) shared library

#[test]
fn c_tests_pass_linked_against_shared_lib() {
    let lib = lib();
    let work = WorkDir::new("shared");
    let results = C_TESTS
        .iter()
        .map(|name| {
            let r = build_shared(name, &lib, &work).and_then(|(exe, ld_path)| {
                let (desc, out) = run(Command::new(&exe).env("LD_LIBRARY_PATH", ld_path));
                check_program_output(&desc, &out)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("shared", results);
}

// ---------------------------------------------------------------------------
// (2) static library

#[test]
fn c_tests_pass_linked_against_static_lib() {
    let lib = lib();
    let work = WorkDir::new("static");
    let link = static_link_args(&lib);
    let results = C_TESTS
        .iter()
        .map(|name| {
            let exe = work.path(&format!("{name}-static"));
            let r = compile_c(&c_source(name), &exe, &[], &as_strs(&link)).and_then(|()| {
                let deps = needed(&exe);
                if deps.iter().any(|n| n.starts_with("libmcp_stdio")) {
                    return Err(format!("static build still needs the shared lib: {deps:?}"));
                }
                let (desc, out) = run(Command::new(&exe).env_remove("LD_LIBRARY_PATH"));
                check_program_output(&desc, &out)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("static", results);
}

/// The hard-coded NATIVE_STATIC_LIBS are what this toolchain's rustc says a
/// staticlib needs (std only: the crate's dependencies add no native libs).
#[test]
fn static_link_native_libs_match_rustc() {
    let work = WorkDir::new("native-libs");
    let src = work.path("empty.rs");
    fs::write(&src, "pub fn f() {}\n").unwrap();
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = run_ok(
        Command::new(rustc)
            .args([
                "--crate-type",
                "staticlib",
                "--crate-name",
                "empty",
                "--print",
                "native-static-libs",
            ])
            .arg("--out-dir")
            .arg(&work.0)
            .arg(&src),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| {
            l.split_once("native-static-libs:")
                .map(|(_, r)| r.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no native-static-libs note in rustc output:\n{stderr}"));
    let mut want: Vec<&str> = line.split_whitespace().collect();
    let mut have: Vec<&str> = NATIVE_STATIC_LIBS.to_vec();
    want.sort_unstable();
    want.dedup();
    have.sort_unstable();
    assert_eq!(
        have, want,
        "NATIVE_STATIC_LIBS differs from rustc's native-static-libs: {line}"
    );
}

// ---------------------------------------------------------------------------
// (3) valgrind (shared-lib build)

#[test]
fn c_tests_pass_under_valgrind() {
    let lib = lib();
    let work = WorkDir::new("valgrind");
    let results = C_TESTS
        .iter()
        .map(|name| {
            let r = build_shared(name, &lib, &work).and_then(|(exe, ld_path)| {
                let (desc, out) = run(Command::new("valgrind")
                    .args([
                        "--error-exitcode=1",
                        "--leak-check=full",
                        "--errors-for-leak-kinds=definite,indirect",
                    ])
                    .arg(&exe)
                    .env("LD_LIBRARY_PATH", ld_path));
                let passed = check_program_output(&desc, &out)?;
                let stderr = String::from_utf8_lossy(&out.stderr);
                if !stderr.contains("ERROR SUMMARY: 0 errors") {
                    return Err(format!("valgrind reported errors\n{}", report(&desc, &out)));
                }
                Ok(passed)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("valgrind", results);
}

// ---------------------------------------------------------------------------
// (4) AddressSanitizer + UndefinedBehaviorSanitizer (static link)

#[test]
fn c_tests_pass_under_asan_and_ubsan() {
    let lib = lib();
    let work = WorkDir::new("asan");
    let link = static_link_args(&lib);
    let results = C_TESTS
        .iter()
        .map(|name| {
            let exe = work.path(&format!("{name}-asan"));
            let r = compile_c(&c_source(name), &exe, SANITIZE, &as_strs(&link)).and_then(|()| {
                let (desc, out) = run(with_sanitizer_options(
                    Command::new(&exe).env_remove("LD_LIBRARY_PATH"),
                ));
                let passed = check_program_output(&desc, &out)?;
                no_sanitizer_report(&desc, &out)?;
                Ok(passed)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("asan+ubsan", results);
}

// ---------------------------------------------------------------------------
// (5) the header on its own

#[test]
fn header_compiles_standalone() {
    let _ = header();
    let work = WorkDir::new("header");
    // Only the header (twice: the include guard must work), nothing else.
    let tu = "#include \"mcp_stdio.h\"\n#include \"mcp_stdio.h\"\n";
    let c_src = work.path("header_only.c");
    let cpp_src = work.path("header_only.cpp");
    fs::write(&c_src, tu).unwrap();
    fs::write(&cpp_src, tu).unwrap();

    let mut failures = Vec::new();
    let mut try_compile = |compiler: &str, std: &str, extra: &[&str], src: &Path, tag: &str| {
        let mut cmd = Command::new(compiler);
        cmd.arg(format!("-std={std}"))
            .args(C_WARNINGS)
            .args(extra)
            .arg("-I")
            .arg(include_dir())
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(work.path(&format!("header_only-{tag}.o")));
        let (desc, out) = run(&mut cmd);
        if out.status.success() {
            eprintln!("header: {tag}: ok");
        } else {
            failures.push(report(&desc, &out));
        }
    };
    try_compile("cc", "c99", &["-Wstrict-prototypes"], &c_src, "c99");
    try_compile("cc", "c11", &["-Wstrict-prototypes"], &c_src, "c11");
    try_compile("c++", "c++11", &[], &cpp_src, "cxx11");
    assert!(
        failures.is_empty(),
        "header does not compile cleanly:\n{}",
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// (6) C++ consumer

#[test]
fn cpp_test_builds_and_runs() {
    let lib = lib();
    let work = WorkDir::new("cpp");
    let src = manifest_dir()
        .join("tests")
        .join("cpp")
        .join("test_header.cpp");
    assert!(src.is_file(), "{} is missing", src.display());
    let exe = work.path("test_header-cpp");
    run_ok(
        Command::new("c++")
            .arg("-std=c++11")
            .args(C_WARNINGS)
            .arg("-g")
            .arg("-I")
            .arg(include_dir())
            .arg(&src)
            .args(shared_link_args(&lib))
            .arg("-o")
            .arg(&exe),
    );
    let ld_path = library_path_for(&exe, &lib, &work).unwrap_or_else(|e| panic!("{e}"));
    let (desc, out) = run(Command::new(&exe).env("LD_LIBRARY_PATH", ld_path));
    finish(
        "c++",
        vec![("test_header".to_string(), check_program_output(&desc, &out))],
    );
}

// ---------------------------------------------------------------------------
// (7) exported symbols

#[test]
fn shared_lib_exports_only_mcp_symbols() {
    let lib = lib();
    let out = stdout_of(
        Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(&lib.shared),
    );
    // Lines are `<address> <type> <name>` (or `<type> <name>` for some kinds).
    let symbols: Vec<(String, String)> = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let parts: Vec<&str> = l.split_whitespace().collect();
            let name = parts.last().copied().unwrap_or("").to_string();
            let kind = if parts.len() >= 2 {
                parts[parts.len() - 2].to_string()
            } else {
                String::new()
            };
            (kind, name)
        })
        .collect();
    let offenders: Vec<String> = symbols
        .iter()
        .filter(|(_, name)| !name.starts_with("mcp_"))
        .map(|(kind, name)| format!("{kind} {name}"))
        .collect();
    let missing: Vec<&str> = API_FUNCTIONS
        .iter()
        .copied()
        .filter(|f| !symbols.iter().any(|(kind, name)| name == f && kind == "T"))
        .collect();
    assert!(
        offenders.is_empty() && missing.is_empty(),
        "exported symbols of {}:\nnot mcp_-prefixed: {offenders:?}\nAPI functions not exported as T: \
         {missing:?}\nfull `nm -D --defined-only` output:\n{out}",
        lib.shared.display()
    );
}

// ---------------------------------------------------------------------------
// (8) SONAME

/// MCP_STDIO_ABI_VERSION as the header defines it (via the C preprocessor).
fn header_abi_version(work: &WorkDir) -> u32 {
    let src = work.path("abi.c");
    fs::write(
        &src,
        "#include <stdio.h>\n#include \"mcp_stdio.h\"\n\
         int main(void) { printf(\"%lu\\n\", (unsigned long)MCP_STDIO_ABI_VERSION); return 0; }\n",
    )
    .unwrap();
    let exe = work.path("abi");
    run_ok(
        Command::new("cc")
            .arg("-std=c99")
            .arg("-I")
            .arg(include_dir())
            .arg(&src)
            .arg("-o")
            .arg(&exe),
    );
    let out = stdout_of(&mut Command::new(&exe));
    out.trim()
        .parse()
        .unwrap_or_else(|e| panic!("MCP_STDIO_ABI_VERSION printed as {out:?}: {e}"))
}

#[test]
fn shared_lib_soname_matches_abi_version() {
    let lib = lib();
    let work = WorkDir::new("soname");

    let readelf = stdout_of(Command::new("readelf").arg("-d").arg(&lib.shared));
    let from_readelf: Vec<String> = readelf
        .lines()
        .filter(|l| l.contains("(SONAME)"))
        .filter_map(|l| Some(l.split_once('[')?.1.split_once(']')?.0.to_string()))
        .collect();
    let objdump = stdout_of(Command::new("objdump").arg("-p").arg(&lib.shared));
    let from_objdump: Vec<String> = objdump
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some("SONAME")).then(|| it.next().unwrap_or("").to_string())
        })
        .collect();
    assert_eq!(
        from_readelf.len(),
        1,
        "want exactly one SONAME in `readelf -d`:\n{readelf}"
    );
    assert_eq!(
        from_objdump, from_readelf,
        "`objdump -p` and `readelf -d` disagree:\n{objdump}"
    );
    let soname = &from_readelf[0];

    let abi = header_abi_version(&work);
    assert_eq!(
        soname,
        &format!("libmcp_stdio.so.{abi}"),
        "SONAME must be libmcp_stdio.so.<MCP_STDIO_ABI_VERSION> (MCP_STDIO_ABI_VERSION = {abi})"
    );
    let crate_version = env!("CARGO_PKG_VERSION");
    let major = crate_version.split('.').next().unwrap();
    if major == "0" {
        assert_eq!(
            soname, "libmcp_stdio.so.0",
            "while the crate is 0.x ({crate_version}) the SONAME is libmcp_stdio.so.0"
        );
        assert_eq!(
            abi, 0,
            "while the crate is 0.x ({crate_version}) MCP_STDIO_ABI_VERSION is 0"
        );
    }
}

// ---------------------------------------------------------------------------
// (10) the README's C example is real code

#[test]
fn readme_c_example_builds_and_runs() {
    let lib = lib();
    let work = WorkDir::new("readme");
    let readme = fs::read_to_string(manifest_dir().join("README.md")).expect("README.md");
    let start = readme.find("```c\n").expect("README.md has a ```c block") + "```c\n".len();
    let len = readme[start..]
        .find("```")
        .expect("the ```c block is closed");
    let src = work.path("readme_example.c");
    fs::write(&src, &readme[start..start + len]).expect("write the example");
    let exe = work.path("readme_example");
    let link = static_link_args(&lib);
    compile_c(&src, &exe, &["-D_POSIX_C_SOURCE=200809L"], &as_strs(&link))
        .unwrap_or_else(|e| panic!("{e}"));

    use std::io::Write;
    let mut child = Command::new(&exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the README example");
    // A stream ending without a newline: the last message must still come out.
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"{\"id\":1}\r\nnot json\n{\"id\":2}")
        .expect("write to the example");
    let out = child.wait_with_output().expect("wait for the example");
    let report = report("readme_example", &out);
    assert!(out.status.success(), "{report}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "message: {\"id\":1}\nmessage: {\"id\":2}\n",
        "{report}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a message (kind 1, 8 bytes)"),
        "{report}"
    );
}

// ---------------------------------------------------------------------------
// (11) panics never cross the boundary: tests/c/test_panic.c against a
// library built with the `panic-injection` feature

/// The entry points with a fault point, read from src/ffi: every
/// `fault_point("name")`, and every `with_reader(<reader>, "name", ...)` (the
/// reader calls, whose fault point is inside `with_reader`). test_panic.c
/// must make each of them panic.
fn fault_points_in_source() -> Vec<String> {
    let dir = manifest_dir().join("src").join("ffi");
    let mut names = Vec::new();
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs"))
        .collect();
    files.sort();
    for file in files {
        let text = fs::read_to_string(&file).expect("read src/ffi");
        // Whitespace removed, so that rustfmt's line breaks do not matter.
        let code: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let literal_at = |s: &str| {
            s.strip_prefix('"')?
                .split_once('"')
                .map(|(n, _)| n.to_string())
        };
        for (i, _) in code.match_indices("fault_point(\"") {
            names.extend(literal_at(&code[i + "fault_point(".len()..]));
        }
        for (i, _) in code.match_indices("with_reader(") {
            let args = &code[i + "with_reader(".len()..];
            if let Some((_, rest)) = args.split_once(',') {
                names.extend(literal_at(rest)); // None for the definition's parameter list
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Builds the library with `--features panic-injection` (which exports the
/// test-only `mcp_test_inject_panic`) and returns its static library.
///
/// It goes to a target directory of its own under CARGO_TARGET_TMPDIR, kept
/// between runs (so rebuilds are incremental): never the one the other tests
/// use, whose deps/libmcp_stdio.{a,so} carry no hash and would be replaced.
/// A nested cargo works here: `cargo test` does not hold the build lock
/// while the tests run, and this build has its own target directory anyway.
/// Built once per test process.
fn panic_injection_static_lib() -> &'static Result<PathBuf, String> {
    static LIB: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("panic-lib");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(manifest_dir())
            .args(["build", "--lib", "--features", "panic-injection"])
            .arg("--manifest-path")
            .arg(manifest_dir().join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target_dir)
            .arg("--message-format=json-render-diagnostics");
        let (desc, out) = run(&mut cmd);
        if !out.status.success() {
            return Err(format!(
                "building the panic-injection library failed\n{}",
                report(&desc, &out)
            ));
        }
        // The artifact paths, from cargo's JSON messages (whatever the
        // profile or --target configuration puts them).
        let stdout = String::from_utf8_lossy(&out.stdout);
        let found = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "mcp_stdio")
            .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
            .filter_map(|f| f.as_str().map(PathBuf::from))
            .find(|p| p.file_name().is_some_and(|n| n == "libmcp_stdio.a"));
        match found {
            Some(a) if a.is_file() => Ok(a),
            _ => Err(format!(
                "no libmcp_stdio.a among the artifacts cargo reported\n{}",
                report(&desc, &out)
            )),
        }
    })
}

/// Defined symbol names in an object, archive or (with `-D`) shared library.
fn defined_symbols(nm_args: &[&str], file: &Path) -> Vec<String> {
    // `nm` on an archive warns "no symbols" on stderr for some members: fine.
    let out = stdout_of(
        Command::new("nm")
            .args(nm_args)
            .arg("--defined-only")
            .arg(file),
    );
    out.lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_string)
        .collect()
}

/// Checks one run of test_panic: the usual summary, plus the panic hook's
/// message on stderr for every fault point (so each one did panic, and the
/// process lived on to print the summary).
fn check_panic_program(desc: &str, out: &Output, fault_points: &[String]) -> Result<u64, String> {
    let passed = check_program_output(desc, out)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let missing: Vec<&String> = fault_points
        .iter()
        .filter(|name| {
            let want = format!("injected panic in {name}");
            !stderr.lines().any(|l| l.trim() == want)
        })
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "test_panic.c never made these entry points panic (no `injected panic in <name>` \
             on stderr): {missing:?}; every fault point in src/ffi needs a case there\n{}",
            report(desc, out)
        ));
    }
    Ok(passed)
}

#[test]
fn c_panics_are_caught_at_the_boundary() {
    let fault_points = fault_points_in_source();
    assert!(
        fault_points.len() >= 12,
        "expected at least the 12 fault points of src/ffi, found {fault_points:?}"
    );
    eprintln!("fault points in src/ffi: {fault_points:?}");
    let static_lib = panic_injection_static_lib()
        .as_ref()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        defined_symbols(&[], static_lib)
            .iter()
            .any(|s| s == "mcp_test_inject_panic"),
        "{} (built with --features panic-injection) does not define mcp_test_inject_panic",
        static_lib.display()
    );

    let work = WorkDir::new("panic");
    let mut link = vec![static_lib.display().to_string()];
    link.extend(NATIVE_STATIC_LIBS.iter().map(|s| s.to_string()));
    let src = c_source("test_panic");
    // The panic hook prints one message per panic; a backtrace each would
    // only slow valgrind down.
    let program = |cmd: &mut Command| {
        cmd.env_remove("LD_LIBRARY_PATH").env("RUST_BACKTRACE", "0");
    };
    let mut results = Vec::new();

    // (a) plain
    let exe = work.path("test_panic");
    let plain = compile_c(&src, &exe, &[], &as_strs(&link)).and_then(|()| {
        let mut cmd = Command::new(&exe);
        program(&mut cmd);
        let (desc, out) = run(&mut cmd);
        check_panic_program(&desc, &out, &fault_points)
    });
    results.push(("plain".to_string(), plain));

    // (b) valgrind: no invalid access, no definite or indirect leak. The
    // panic machinery may keep "still reachable" blocks: not errors.
    let valgrind = if exe.is_file() {
        let mut cmd = Command::new("valgrind");
        cmd.args([
            "--error-exitcode=1",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
        ])
        .arg(&exe);
        program(&mut cmd);
        let (desc, out) = run(&mut cmd);
        check_panic_program(&desc, &out, &fault_points).and_then(|passed| {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if !stderr.contains("ERROR SUMMARY: 0 errors") {
                return Err(format!("valgrind reported errors\n{}", report(&desc, &out)));
            }
            Ok(passed)
        })
    } else {
        Err("not run: the program did not build".to_string())
    };
    results.push(("valgrind".to_string(), valgrind));

    // (c) AddressSanitizer + UndefinedBehaviorSanitizer on the C side.
    let asan_exe = work.path("test_panic-asan");
    let asan = compile_c(&src, &asan_exe, SANITIZE, &as_strs(&link)).and_then(|()| {
        let mut cmd = Command::new(&asan_exe);
        program(&mut cmd);
        let (desc, out) = run(with_sanitizer_options(&mut cmd));
        let passed = check_panic_program(&desc, &out, &fault_points)?;
        no_sanitizer_report(&desc, &out)?;
        Ok(passed)
    });
    results.push(("asan+ubsan".to_string(), asan));

    finish("panic", results);
}

/// The library the other tests use (a normal build, as shipped) has no
/// panic injection: `mcp_test_inject_panic` is neither exported by the shared
/// library nor defined in the static one. (`cargo test --features
/// panic-injection` builds it in on purpose: then it must be there.)
#[test]
fn normal_build_has_no_panic_injection() {
    let lib = lib();
    let injected = cfg!(feature = "panic-injection");
    for (what, args, file) in [
        ("shared", &["-D"][..], &lib.shared),
        ("static", &[][..], &lib.static_),
    ] {
        let has = defined_symbols(args, file)
            .iter()
            .any(|s| s == "mcp_test_inject_panic");
        assert_eq!(
            has,
            injected,
            "the {what} library {} {} mcp_test_inject_panic (feature panic-injection is {})",
            file.display(),
            if has { "defines" } else { "does not define" },
            if injected { "on" } else { "off" }
        );
    }
    let header = fs::read_to_string(header()).expect("read the header");
    assert!(
        !header.contains("mcp_test_inject_panic"),
        "the public header must not declare the test-only mcp_test_inject_panic"
    );
}
