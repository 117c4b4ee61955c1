//! The repository is self-contained: nothing in it reads data from outside the checkout, and every vendored data
//! file has its provenance in `data/README.md`.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, skipping build output and version control.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), ".git" | "target" | "build") {
                files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

#[test]
fn no_file_reaches_outside_the_checkout() {
    // Built from pieces so that this file does not match itself.
    let forbidden = [
        format!("{}/{}", "..", "shared"),
        format!("{}_{}", "TROCAR", "SHARED"),
        format!("{}\")).join(\"..", "CARGO_MANIFEST_DIR"),
    ];
    let mut all = Vec::new();
    files(&root(), &mut all);
    let mut found = Vec::new();
    for path in &all {
        let Ok(text) = fs::read_to_string(path) else {
            continue; // binary
        };
        for (n, line) in text.lines().enumerate() {
            if forbidden.iter().any(|f| line.contains(f.as_str())) {
                let rel = path.strip_prefix(root()).unwrap();
                found.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "paths outside the checkout (vendor the data under data/ instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_data_file_has_its_provenance() {
    let data = root().join("data");
    let readme = fs::read_to_string(data.join("README.md")).expect("data/README.md");
    let mut all = Vec::new();
    files(&data, &mut all);
    assert!(all.len() > 1, "data/ holds the vendored files");
    for path in all {
        let rel = path
            .strip_prefix(&data)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "README.md" {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            readme.contains(&rel) || readme.contains(&name),
            "data/{rel} is not described in data/README.md"
        );
    }
}
