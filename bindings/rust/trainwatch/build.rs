//! Gives this crate's own test and example binaries a run path to the libtrainwatch that
//! trainwatch-sys linked, so that `cargo test` runs without `LD_LIBRARY_PATH`. Applications that
//! depend on this crate are not affected (see README.md, "Install").
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TRAINWATCH_LIBDIR");
    if let Some(dir) = std::env::var_os("DEP_TRAINWATCH_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", std::path::Path::new(&dir).display());
    }
}
