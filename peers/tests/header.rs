//! The committed C header must equal what cbindgen generates from the sources, and its version macros must
//! equal Cargo.toml's version.
//!
//! This test is in the workspace member `peers/` (with cbindgen, which the library's own targets do not need);
//! it checks the root package, trocar: its `include/trocar.h`, `cbindgen.toml`, `src/ffi` and version.

use std::path::PathBuf;

/// The root package's directory: the repository root, above this package's `peers/`.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("peers/ is inside the repository")
        .to_path_buf()
}

/// The root package's version (major, minor, patch): its Cargo.toml's first `version = "X.Y.Z"` line, the
/// `[package]` one (as scripts/install.sh reads it).
fn trocar_version() -> (u32, u32, u32) {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let version = manifest
        .lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("a version = \"X.Y.Z\" line in Cargo.toml");
    let parts: Vec<u32> = version
        .split('.')
        .map(|part| part.parse().expect("a numeric version"))
        .collect();
    let [major, minor, patch] = parts[..] else {
        panic!("version {version} is not X.Y.Z");
    };
    (major, minor, patch)
}

fn generate() -> String {
    let config = cbindgen::Config::from_file(root().join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root())
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("utf-8 header")
}

#[test]
fn committed_header_is_up_to_date() {
    let path = root().join("include/trocar.h");
    let fresh = generate();
    if std::env::var_os("TROCAR_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/trocar.h");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/trocar.h is stale: run `TROCAR_BLESS=1 cargo test --test header` and commit it"
    );
}

#[test]
fn version_matches_cargo_toml() {
    let (major, minor, patch) = trocar_version();
    assert_eq!(
        trocar::internals::ffi::version::trocar_version(),
        (major << 16) | (minor << 8) | patch
    );
    let header = std::fs::read_to_string(root().join("include/trocar.h")).unwrap();
    for (name, value) in [("MAJOR", major), ("MINOR", minor), ("PATCH", patch)] {
        let line = format!("#define TROCAR_VERSION_{name} {value}");
        assert!(header.contains(&line), "header lacks `{line}`");
    }
}

#[test]
fn header_names_are_prefixed() {
    let header = generate();
    let mut names = Vec::new();
    for line in header.lines() {
        let words: Vec<&str> = line
            .trim_end_matches([';', '{', ' '])
            .split_whitespace()
            .collect();
        match words.as_slice() {
            ["#define", name, ..] if *name != "TROCAR_H" => names.push(name.to_string()),
            ["typedef", .., name] | ["}", name] => names.push(name.to_string()),
            // A function declaration: `ret name(args...`.
            [first, ..] if !first.starts_with(['#', '/', '*']) && line.contains('(') => {
                let name = line
                    .split('(')
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .last()
                    .unwrap();
                names.push(name.trim_start_matches('*').to_string());
            }
            _ => {}
        }
    }
    assert!(names.len() > 40, "parsed too few names: {names:?}");
    for name in names {
        assert!(
            name.starts_with("TROCAR_")
                || name.starts_with("Trocar")
                || name.starts_with("trocar_"),
            "header leaks a non-API name: {name}"
        );
    }
}
