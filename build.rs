//! Gives the shared library a soname that changes whenever the ABI may break: `libtrocar.so.0.<minor>` while the
//! major is 0 (each 0.x minor may break it), `libtrocar.so.<major>` from 1.0 on. Consumers record it, and a release
//! with another ABI can be installed beside them.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let major = env!("CARGO_PKG_VERSION_MAJOR");
        let abi = if major == "0" {
            format!("0.{}", env!("CARGO_PKG_VERSION_MINOR"))
        } else {
            major.to_string()
        };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtrocar.so.{abi}");
    }
}
