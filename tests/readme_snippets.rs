//! README.md shows code that the tests compile and run: every code block
//! after a `<!-- snippet: PATH -->` marker is exactly that file, and after
//! `<!-- snippet: PATH#NAME -->` exactly the lines between `snippet-start
//! NAME` and `snippet-end NAME` in it (common indentation removed).

use std::fs;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `text` without the indentation all its non-blank lines share, trimmed.
fn dedent(text: &str) -> String {
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = text
        .lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect();
    lines.join("\n").trim().to_string()
}

/// The text a marker names.
fn source_of(marker: &str) -> String {
    let (path, name) = match marker.split_once('#') {
        Some((path, name)) => (path, Some(name)),
        None => (marker, None),
    };
    let text = fs::read_to_string(root().join(path))
        .unwrap_or_else(|e| panic!("README names {path}, which cannot be read: {e}"));
    let Some(name) = name else {
        return dedent(&text);
    };
    let start = format!("snippet-start {name}");
    let end = format!("snippet-end {name}");
    let mut inside = false;
    let mut region = Vec::new();
    for line in text.lines() {
        if line.contains(&end) {
            return dedent(&region.join("\n"));
        }
        if inside {
            region.push(line);
        }
        if line.contains(&start) {
            inside = true;
        }
    }
    panic!("{path} has no region {name} (snippet-start/snippet-end)");
}

/// Checks every marked block of the README at `path`; the markers found.
fn check_readme(path: &str) -> Vec<String> {
    let readme = fs::read_to_string(root().join(path)).expect(path);
    let mut checked = Vec::new();
    let mut rest = readme.as_str();
    while let Some(at) = rest.find("<!-- snippet: ") {
        let after = &rest[at + "<!-- snippet: ".len()..];
        let marker = after[..after.find(" -->").expect("marker closed")].trim();
        let open = after.find("```").expect("a code block follows the marker");
        let body_start = open + after[open..].find('\n').expect("fence line") + 1;
        let body_len = after[body_start..].find("```").expect("code block closed");
        let shown = dedent(&after[body_start..body_start + body_len]);
        assert_eq!(
            shown,
            source_of(marker),
            "{path}'s block for {marker} differs from the tested code"
        );
        checked.push(marker.to_string());
        rest = &after[body_start + body_len..];
    }
    checked
}

#[test]
fn readme_snippets_are_the_tested_code() {
    let checked = check_readme("README.md");
    // The sections the README must keep: C++, Go, Swift, CMake, vendoring.
    for needed in [
        "tests/cpp/readme_example.cpp",
        "bindings/go/example_test.go#decoder",
        "bindings/swift/Sources/CMcpStdio/module.modulemap",
        "tests/packaging/find_package/CMakeLists.txt#find_package",
        "tests/packaging/add_subdirectory/CMakeLists.txt#add_subdirectory",
    ] {
        assert!(
            checked.iter().any(|c| c == needed),
            "README.md lacks the snippet {needed}"
        );
    }
}

#[test]
fn go_readme_snippets_are_the_tested_code() {
    let checked = check_readme("bindings/go/README.md");
    for needed in [
        "bindings/go/example_test.go#decoder",
        "bindings/go/example_test.go#conn",
        "bindings/go/command_example_test.go#command",
    ] {
        assert!(
            checked.iter().any(|c| c == needed),
            "bindings/go/README.md lacks the snippet {needed}"
        );
    }
}
