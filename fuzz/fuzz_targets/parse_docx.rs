#![no_main]
//! Any bytes as an Office file (the first byte picks which): .docx, .pptx, .xlsx, .odt, .epub, .ods,
//! .odp, or the compound files of Word, Excel and PowerPoint 97-2003 and of Outlook: .doc, .xls,
//! .ppt and .msg; or a ZIP, 7z or tar archive of any of them, the tar as it is, gzipped, in XZ,
//! in bzip2 or in LZ4; or an HWPX package.

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
        "fuzz.msg",
        "fuzz.zip",
        "fuzz.tar",
        "fuzz.tgz",
        "fuzz.txz",
        "fuzz.tbz2",
        "fuzz.7z",
        "fuzz.hwpx",
        "fuzz.tar.lz4",
    ];
    let name = names[pick as usize % names.len()];
    parse_as::parse_as(name, rest);
});
