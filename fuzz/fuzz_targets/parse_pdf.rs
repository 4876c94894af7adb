#![no_main]
//! Any bytes as a .pdf file.
//!
//! The PDF reader (pdf-extract over lopdf, and the font parsers under it) panics on much that
//! is malformed (`expect("MediaBox")`, "missing object reference"); quarry reads each page
//! inside `catch_unwind` and each file inside another, so such a page or file fails alone
//! (indexer/src/parse/pdf.rs). Those panics are no finding here: the fuzzer's hook, which
//! makes every panic a crash, is kept for panics anywhere else (quarry's own code), and
//! anything a panic cannot catch (a stack overflow, an abort, memory past the limit, a hang)
//! is still found.

#[path = "parse_as.rs"]
mod parse_as;

use std::sync::Once;

/// Crates whose panics quarry catches around every PDF page and file.
const CAUGHT_UPSTREAM: [&str; 4] = ["/pdf-extract-", "/lopdf-", "/adobe-cmap-parser-", "/type1-encoding-parser-"];

fn upstream_panics_caught() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let upstream = info
                .location()
                .is_some_and(|at| CAUGHT_UPSTREAM.iter().any(|name| at.file().contains(name)));
            if !upstream {
                fuzzer_hook(info);
            }
        }));
    });
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    upstream_panics_caught();
    parse_as::parse_as("fuzz.pdf", data)
});
