//! The crate's revision: a hash of its sources (Cargo.toml, Cargo.lock, build.rs, src/*.rs), which the
//! package compares with its own note of them when it loads the module (`simdup_es.native`), so a
//! module built from other sources (a stale `build/` folder) is never taken for this one.
//!
//! FNV-1a 64 over each file's path and bytes, in path order (`simdup_es.native.source_revision`).

use std::fs;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = ["Cargo.toml", "Cargo.lock", "build.rs"].map(String::from).to_vec();
    for entry in fs::read_dir(root.join("src")).expect("src/ is readable") {
        let name = entry.expect("src/ is readable").file_name().into_string().expect("UTF-8 file names");
        if name.ends_with(".rs") {
            files.push(format!("src/{name}"));
        }
    }
    files.sort();
    let mut hash: u64 = 0xcbf29ce484222325;
    for file in &files {
        println!("cargo:rerun-if-changed={file}");
        let bytes = fs::read(root.join(file)).unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
        for &b in file.as_bytes().iter().chain(&[0u8]).chain(&bytes).chain(&[0u8]) {
            hash = (hash ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rustc-env=SIMDUP_NATIVE_REVISION={hash:016x}");
}
