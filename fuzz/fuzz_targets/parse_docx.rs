#![no_main]
//! Any bytes as an Office package (the first byte picks which): .docx, .pptx, .xlsx, .odt or .epub.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let name = ["fuzz.docx", "fuzz.pptx", "fuzz.xlsx", "fuzz.odt", "fuzz.epub"][pick as usize % 5];
    parse_as::parse_as(name, rest);
});
