//! Finding the program a server command names, as Windows users expect:
//! `npx` is `npx.cmd`, `uvx` is `uvx.exe`, found in the server's `PATH`
//! with the extensions of its `PATHEXT`. `CreateProcessW` alone would try
//! only `.exe`, and in directories of its own choosing.
//!
//! The rules:
//! - A name with a path in it (a `\` or a `/`, or a drive such as `C:`) is
//!   not searched for: relative to the server's working directory unless it
//!   is absolute. A bare name is looked for in each directory of `PATH` in
//!   order (a relative entry taken from the server's working directory, as
//!   a quoted entry without its quotes); the working directory itself is
//!   not searched (a stray `npx.cmd` in a project must not win).
//! - In each place: the name itself when its extension is one of
//!   `PATHEXT`'s, then the name with each extension of `PATHEXT` added, in
//!   `PATHEXT`'s order (`.COM;.EXE;.BAT;.CMD` when it is not set), compared
//!   without regard to case. A file without such an extension (the shell
//!   script `npx` that npm puts beside `npx.cmd`) is never chosen.
//!
//! `PATH` and `PATHEXT` are the server's: from the environment it will get
//! (its mode and overlays), else the host's. Pure logic over UTF-16 text
//! and a question "is this a file?", so it is tested on every platform.

use super::ascii_upper;

/// What `PATHEXT` is when the environment has none.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().collect()
}

fn is_separator(c: u16) -> bool {
    c == b'\\' as u16 || c == b'/' as u16
}

/// `C:` and the like at the start.
fn has_drive(name: &[u16]) -> bool {
    name.len() >= 2
        && name[1] == b':' as u16
        && char::from_u32(u32::from(name[0])).is_some_and(|c| c.is_ascii_alphabetic())
}

/// Absolute: a UNC or rooted path, or a drive and a root.
fn is_absolute(name: &[u16]) -> bool {
    name.first().is_some_and(|&c| is_separator(c))
        || (has_drive(name) && name.get(2).is_some_and(|&c| is_separator(c)))
}

/// The extension of the last component, dot included (`.cmd`), if any.
fn extension(name: &[u16]) -> Option<&[u16]> {
    let start = name
        .iter()
        .rposition(|&c| is_separator(c))
        .map_or(0, |i| i + 1);
    let dot = name[start..].iter().rposition(|&c| c == b'.' as u16)?;
    Some(&name[start + dot..]).filter(|ext| ext.len() > 1)
}

fn join(dir: &[u16], name: &[u16]) -> Vec<u16> {
    let mut path = dir.to_vec();
    if path.last().is_some_and(|&c| !is_separator(c)) {
        path.push(b'\\' as u16);
    }
    path.extend_from_slice(name);
    path
}

/// The extensions of a `PATHEXT` value, as written, empty entries left out.
fn extensions(pathext: Option<&[u16]>) -> Vec<Vec<u16>> {
    let default = wide(DEFAULT_PATHEXT);
    let list = match pathext {
        Some(value) if value.iter().any(|&c| c != b';' as u16) => value,
        _ => &default[..],
    };
    list.split(|&c| c == b';' as u16)
        .filter(|ext| !ext.is_empty())
        .map(<[u16]>::to_vec)
        .collect()
}

/// The candidates in one place (`base` is the name with its directory).
fn candidates<'a>(base: &'a [u16], exts: &'a [Vec<u16>]) -> impl Iterator<Item = Vec<u16>> + 'a {
    let as_is = extension(base)
        .map(ascii_upper)
        .filter(|ext| exts.iter().any(|e| ascii_upper(e) == *ext))
        .map(|_| base.to_vec());
    as_is.into_iter().chain(exts.iter().map(move |ext| {
        let mut path = base.to_vec();
        path.extend_from_slice(ext);
        path
    }))
}

/// The program `name` stands for, by the rules above; `None` when nothing
/// is found. `cwd` is the server's working directory (absolute).
pub(crate) fn find_program(
    name: &[u16],
    path: Option<&[u16]>,
    pathext: Option<&[u16]>,
    cwd: &[u16],
    is_file: impl Fn(&[u16]) -> bool,
) -> Option<Vec<u16>> {
    if name.is_empty() {
        return None;
    }
    let exts = extensions(pathext);
    if name.iter().any(|&c| is_separator(c)) || has_drive(name) {
        let base = match is_absolute(name) || has_drive(name) {
            true => name.to_vec(),
            false => join(cwd, name),
        };
        return candidates(&base, &exts).find(|p| is_file(p));
    }
    path_entries(path.unwrap_or_default())
        .map(|dir| match is_absolute(dir) || has_drive(dir) {
            true => join(dir, name),
            false => join(&join(cwd, dir), name),
        })
        .find_map(|base| candidates(&base, &exts).find(|p| is_file(p)))
}

/// The directories of a `PATH` value, in order: split at `;`, quotes around
/// one taken off, empty ones left out.
pub(crate) fn path_entries(path: &[u16]) -> impl Iterator<Item = &[u16]> {
    path.split(|&c| c == b';' as u16)
        .map(|dir| {
            dir.strip_prefix(&[b'"' as u16])
                .and_then(|d| d.strip_suffix(&[b'"' as u16]))
                .unwrap_or(dir)
        })
        .filter(|dir| !dir.is_empty())
}

/// The program is a batch file, to be run through `cmd.exe`.
pub(crate) fn is_batch(program: &[u16]) -> bool {
    extension(program)
        .map(ascii_upper)
        .is_some_and(|ext| ext == wide(".BAT") || ext == wide(".CMD"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// `find_program` over a set of files, whose names (as on Windows)
    /// match whatever their case; the answer as text.
    fn find(
        name: &str,
        path: Option<&str>,
        pathext: Option<&str>,
        files: &[&str],
    ) -> Option<String> {
        let files: BTreeSet<Vec<u16>> = files.iter().map(|f| ascii_upper(&wide(f))).collect();
        let (path, pathext) = (path.map(wide), pathext.map(wide));
        find_program(
            &wide(name),
            path.as_deref(),
            pathext.as_deref(),
            &wide(r"C:\work"),
            |p| files.contains(&ascii_upper(p)),
        )
        .map(|p| String::from_utf16(&p).unwrap())
    }

    const NODE: &str = r"C:\Program Files\nodejs";
    const PATH: &str = r"C:\Windows\system32;C:\Program Files\nodejs;C:\Users\me\.local\bin";

    #[test]
    fn npx_is_npx_cmd_and_uvx_is_uvx_exe() {
        let files = [
            r"C:\Program Files\nodejs\npx",
            r"C:\Program Files\nodejs\npx.cmd",
            r"C:\Users\me\.local\bin\uvx.exe",
        ];
        let ext = Some(".COM;.EXE;.BAT;.CMD;.VBS;.JS");
        assert_eq!(
            find("npx", Some(PATH), ext, &files).as_deref(),
            Some(r"C:\Program Files\nodejs\npx.CMD")
        );
        assert_eq!(
            find("uvx", Some(PATH), ext, &files).as_deref(),
            Some(r"C:\Users\me\.local\bin\uvx.EXE")
        );
        assert_eq!(
            find("npx.cmd", Some(PATH), ext, &files).as_deref(),
            Some(r"C:\Program Files\nodejs\npx.cmd")
        );
        assert_eq!(
            find("NPX.CMD", Some(PATH), ext, &files).as_deref(),
            Some(r"C:\Program Files\nodejs\NPX.CMD")
        );
    }

    #[test]
    fn path_order_then_pathext_order() {
        let files = [r"C:\a\tool.cmd", r"C:\b\tool.exe", r"C:\a\tool.bat"];
        assert_eq!(
            find("tool", Some(r"C:\a;C:\b"), None, &files).as_deref(),
            Some(r"C:\a\tool.BAT")
        );
        assert_eq!(
            find("tool", Some(r"C:\b;C:\a"), None, &files).as_deref(),
            Some(r"C:\b\tool.EXE")
        );
        assert_eq!(
            find("tool", Some(r"C:\a"), Some(".cmd;.bat"), &files).as_deref(),
            Some(r"C:\a\tool.cmd")
        );
    }

    #[test]
    fn no_extension_is_never_chosen_and_the_cwd_is_not_searched() {
        let files = [r"C:\work\npx.cmd", &format!(r"{NODE}\npx")];
        assert_eq!(find("npx", Some(NODE), None, &files), None);
        assert_eq!(
            find("server.js", Some(r"C:\work"), None, &[r"C:\work\server.js"]),
            None
        );
    }

    #[test]
    fn paths_are_not_searched_for() {
        let files = [
            r"C:\work\bin\run.cmd",
            r"D:\tools\x.exe",
            r"\\host\share\y.exe",
        ];
        assert_eq!(
            find(r"bin\run", Some(r"C:\elsewhere"), None, &files).as_deref(),
            Some(r"C:\work\bin\run.CMD")
        );
        assert_eq!(
            find("bin/run.cmd", None, None, &[r"C:\work\bin/run.cmd"]).as_deref(),
            Some(r"C:\work\bin/run.cmd")
        );
        assert_eq!(
            find(r"D:\tools\x", None, None, &files).as_deref(),
            Some(r"D:\tools\x.EXE")
        );
        assert_eq!(
            find(r"D:\tools\x.exe", None, None, &files).as_deref(),
            Some(r"D:\tools\x.exe")
        );
        assert_eq!(
            find(r"\\host\share\y.exe", None, None, &files).as_deref(),
            Some(r"\\host\share\y.exe")
        );
    }

    #[test]
    fn odd_path_entries() {
        let files = [r"C:\with space\t.exe", r"C:\work\rel\u.exe"];
        assert_eq!(
            find("t", Some(r#";;"C:\with space";"#), None, &files).as_deref(),
            Some(r"C:\with space\t.EXE")
        );
        assert_eq!(
            find("t.exe", Some(r#";;"C:\with space";"#), None, &files).as_deref(),
            Some(r"C:\with space\t.exe")
        );
        assert_eq!(
            find("u.exe", Some("rel"), None, &files).as_deref(),
            Some(r"C:\work\rel\u.exe")
        );
        assert_eq!(find("t.exe", None, None, &files), None);
        assert_eq!(find("", Some(r"C:\with space"), None, &files), None);
        assert_eq!(
            find("t.exe", Some(r"C:\with space\"), Some(";;"), &files).as_deref(),
            Some(r"C:\with space\t.exe")
        );
    }

    #[test]
    fn batch_files_by_extension() {
        for (path, batch) in [
            (r"C:\x\npx.cmd", true),
            (r"C:\x\RUN.BAT", true),
            (r"C:\x\uvx.exe", false),
            (r"C:\x.cmd\tool.exe", false),
            (r"C:\x\cmd", false),
        ] {
            assert_eq!(is_batch(&wide(path)), batch, "{path}");
        }
    }
}
