// The run path of the binary: the directory trainwatch-sys linked libtrainwatch from (pkg-config's or
// TRAINWATCH_LIB_DIR's), so that the program starts without LD_LIBRARY_PATH.
fn main() {
    if let Some(dir) = std::env::var_os("DEP_TRAINWATCH_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", std::path::Path::new(&dir).display());
    }
}
