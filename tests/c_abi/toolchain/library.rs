//! The library under test: the cdylib and staticlib `cargo test` built, the
//! panic-injection build, and what it takes to link and load them.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::run::{report, run, stdout_of};
use super::sources::manifest_dir;
use super::work_dir::WorkDir;

/// Native libraries the staticlib needs (what
/// `cargo rustc --lib --crate-type staticlib -- --print native-static-libs`
/// prints on x86_64 Linux/glibc; cross-checked against rustc in
/// `c_programs::static_link_native_libs_match_rustc`).
pub const NATIVE_STATIC_LIBS: &[&str] = &[
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

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

pub struct Lib {
    pub dir: PathBuf,
    pub shared: PathBuf,
    pub static_: PathBuf,
}

/// The cdylib and staticlib that `cargo test` built with the rlib this test
/// binary links. They must exist and come from the same rustc invocation.
pub fn lib() -> Lib {
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

/// Builds the library with `--features panic-injection` (which exports the
/// test-only `mcp_test_inject_panic`) and returns its static library.
///
/// It goes to a target directory of its own under CARGO_TARGET_TMPDIR, kept
/// between runs (so rebuilds are incremental): never the one the other tests
/// use, whose deps/libmcp_stdio.{a,so} carry no hash and would be replaced.
/// A nested cargo works here: `cargo test` does not hold the build lock
/// while the tests run, and this build has its own target directory anyway.
/// Built once per test process.
pub fn panic_injection_static_lib() -> &'static Result<PathBuf, String> {
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

/// `-L<deps> -lmcp_stdio`: links the shared library.
pub fn shared_link_args(lib: &Lib) -> Vec<String> {
    vec![
        format!("-L{}", lib.dir.display()),
        "-lmcp_stdio".to_string(),
    ]
}

/// The static library `a` and the native libraries it needs.
pub fn static_link_args_for(a: &Path) -> Vec<String> {
    let mut v = vec![a.display().to_string()];
    v.extend(NATIVE_STATIC_LIBS.iter().map(|s| s.to_string()));
    v
}

/// Links the static library `cargo test` built.
pub fn static_link_args(lib: &Lib) -> Vec<String> {
    static_link_args_for(&lib.static_)
}

/// DT_NEEDED entries of an ELF file.
pub fn needed(elf: &Path) -> Vec<String> {
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
pub fn library_path_for(program: &Path, lib: &Lib, work: &WorkDir) -> Result<String, String> {
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
