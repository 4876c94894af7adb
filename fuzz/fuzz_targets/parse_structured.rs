#![no_main]
//! Any bytes as a JSON, JSONL, CSV or TSV file (the first byte picks which).

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let name = ["fuzz.json", "fuzz.jsonl", "fuzz.csv", "fuzz.tsv"][pick as usize % 4];
    parse_as::parse_as(name, rest);
});
