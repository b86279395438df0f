//! A Windows server's environment: which of the host's variables it gets,
//! and the block `CreateProcessW` takes.
//!
//! Names are case-insensitive on Windows (`Path` and `PATH` are one
//! variable): overlays replace and removals remove whatever the case, and
//! the block is sorted as Windows keeps it (by the upper-cased name), each
//! `NAME=VALUE` ending in a NUL and the block in one more.
//!
//! The default allow-list is the one the MCP SDKs give a server on Windows,
//! with what a child needs not to fail in strange ways: `SYSTEMROOT`
//! (without it, Winsock and the crypto providers fail), `WINDIR`,
//! `COMSPEC` (how batch files and `system()` run), `PATHEXT`, `TMP`.

/// The host's variables a server gets by default on Windows.
pub(crate) const DEFAULT_ENV: [&str; 16] = [
    "APPDATA",
    "COMSPEC",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "WINDIR",
];

use super::ascii_upper;

/// A variable, as UTF-16 name and value.
pub(crate) type Var = (Vec<u16>, Vec<u16>);

/// The names are one variable.
pub(crate) fn same_name(a: &[u16], b: &[u16]) -> bool {
    a.len() == b.len() && ascii_upper(a) == ascii_upper(b)
}

/// The variables of `host` whose names are in the default allow-list.
pub(crate) fn allowed(host: &[Var]) -> Vec<Var> {
    host.iter()
        .filter(|(name, _)| {
            let name = ascii_upper(name);
            DEFAULT_ENV
                .iter()
                .any(|d| d.encode_utf16().eq(name.iter().copied()))
        })
        .cloned()
        .collect()
}

/// Sets (`Some`) or removes (`None`) the variable `name` in `vars`,
/// whatever the case of its name there.
pub(crate) fn overlay(vars: &mut Vec<Var>, name: &[u16], value: Option<&[u16]>) {
    vars.retain(|(n, _)| !same_name(n, name));
    if let Some(value) = value {
        vars.push((name.to_vec(), value.to_vec()));
    }
}

/// Why an environment block cannot be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadVar {
    /// A name that is empty or holds `=` after its first character.
    Name,
    /// A NUL in a name or a value.
    Nul,
}

/// The environment block for `CreateProcessW` (`CREATE_UNICODE_ENVIRONMENT`).
pub(crate) fn block(vars: &[Var]) -> Result<Vec<u16>, BadVar> {
    let mut sorted: Vec<&Var> = vars.iter().collect();
    sorted.sort_by_key(|(name, _)| ascii_upper(name));
    let mut block = Vec::new();
    for (name, value) in sorted {
        // A leading `=` is allowed: cmd.exe's per-drive directories (`=C:`).
        if name.is_empty() || name[1..].contains(&(b'=' as u16)) {
            return Err(BadVar::Name);
        }
        if name.contains(&0) || value.contains(&0) {
            return Err(BadVar::Nul);
        }
        block.extend_from_slice(name);
        block.push(b'=' as u16);
        block.extend_from_slice(value);
        block.push(0);
    }
    if block.is_empty() {
        block.push(0); // an empty block is two NULs
    }
    block.push(0);
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> Vec<u16> {
        text.encode_utf16().collect()
    }

    fn vars(list: &[(&str, &str)]) -> Vec<Var> {
        list.iter().map(|(n, v)| (w(n), w(v))).collect()
    }

    #[test]
    fn the_allow_list_matches_any_case() {
        let host = vars(&[
            ("Path", r"C:\Windows;C:\node"),
            ("SystemRoot", r"C:\Windows"),
            ("SECRET_TOKEN", "x"),
            ("windir", r"C:\Windows"),
            ("PATHEXT", ".COM;.EXE;.BAT;.CMD"),
            ("WINEDEBUG", "-all"),
        ]);
        let names: Vec<String> = allowed(&host)
            .iter()
            .map(|(n, _)| String::from_utf16(n).unwrap())
            .collect();
        assert_eq!(names, ["Path", "SystemRoot", "windir", "PATHEXT"]);
    }

    #[test]
    fn overlays_replace_and_remove_whatever_the_case() {
        let mut env = vars(&[("Path", "a"), ("TEMP", "t")]);
        overlay(&mut env, &w("PATH"), Some(&w("b")));
        overlay(&mut env, &w("temp"), None);
        overlay(&mut env, &w("NEW"), Some(&w("")));
        assert_eq!(env, vars(&[("PATH", "b"), ("NEW", "")]));
    }

    #[test]
    fn the_block_is_sorted_and_terminated() {
        let env = vars(&[("b", "2"), ("A", "1"), ("=C:", r"C:\x"), ("_u", "3")]);
        let block = String::from_utf16(&block(&env).unwrap()).unwrap();
        assert_eq!(block, "=C:=C:\\x\0A=1\0b=2\0_u=3\0\0");
        assert_eq!(block_of(&[]), "\0\0");
        assert_eq!(super::block(&vars(&[("A=B", "1")])), Err(BadVar::Name));
        assert_eq!(super::block(&vars(&[("", "1")])), Err(BadVar::Name));
        assert_eq!(super::block(&vars(&[("A", "1\u{0}2")])), Err(BadVar::Nul));
    }

    fn block_of(list: &[(&str, &str)]) -> String {
        String::from_utf16(&block(&vars(list)).unwrap()).unwrap()
    }
}
