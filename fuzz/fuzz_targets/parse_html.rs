#![no_main]
//! Any bytes as a .html file.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| parse_as::parse_as("fuzz.html", data));
