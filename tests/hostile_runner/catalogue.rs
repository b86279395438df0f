//! The catalogue: the cases of `tests/hostile/` (an `.expected` file and its
//! input, an `.in` file or a `.gen` recipe), loaded and checked for strays.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::expected::parse_expected;
use crate::items::Want;
use crate::notation::{check_line, nodes_len, parse_notation, render, Node};

/// One case: its input, the reader settings and the items its `.expected` file lists.
#[derive(Debug)]
pub struct Case {
    pub name: String,
    /// Where the input comes from, and its length; `input` is filled just before the case runs.
    pub source: Source,
    pub input_len: usize,
    pub input: Vec<u8>,
    /// `usize::MAX`: no limit.
    pub max_line_len: usize,
    pub skip_invalid: bool,
    pub jsonrpc: bool,
    pub finish: bool,
    pub want: Vec<Want>,
}

/// Where a case's input comes from: an `.in` file, or a `.gen` recipe in the byte notation.
#[derive(Debug)]
pub enum Source {
    File(PathBuf),
    Recipe(Vec<Node>),
}

impl Case {
    pub fn load_input(&mut self) {
        self.input = match &self.source {
            Source::File(path) => fs::read(path).unwrap(),
            Source::Recipe(nodes) => {
                let mut out = Vec::with_capacity(self.input_len);
                render(nodes, &mut out);
                out
            }
        };
        assert_eq!(self.input.len(), self.input_len);
    }
}

fn catalogue_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// The input of a `.gen` recipe: the byte notation, one piece per line,
/// concatenated (the file's own line breaks are not part of the input).
fn parse_recipe(recipe: &str) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    for (n, line) in recipe.lines().enumerate() {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        check_line(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        nodes.extend(parse_notation(line).map_err(|e| format!("line {}: {e}", n + 1))?);
    }
    Ok(nodes)
}

/// Every case of the catalogue, sorted by name, or the ones `HOSTILE_CASE` names.
pub fn load_catalogue() -> Vec<Case> {
    let dir = catalogue_dir();
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in fs::read_dir(&dir).expect("tests/hostile exists") {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if file == "README.md" {
            continue;
        }
        let (stem, ext) = file
            .rsplit_once('.')
            .unwrap_or_else(|| panic!("{file}: no extension"));
        assert!(
            matches!(ext, "in" | "gen" | "expected"),
            "tests/hostile/{file}: only .in, .gen and .expected files belong here"
        );
        files.entry(stem.into()).or_default().insert(ext.into());
    }
    let source = |stem: &str| -> (Source, usize) {
        let exts = &files[stem];
        assert!(
            !(exts.contains("in") && exts.contains("gen")),
            "{stem}: both .in and .gen"
        );
        if exts.contains("in") {
            let path = dir.join(format!("{stem}.in"));
            let len = fs::metadata(&path).unwrap().len() as usize;
            (Source::File(path), len)
        } else if exts.contains("gen") {
            let recipe = fs::read_to_string(dir.join(format!("{stem}.gen"))).unwrap();
            let nodes = parse_recipe(&recipe).unwrap_or_else(|e| panic!("{stem}.gen: {e}"));
            let len = nodes_len(&nodes);
            (Source::Recipe(nodes), len)
        } else {
            panic!("{stem}: no .in or .gen")
        }
    };
    let only: Option<Vec<String>> = std::env::var("HOSTILE_CASE")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let mut used_inputs = BTreeSet::new();
    let mut cases = Vec::new();
    for (stem, exts) in &files {
        if !exts.contains("expected") {
            continue;
        }
        let text = fs::read_to_string(dir.join(format!("{stem}.expected"))).unwrap();
        let (mut case, input_from) = parse_expected(stem, &text).unwrap_or_else(|e| panic!("{e}"));
        let input_stem = match input_from {
            Some(other) => {
                assert!(
                    !exts.contains("in") && !exts.contains("gen"),
                    "{stem}: `# input:` and an input file of its own"
                );
                assert!(files.contains_key(&other), "{stem}: no input {other:?}");
                other
            }
            None => stem.clone(),
        };
        used_inputs.insert(input_stem.clone());
        if only.as_ref().is_some_and(|o| !o.contains(stem)) {
            continue;
        }
        (case.source, case.input_len) = source(&input_stem);
        cases.push(case);
    }
    for (stem, exts) in &files {
        assert!(
            used_inputs.contains(stem) || !(exts.contains("in") || exts.contains("gen")),
            "{stem}: an input no .expected file uses"
        );
    }
    if let Some(only) = &only {
        assert_eq!(cases.len(), only.len(), "HOSTILE_CASE names unknown cases");
    }
    cases
}
