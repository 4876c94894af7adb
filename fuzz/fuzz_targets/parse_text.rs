#![no_main]
//! Any bytes as a plain-text or Markdown file (the first byte picks which): encodings, BOMs,
//! binary detection, Markdown structure.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    parse_as::parse_as(if pick % 2 == 0 { "fuzz.txt" } else { "fuzz.md" }, rest);
});
