//! The crate's revision: a hash of its sources (Cargo.toml, Cargo.lock, build.rs, src/*.rs, data/*),
//! which the package compares with its own note of them when it loads the module (`simdup_es.native`),
//! so a module built from other sources (a stale `build/` folder) is never taken for this one.
//!
//! XXH3-64 over each file's path and bytes, each followed by a NUL, in path order
//! (`simdup_es.native.source_revision`).

use std::fs;
use std::path::Path;

use xxhash_rust::xxh3::Xxh3;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = ["Cargo.toml", "Cargo.lock", "build.rs"].map(String::from).to_vec();
    for (folder, suffix) in [("src", ".rs"), ("data", "")] {
        println!("cargo:rerun-if-changed={folder}");
        for entry in fs::read_dir(root.join(folder)).unwrap_or_else(|e| panic!("cannot read {folder}/: {e}")) {
            let name = entry.expect("a readable folder").file_name().into_string().expect("UTF-8 file names");
            if name.ends_with(suffix) {
                files.push(format!("{folder}/{name}"));
            }
        }
    }
    files.sort();
    let mut hash = Xxh3::new();
    for file in &files {
        println!("cargo:rerun-if-changed={file}");
        let bytes = fs::read(root.join(file)).unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
        for part in [file.as_bytes(), &[0], &bytes, &[0]] {
            hash.update(part);
        }
    }
    println!("cargo:rustc-env=SIMDUP_NATIVE_REVISION={:016x}", hash.digest());
}
