//! Records a digest of the parsers' sources (`src/parse`) as `QUARRY_PARSERS_DIGEST`: a
//! version's parse signature holds it, so a build whose parsers read files differently
//! fetches and parses again the files a previous build read (the crate's version alone
//! would not change when they do).

use std::path::{Path, PathBuf};

fn main() {
    let parsers = Path::new("src/parse");
    println!("cargo:rerun-if-changed={}", parsers.display());
    let mut files = Vec::new();
    collect_sources(parsers, &mut files);
    files.sort();
    // FNV-1a, 64 bits: stable across toolchains and machines, unlike std's hasher.
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    let mut add = |bytes: &[u8]| {
        for byte in bytes {
            digest ^= u64::from(*byte);
            digest = digest.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in &files {
        let name = file
            .strip_prefix(parsers)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/");
        add(name.as_bytes());
        add(&[0]);
        add(&std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display())));
        add(&[0]);
    }
    println!("cargo:rustc-env=QUARRY_PARSERS_DIGEST={digest:016x}");
}

fn collect_sources(folder: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", folder.display())).path();
        if path.is_dir() {
            collect_sources(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}
