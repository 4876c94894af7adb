#![no_main]
//! Any bytes as a file of one of the plain-text markups read in process (the first byte picks
//! which): reStructuredText, AsciiDoc, Org, LaTeX, a Jupyter notebook, a MediaWiki page, a
//! MediaWiki XML dump, a PubMed article set, a news feed or other XML (`.xml`, told by its root
//! element: Stack Exchange tables, TTML captions, FictionBook e-books and Evernote exports too), a manual page, a BibTeX, a RIS and a MEDLINE bibliography, subtitles (WebVTT, SubRip, SubStation, SAMI, MicroDVD), an HWP document (its compound file, records and compressed sections). These readers run in the indexing process, not in a
//! watched worker, so a hang or a runaway allocation here is one a run would meet.

#[path = "parse_as.rs"]
mod parse_as;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let names = ["fuzz.rst", "fuzz.adoc", "fuzz.org", "fuzz.tex", "fuzz.ipynb", "fuzz.wiki", "fuzz.xml", "fuzz.1", "fuzz.bib", "fuzz.ris", "fuzz.nbib", "fuzz.vtt", "fuzz.srt", "fuzz.ass", "fuzz.hwp", "fuzz.smi", "fuzz.sub"];
    parse_as::parse_as(names[pick as usize % names.len()], rest);
});
