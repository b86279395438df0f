//! The shared library as a program loads it: it exports the C API and
//! nothing but `mcp_` symbols, and its SONAME carries the header's ABI version.

use std::fs;
use std::process::Command;

use crate::toolchain::library::lib;
use crate::toolchain::run::{run_ok, stdout_of};
use crate::toolchain::sources::include_dir;
use crate::toolchain::work_dir::WorkDir;

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

// ---------------------------------------------------------------------------
// exported symbols

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
// SONAME

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
