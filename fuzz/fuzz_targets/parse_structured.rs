#![no_main]
//! Any bytes as a JSON, JSONL, CSV or TSV file, or Mozilla's LZ4 file of JSON (Firefox's
//! `.jsonlz4`), the first byte picking which.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let names = ["fuzz.json", "fuzz.jsonl", "fuzz.csv", "fuzz.tsv", "fuzz.jsonlz4"];
    let name = names[pick as usize % names.len()];
    parse_as::parse_as(name, rest);
});
