#![no_main]
//! Any bytes as an Office package (the first byte picks which): .docx, .pptx, .xlsx, .odt, .epub, .ods or .odp.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let names = [
        "fuzz.docx",
        "fuzz.pptx",
        "fuzz.xlsx",
        "fuzz.odt",
        "fuzz.epub",
        "fuzz.ods",
        "fuzz.odp",
    ];
    let name = names[pick as usize % names.len()];
    parse_as::parse_as(name, rest);
});
