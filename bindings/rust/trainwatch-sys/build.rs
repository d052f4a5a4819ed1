//! Finds libtrainwatch and links it.
//!
//! 1. `TRAINWATCH_LIB_DIR`, when set, names the directory holding `libtrainwatch.so` (a build tree, an
//!    unpacked archive). It wins over pkg-config, so that a build tree is tested even where another
//!    trainwatch is installed.
//! 2. Otherwise `pkg-config trainwatch` (the `pkg-config` program, or `$PKG_CONFIG`; honours
//!    `PKG_CONFIG_PATH` and `PKG_CONFIG_SYSROOT_DIR`), as installed by the C library.
//! 3. Otherwise the build fails, saying what to install.
//!
//! The directory is passed on as `DEP_TRAINWATCH_LIBDIR` to the build scripts of crates that depend
//! on this one directly (an application's build script can give its binary a run path with it), and
//! as the run path of this package's own test binaries.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    for var in ["TRAINWATCH_LIB_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    println!("cargo:rerun-if-changed=build.rs");
    let dir = match env::var_os("TRAINWATCH_LIB_DIR") {
        Some(dir) => from_lib_dir(Path::new(&dir)),
        None => from_pkg_config().unwrap_or_else(|why| fail(&why)),
    };
    if let Some(dir) = dir {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:libdir={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=trainwatch");
}

fn from_lib_dir(dir: &Path) -> Option<PathBuf> {
    if !dir.join("libtrainwatch.so").exists() && !dir.join("libtrainwatch.so.0").exists() {
        fail(&format!("TRAINWATCH_LIB_DIR={} holds no libtrainwatch.so", dir.display()));
    }
    Some(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
}

/// The library directory pkg-config gives (`-L`, sysroot applied; `None` when it is the linker's
/// default, which pkg-config leaves out), or why pkg-config failed.
fn from_pkg_config() -> Result<Option<PathBuf>, String> {
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let output = Command::new(&program)
        .args(["--libs-only-L", "trainwatch"])
        .output()
        .map_err(|e| format!("could not run {} ({})", program, e))?;
    if !output.status.success() {
        return Err(format!(
            "`{} --libs-only-L trainwatch` failed: {}",
            program,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let flags = String::from_utf8_lossy(&output.stdout).into_owned();
    Ok(flags.split_whitespace().filter_map(|flag| flag.strip_prefix("-L")).map(PathBuf::from).next())
}

fn fail(why: &str) -> ! {
    panic!(
        "\n\ntrainwatch-sys: cannot find libtrainwatch: {}.\n\
         Install the trainwatch C library (a release archive or `meson install` from its source: it installs\n\
         libtrainwatch.so and trainwatch.pc), so that `pkg-config trainwatch` finds it — for a prefix outside\n\
         the default search path set PKG_CONFIG_PATH=<prefix>/lib/<triplet>/pkgconfig —, or set\n\
         TRAINWATCH_LIB_DIR to the directory holding libtrainwatch.so.\n\n",
        why
    );
}
