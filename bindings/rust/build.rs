//! Links the crate against libtrainwatch. `TRAINWATCH_LIB_DIR` names the directory holding
//! `libtrainwatch.so` (the meson build's `src/`, as `tools/test` sets it); without it the system's
//! library search path is used (an installed trainwatch). Test binaries get an rpath to that
//! directory so that `cargo test` runs without `LD_LIBRARY_PATH`.
use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=TRAINWATCH_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(dir) = env::var_os("TRAINWATCH_LIB_DIR") {
        let dir = Path::new(&dir);
        if !dir.join("libtrainwatch.so").exists() && !dir.join("libtrainwatch.so.0").exists() {
            panic!("TRAINWATCH_LIB_DIR={} holds no libtrainwatch.so", dir.display());
        }
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=trainwatch");
}
