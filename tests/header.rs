//! The committed C header must equal what cbindgen generates from the sources, and its version macros must
//! equal Cargo.toml's version.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
    let major: u32 = env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap();
    let minor: u32 = env!("CARGO_PKG_VERSION_MINOR").parse().unwrap();
    let patch: u32 = env!("CARGO_PKG_VERSION_PATCH").parse().unwrap();
    assert_eq!(
        trocar::ffi::version::trocar_version(),
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
