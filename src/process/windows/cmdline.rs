//! The command line a Windows process is started with. Windows hands a new
//! process one UTF-16 string, and the program splits it back into
//! arguments itself: a program built with the Microsoft C runtime (or
//! MinGW's, or Rust's std) by the rules of `CommandLineToArgvW`; a batch
//! file (`.cmd`, `.bat`) by `cmd.exe`, whose rules are another language,
//! with `&`, `|`, `<`, `>`, `^` and `%VAR%` in it. Built wrong, an argument
//! such as `"&calc` runs a command (the "BatBadBut" class, CVE-2024-24576).
//!
//! The rules here are the ones Rust's standard library follows since that
//! CVE:
//! - A program: its path quoted (a file name cannot hold `"`), then each
//!   argument quoted when it is empty or holds a space or a tab. Inside,
//!   backslashes are literal except before a `"`: `n` backslashes then `"`
//!   become `2n + 1` backslashes then `"`, and `n` backslashes at the end of
//!   a quoted argument become `2n` before the closing quote.
//! - A batch file: `cmd.exe /e:ON /v:OFF /d /c ""script" args"`, with the
//!   application set to `cmd.exe` itself (not found through `PATH`).
//!   `/d` runs no AutoRun commands, `/v:OFF` turns delayed expansion (`!`)
//!   off, `/e:ON` keeps the extensions the `%` escape needs. An argument is
//!   quoted unless it holds only letters, digits and ``#$*+-./:?@\_``;
//!   inside quotes `"` is doubled, and `%` becomes `%%cd:~,%` (a substring
//!   of zero length of the variable `cd`, which cmd.exe expands to nothing,
//!   so that a `%NAME%` in an argument is never expanded). An argument
//!   ending with `\` is quoted and its trailing backslashes doubled. What
//!   cannot be escaped is refused: a CR or LF ends the command there, so an
//!   argument holding one is an error, as is a script path holding `"` or
//!   ending with `\`.
//!
//! Everything is UTF-16 code units, as the caller's `OsStr`s encode on
//! Windows (unpaired surrogates pass through). Pure functions: they are
//! compiled and tested on every platform.

/// Why a command line cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A NUL in the program or an argument: the command line is a C string.
    Nul,
    /// The program's path holds `"`, or a batch file's ends with `\`: no
    /// Windows file name does, and the quoting could not hold it.
    BadProgramPath,
    /// An argument for a batch file holds a CR or an LF, where cmd.exe would
    /// end the command.
    LineBreakForBatch,
}

const QUOTE: u16 = b'"' as u16;
const BACKSLASH: u16 = b'\\' as u16;

fn wide(text: &str) -> impl Iterator<Item = u16> + '_ {
    text.encode_utf16()
}

fn check_nul(text: &[u16]) -> Result<(), Refused> {
    match text.contains(&0) {
        true => Err(Refused::Nul),
        false => Ok(()),
    }
}

/// The command line for `program` (an executable: `.exe`, `.com`) and
/// `args`: `"program" args...`.
pub(crate) fn program_line(program: &[u16], args: &[&[u16]]) -> Result<Vec<u16>, Refused> {
    check_nul(program)?;
    if program.contains(&QUOTE) {
        return Err(Refused::BadProgramPath);
    }
    let mut line =
        Vec::with_capacity(program.len() + 2 + args.iter().map(|a| a.len() + 3).sum::<usize>());
    line.push(QUOTE);
    line.extend_from_slice(program);
    line.push(QUOTE);
    for arg in args {
        check_nul(arg)?;
        line.push(b' ' as u16);
        push_program_arg(&mut line, arg);
    }
    Ok(line)
}

/// One argument by the rules of `CommandLineToArgvW`.
fn push_program_arg(line: &mut Vec<u16>, arg: &[u16]) {
    let quote = arg.is_empty() || arg.iter().any(|&c| c == b' ' as u16 || c == b'\t' as u16);
    if quote {
        line.push(QUOTE);
    }
    let mut backslashes = 0usize;
    for &c in arg {
        if c == BACKSLASH {
            backslashes += 1;
        } else {
            if c == QUOTE {
                // n backslashes before a quote: n + 1 more, then the quote.
                line.extend(std::iter::repeat_n(BACKSLASH, backslashes + 1));
            }
            backslashes = 0;
        }
        line.push(c);
    }
    if quote {
        // n backslashes before the closing quote: n more.
        line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
        line.push(QUOTE);
    }
}

/// The command line that runs the batch file `script` (its full path) with
/// `args` through `cmd.exe`; the process's application is `cmd.exe` from
/// the system directory.
pub(crate) fn batch_line(script: &[u16], args: &[&[u16]]) -> Result<Vec<u16>, Refused> {
    check_nul(script)?;
    if script.contains(&QUOTE) || script.last() == Some(&BACKSLASH) {
        return Err(Refused::BadProgramPath);
    }
    let mut line: Vec<u16> = wide("cmd.exe /e:ON /v:OFF /d /c \"\"").collect();
    line.extend_from_slice(script);
    line.push(QUOTE);
    for arg in args {
        check_nul(arg)?;
        if arg.iter().any(|&c| c == b'\r' as u16 || c == b'\n' as u16) {
            return Err(Refused::LineBreakForBatch);
        }
        line.push(b' ' as u16);
        push_batch_arg(&mut line, arg);
    }
    line.push(QUOTE);
    Ok(line)
}

/// Characters of an argument that cmd.exe takes as they are, unquoted.
fn plain_for_batch(c: u16) -> bool {
    match char::from_u32(u32::from(c)) {
        Some(c) if c.is_ascii() => c.is_ascii_alphanumeric() || r"#$*+-./:?@\_".contains(c),
        Some(c) => !c.is_control(),
        None => true, // a lone surrogate: no meaning to cmd.exe
    }
}

/// One argument of a batch file, escaped for cmd.exe.
fn push_batch_arg(line: &mut Vec<u16>, arg: &[u16]) {
    let quote = arg.is_empty()
        || arg.last() == Some(&BACKSLASH)
        || !arg.iter().all(|&c| plain_for_batch(c));
    if quote {
        line.push(QUOTE);
    }
    let mut backslashes = 0usize;
    for &c in arg {
        if c == BACKSLASH {
            backslashes += 1;
        } else {
            if c == QUOTE {
                // The backslashes before it doubled, and the quote doubled.
                line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
                line.push(QUOTE);
            } else if c == b'%' as u16 {
                line.extend(wide("%%cd:~,"));
            }
            backslashes = 0;
        }
        line.push(c);
    }
    if quote {
        line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
        line.push(QUOTE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> Vec<u16> {
        text.encode_utf16().collect()
    }

    fn program(prog: &str, args: &[&str]) -> Result<String, Refused> {
        let args: Vec<Vec<u16>> = args.iter().map(|a| w(a)).collect();
        let args: Vec<&[u16]> = args.iter().map(Vec::as_slice).collect();
        program_line(&w(prog), &args).map(|l| String::from_utf16(&l).unwrap())
    }

    fn batch(script: &str, args: &[&str]) -> Result<String, Refused> {
        let args: Vec<Vec<u16>> = args.iter().map(|a| w(a)).collect();
        let args: Vec<&[u16]> = args.iter().map(Vec::as_slice).collect();
        batch_line(&w(script), &args).map(|l| String::from_utf16(&l).unwrap())
    }

    /// Each expected line written out by hand from the rules above.
    #[test]
    fn program_lines() {
        let node = r"C:\Program Files\nodejs\node.exe";
        let cases: &[(&[&str], &str)] = &[
            (&[], r#""C:\Program Files\nodejs\node.exe""#),
            (
                &["server.js", "--port", "0"],
                r#""C:\Program Files\nodejs\node.exe" server.js --port 0"#,
            ),
            (&[""], r#""C:\Program Files\nodejs\node.exe" """#),
            (
                &["a b", "tab\there"],
                "\"C:\\Program Files\\nodejs\\node.exe\" \"a b\" \"tab\there\"",
            ),
            (
                &[r#"say "hi""#],
                r#""C:\Program Files\nodejs\node.exe" "say \"hi\"""#,
            ),
            (&[r#"x"y"#], r#""C:\Program Files\nodejs\node.exe" x\"y"#),
            (
                &[r"C:\dir\", r"C:\my dir\"],
                r#""C:\Program Files\nodejs\node.exe" C:\dir\ "C:\my dir\\""#,
            ),
            (
                &[r#"\\"q"#, r#"a\\b"#],
                r#""C:\Program Files\nodejs\node.exe" \\\\\"q a\\b"#,
            ),
            (
                &[r#""&calc"#, "%PATH%", "^", "<in", "a|b", "protobuf<7"],
                r#""C:\Program Files\nodejs\node.exe" \"&calc %PATH% ^ <in a|b protobuf<7"#,
            ),
            (
                &["h\u{e9}llo \u{2713}"],
                "\"C:\\Program Files\\nodejs\\node.exe\" \"h\u{e9}llo \u{2713}\"",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(program(node, args).as_deref(), Ok(*want), "{args:?}");
        }
    }

    #[test]
    fn program_refusals() {
        assert_eq!(program("a\"b.exe", &[]), Err(Refused::BadProgramPath));
        assert_eq!(program("a\0.exe", &[]), Err(Refused::Nul));
        assert_eq!(program("a.exe", &["x\0y"]), Err(Refused::Nul));
    }

    /// Each expected line written out by hand from the rules above: the
    /// hostile arguments of the BatBadBut write-ups among them.
    #[test]
    fn batch_lines() {
        let npx = r"C:\Program Files\nodejs\npx.cmd";
        let head = r#"cmd.exe /e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd""#;
        let cases: &[(&[&str], &str)] = &[
            (&[], ""),
            (
                &["-y", "@modelcontextprotocol/server-everything"],
                " -y @modelcontextprotocol/server-everything",
            ),
            (
                &["plain-arg_1.2:x?y*z#$+@", r"C:\dir\file"],
                r" plain-arg_1.2:x?y*z#$+@ C:\dir\file",
            ),
            (&[""], r#" """#),
            (&["a b"], r#" "a b""#),
            (&[r#""&calc"#], r#" """&calc""#),
            (&[r#"" & calc.exe"#], r#" """ & calc.exe""#),
            (&["%PATH%"], r#" "%%cd:~,%PATH%%cd:~,%""#),
            (&["100%"], r#" "100%%cd:~,%""#),
            (
                &["^", "<", ">", "|", "&", "(x)", "!v!", ",", ";", "="],
                r#" "^" "<" ">" "|" "&" "(x)" "!v!" "," ";" "=""#,
            ),
            (&["protobuf<7"], r#" "protobuf<7""#),
            (&[r"C:\dir\"], r#" "C:\dir\\""#),
            (&[r"C:\my dir\\"], r#" "C:\my dir\\\\""#),
            (&[r#"a\"b"#], r#" "a\\""b""#),
            (&["tab\there"], " \"tab\there\""),
            (&["h\u{e9}llo\u{2713}"], " h\u{e9}llo\u{2713}"),
        ];
        for (args, want) in cases {
            let want = format!("{head}{want}\"");
            assert_eq!(batch(npx, args).as_deref(), Ok(want.as_str()), "{args:?}");
        }
    }

    #[test]
    fn batch_refusals() {
        let cmd = r"C:\tools\run.cmd";
        assert_eq!(batch(cmd, &["a\nb"]), Err(Refused::LineBreakForBatch));
        assert_eq!(batch(cmd, &["a\rb"]), Err(Refused::LineBreakForBatch));
        assert_eq!(batch(cmd, &["a\0b"]), Err(Refused::Nul));
        assert_eq!(batch(r#"C:\a"b.cmd"#, &[]), Err(Refused::BadProgramPath));
        assert_eq!(batch(r"C:\dir\", &[]), Err(Refused::BadProgramPath));
    }

    /// `CommandLineToArgvW`'s rules for the arguments after the program,
    /// written from Microsoft's description ("Parsing C++ command-line
    /// arguments"), independently of the builder.
    fn split_args(line: &[u16]) -> Vec<Vec<u16>> {
        // argv[0]: up to the next quote when it starts with one.
        let mut i = 0;
        if line.first() == Some(&QUOTE) {
            i = 1 + line[1..].iter().position(|&c| c == QUOTE).unwrap() + 1;
        } else {
            while i < line.len() && line[i] != b' ' as u16 {
                i += 1;
            }
        }
        let mut args = Vec::new();
        loop {
            while i < line.len() && (line[i] == b' ' as u16 || line[i] == b'\t' as u16) {
                i += 1;
            }
            if i == line.len() {
                return args;
            }
            let (mut arg, mut quoted) = (Vec::new(), false);
            while i < line.len() {
                let c = line[i];
                if c == BACKSLASH {
                    let n = line[i..].iter().take_while(|&&c| c == BACKSLASH).count();
                    i += n;
                    if line.get(i) == Some(&QUOTE) {
                        arg.extend(std::iter::repeat_n(BACKSLASH, n / 2));
                        if n % 2 == 1 {
                            arg.push(QUOTE);
                            i += 1;
                        }
                    } else {
                        arg.extend(std::iter::repeat_n(BACKSLASH, n));
                    }
                } else if c == QUOTE {
                    if quoted && line.get(i + 1) == Some(&QUOTE) {
                        arg.push(QUOTE); // "" inside quotes: a literal quote
                        i += 2;
                    } else {
                        quoted = !quoted;
                        i += 1;
                    }
                } else if !quoted && (c == b' ' as u16 || c == b'\t' as u16) {
                    break;
                } else {
                    arg.push(c);
                    i += 1;
                }
            }
            args.push(arg);
        }
    }

    proptest::proptest! {
        // Under Miri a few cases take every path (scripts/miri.sh also sets
        // PROPTEST_CASES for the properties on the default config).
        #![proptest_config(proptest::test_runner::Config {
            cases: if cfg!(miri) { 8 } else { 256 },
            ..Default::default()
        })]
        /// Whatever the arguments, the program gets exactly them back.
        #[test]
        fn program_arguments_come_back_as_given(
            args in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(
                    vec![b'a' as u16, b' ' as u16, b'\t' as u16, b'"' as u16, b'\\' as u16,
                         b'&' as u16, b'%' as u16, 0xe9, 0xd800]), 0..8), 0..6)
        ) {
            let refs: Vec<&[u16]> = args.iter().map(Vec::as_slice).collect();
            let line = program_line(&w(r"C:\x\p.exe"), &refs).unwrap();
            proptest::prop_assert_eq!(split_args(&line), args);
        }
    }
}
