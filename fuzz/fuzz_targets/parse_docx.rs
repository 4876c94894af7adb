#![no_main]
//! Any bytes as an Office file (the first byte picks which): .docx, .pptx, .xlsx, .odt, .epub, .ods,
//! .odp, or Word's, Excel's and PowerPoint's 97-2003 compound files, .doc, .xls and .ppt.

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
        "fuzz.doc",
        "fuzz.xls",
        "fuzz.ppt",
    ];
    let name = names[pick as usize % names.len()];
    parse_as::parse_as(name, rest);
});
