#![no_main]
//! Any bytes as a plain-text, Markdown, RTF or e-mail file (the first byte picks which):
//! encodings, BOMs, binary detection, Markdown structure, RTF's groups and control words, MIME.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let names = ["fuzz.txt", "fuzz.md", "fuzz.rtf", "fuzz.eml"];
    parse_as::parse_as(names[pick as usize % names.len()], rest);
});
