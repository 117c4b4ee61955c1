//! Compiles the C++ shims over FCL and Bullet (peers/native/) that the clip_select bench and its hit test call,
//! with the include paths and libraries pkg-config gives for the Debian packages libfcl-dev and libbullet-dev.

use std::process::{Command, exit};

/// Each shim, the pkg-config module of the library it wraps, the Debian package that installs it, and the
/// environment variable that hands the bench the library's version.
const SHIMS: [(&str, &str, &str, &str); 2] = [
    ("fcl_select", "fcl", "libfcl-dev", "TROCAR_FCL_VERSION"),
    (
        "bullet_select",
        "bullet",
        "libbullet-dev",
        "TROCAR_BULLET_VERSION",
    ),
];

/// The installed Debian package's version (say "libfcl-dev 0.7.0-3+b1"), or the pkg-config module's where dpkg
/// knows none.
fn version(package: &str, lib: &pkg_config::Library) -> String {
    Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", package])
        .output()
        .ok()
        .filter(|out| out.status.success() && !out.stdout.is_empty())
        .map_or_else(
            || lib.version.clone(),
            |out| format!("{package} {}", String::from_utf8_lossy(&out.stdout)),
        )
}

fn main() {
    let found = SHIMS.map(|(_, module, _, _)| {
        pkg_config::Config::new()
            .cargo_metadata(false)
            .probe(module)
    });
    // A clear failure naming every missing package.
    let missing: Vec<&str> = SHIMS
        .iter()
        .zip(&found)
        .filter(|(_, lib)| lib.is_err())
        .map(|((_, _, package, _), _)| *package)
        .collect();
    if !missing.is_empty() {
        println!(
            "cargo::error=trocar-peers (the clip_select bench's FCL and Bullet peers) needs the Debian package(s) \
             {0}, which pkg-config does not find: apt-get install {0} (scripts/test-all.sh installs them)",
            missing.join(" ")
        );
        exit(0);
    }
    for ((shim, _, package, env), lib) in SHIMS.into_iter().zip(found) {
        let lib = lib.expect("checked above");
        println!("cargo::rustc-env={env}={}", version(package, &lib));
        let source = format!("native/{shim}.cpp");
        println!("cargo::rerun-if-changed={source}");
        let mut build = cc::Build::new();
        build.cpp(true).file(&source).includes(&lib.include_paths);
        // fcl.pc asks for -std=c++11 among its flags; Eigen and Bullet want aligned `new`, from C++17.
        build.std("c++17").warnings(false);
        for (name, value) in &lib.defines {
            build.define(name, value.as_deref());
        }
        build.compile(shim);
        // The libraries after the shim's archive, which needs them.
        for path in &lib.link_paths {
            println!("cargo::rustc-link-search=native={}", path.display());
        }
        for name in &lib.libs {
            println!("cargo::rustc-link-lib={name}");
        }
    }
}
