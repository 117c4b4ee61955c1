//! Gives the shared library a soname carrying the ABI major version (`TROCAR_VERSION_MAJOR`), so consumers
//! record `libtrocar.so.<major>` and a release that breaks the ABI can be installed beside them.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,-soname,libtrocar.so.{}",
            env!("CARGO_PKG_VERSION_MAJOR")
        );
    }
}
