#![no_main]
//! Any bytes as a plain-text, Markdown, RTF, e-mail or mailbox file (the first byte picks which):
//! encodings, BOMs, binary detection, Markdown structure, RTF's groups and control words, MIME, mailboxes' separators.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let names = ["fuzz.txt", "fuzz.md", "fuzz.rtf", "fuzz.eml", "fuzz.mbox"];
    parse_as::parse_as(names[pick as usize % names.len()], rest);
});
