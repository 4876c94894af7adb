//! BibTeX and BibLaTeX bibliographies (`.bib`: a Zotero or JabRef export, a paper's
//! references, DBLP's records): one document per entry, named `<file>#entry=<citation key>`,
//! read by [`super::bibtex_entry`]. This file reads the entries as BibTeX does: `@type{key,
//! field = value, ...}` (or with parentheses), a value braced, quoted, a number or a macro,
//! parts joined by `#`; `@string` macros (and the month names) substituted where used,
//! `@preamble` and `@comment` left out, text between entries a comment. One pass, braces
//! counted (no recursion); an entry that cannot be read fails alone and the reading goes on
//! at the next `@`. A brace left open does not swallow the rest of the file: a line that
//! starts a new entry (`@article{`) ends the value it is in, as the failure of that entry.

use std::collections::HashMap;

use rayon::prelude::*;

use super::bibtex_entry::entry_document;
use super::text::{collapse_whitespace, decode_raw_text};
use super::{ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

/// One entry as written: its type (lower case), key, and fields (names in lower case, values
/// with their macros substituted and their braces kept, for the LaTeX reader).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Entry {
    pub kind: String,
    pub key: String,
    pub fields: Vec<(String, String)>,
    /// Whether the values are plain text (a RIS record's) rather than LaTeX.
    pub plain: bool,
}

impl Entry {
    /// A value as it reads: its LaTeX as typeset, or plain text with its white space as one space.
    pub fn read(&self, value: &str) -> String {
        match self.plain {
            true => collapse_whitespace(value),
            false => super::latex::inline(value),
        }
    }

    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.trim().is_empty())
    }
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let read = read_bibliography(&text);
    if read.entries.is_empty() && read.failures.is_empty() {
        return Err(ParseError::Corrupt(
            "no BibTeX entry found (an entry starts `@article{key,`)".into(),
        ));
    }
    // Entries read in parallel (a bibliography of a million entries is one file).
    let documents = with_cross_references(read.entries)
        .par_iter()
        .filter_map(|entry| entry_document(raw, entry, entry_uri(raw, &entry.key)))
        .collect();
    let failures = read
        .failures
        .into_iter()
        .map(|failure| match failure.key {
            Some(key) => entry_failure(raw, &key, &failure.reason),
            None => ItemFailure {
                uri: format!("{}#byte={}", raw.uri, failure.at),
                reason: format!("byte {}: {}", failure.at, failure.reason),
            },
        })
        .collect();
    Ok(Parsed { documents, failures })
}

/// An entry's URI: `<file>#entry=<key>`.
pub(super) fn entry_uri(raw: &RawDocument, key: &str) -> String {
    item_uri(raw, "entry", key)
}

/// An entry's failed item at its URI, its reason naming the entry.
pub(super) fn entry_failure(raw: &RawDocument, key: &str, reason: &str) -> ItemFailure {
    item_failure(raw, "entry", key, reason)
}

/// A bibliography's item `<file>#<kind>=<key>` (a PubMed article's `#pmid=`), its key as
/// [`key_in_uri`] writes it.
pub(super) fn item_uri(raw: &RawDocument, kind: &str, key: &str) -> String {
    format!("{}#{kind}={}", raw.uri, key_in_uri(key))
}

/// An item's failure at its URI, its reason starting `<kind> <key>: `.
pub(super) fn item_failure(raw: &RawDocument, kind: &str, key: &str, reason: &str) -> ItemFailure {
    ItemFailure {
        uri: item_uri(raw, kind, key),
        reason: format!("{kind} {}: {reason}", key_in_uri(key)),
    }
}

/// A citation key as a URI's fragment: characters a URI would read otherwise (`#`, `%`, white
/// space, controls, non-ASCII) percent-encoded.
fn key_in_uri(key: &str) -> String {
    let mut name = String::with_capacity(key.len());
    for byte in key.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~:/+@!$&'()*;=,[]".contains(&byte) {
            name.push(byte as char);
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    name
}

/// Each entry with the fields its `crossref` entry gives it (one level, as BibTeX reads
/// them): the fields it lacks, and the parent's title as its `booktitle`.
fn with_cross_references(mut entries: Vec<Entry>) -> Vec<Entry> {
    let by_key: HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.key.to_lowercase(), i))
        .collect();
    // What each entry takes from its parent, found first: the parents are read as they were
    // written, not as their own parents filled them.
    let taken: Vec<Vec<(String, String)>> = entries
        .iter()
        .map(|entry| {
            let Some(parent) = entry
                .field("crossref")
                .and_then(|k| by_key.get(&k.trim().trim_matches(['{', '}']).to_lowercase()))
                .map(|&i| &entries[i])
                .filter(|p| p.key != entry.key)
            else {
                return Vec::new();
            };
            let mut taken: Vec<(String, String)> = Vec::new();
            for (name, value) in &parent.fields {
                let name = match name.as_str() {
                    "title" if entry.field("booktitle").is_none() => "booktitle",
                    "crossref" | "title" | "subtitle" => continue,
                    name => name,
                };
                if entry.field(name).is_none() && !taken.iter().any(|(n, _)| n == name) {
                    taken.push((name.to_string(), value.clone()));
                }
            }
            taken
        })
        .collect();
    for (entry, taken) in entries.iter_mut().zip(taken) {
        entry.fields.extend(taken);
    }
    entries
}

/// What reading a bibliography found.
#[derive(Debug, Default)]
pub(super) struct Bibliography {
    pub entries: Vec<Entry>,
    pub failures: Vec<EntryFailure>,
}

/// An entry that could not be read: its key where it was read, else the byte it starts at.
#[derive(Debug)]
pub(super) struct EntryFailure {
    pub key: Option<String>,
    pub at: usize,
    pub reason: String,
}

/// The entries of `text`, each read alone; a key used twice keeps its first entry.
pub(super) fn read_bibliography(text: &str) -> Bibliography {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        text,
        at: 0,
        lines: LineCounter::default(),
    };
    let mut macros: HashMap<String, String> = MONTHS.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut read = Bibliography::default();
    let mut first_of_key: HashMap<String, usize> = HashMap::new();
    while let Some(start) = scanner.next_at_sign() {
        scanner.at = start + 1;
        let kind = scanner.identifier().to_ascii_lowercase();
        scanner.skip_space();
        let close = match scanner.peek() {
            Some(b'{') => b'}',
            Some(b'(') => b')',
            // An `@` in the text between entries (an address in a comment): no entry.
            _ => continue,
        };
        scanner.at += 1;
        match kind.as_str() {
            "" => continue,
            "comment" | "preamble" => scanner.skip_group(close),
            "string" => match scanner.fields(close, &macros) {
                Ok(defined) => macros.extend(defined),
                Err(error) => read.failures.push(EntryFailure {
                    key: None,
                    at: start,
                    reason: format!("a @string definition cannot be read: {}", scanner.said(error)),
                }),
            },
            _ => {
                let key = scanner.key(close);
                let fields = match key.is_empty() {
                    true => Err(ReadError::NoKey),
                    false => scanner.fields(close, &macros),
                };
                let line = scanner.lines.line_of(scanner.bytes, start);
                match fields {
                    Err(error) => read.failures.push(EntryFailure {
                        key: (!key.is_empty()).then(|| key.to_string()),
                        at: start,
                        reason: format!("the @{kind} entry at line {line} cannot be read: {}", scanner.said(error)),
                    }),
                    Ok(fields) => match first_of_key.get(&key.to_lowercase()) {
                        Some(first) => read.failures.push(EntryFailure {
                            key: Some(key.to_string()),
                            at: start,
                            reason: format!(
                                "the key of the entry at line {line} names the entry at line {first} too; the first is kept"
                            ),
                        }),
                        None => {
                            first_of_key.insert(key.to_lowercase(), line);
                            read.entries.push(Entry {
                                kind,
                                key: key.to_string(),
                                fields,
                                plain: false,
                            });
                        }
                    },
                }
            }
        }
    }
    read
}

/// The month macros BibTeX's styles define.
pub(super) const MONTHS: [(&str, &str); 12] = [
    ("jan", "January"),
    ("feb", "February"),
    ("mar", "March"),
    ("apr", "April"),
    ("may", "May"),
    ("jun", "June"),
    ("jul", "July"),
    ("aug", "August"),
    ("sep", "September"),
    ("oct", "October"),
    ("nov", "November"),
    ("dec", "December"),
];

/// Why an entry could not be read, and where.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ReadError {
    NoKey,
    /// A field name was expected at this byte.
    FieldName(usize),
    /// `=` was expected after the field name ending at this byte.
    Equals(usize),
    /// A value was expected at this byte.
    Value(usize),
    /// The brace or quote opened at this byte was not closed before the next entry or the end.
    Unclosed(usize),
    /// A `}` at this byte closes no brace.
    StrayBrace(usize),
    /// `,` or the entry's end was expected at this byte.
    Separator(usize),
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    lines: LineCounter,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next_at_sign(&self) -> Option<usize> {
        self.bytes[self.at.min(self.bytes.len())..]
            .iter()
            .position(|&b| b == b'@')
            .map(|p| self.at + p)
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// An entry type, field or macro name: letters, digits and `_-:.+/`.
    fn identifier(&mut self) -> &'a str {
        let (text, start) = (self.text, self.at);
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"_-:.+/".contains(&b))
        {
            self.at += 1;
        }
        &text[start..self.at]
    }

    /// The citation key: up to the `,` after it (taken), or the entry's end (left).
    fn key(&mut self, close: u8) -> &'a str {
        self.skip_space();
        let (text, start) = (self.text, self.at);
        while let Some(b) = self.peek() {
            if b == b',' || b == close || b.is_ascii_whitespace() || b"{}\"".contains(&b) {
                break;
            }
            self.at += 1;
        }
        let key = &text[start..self.at];
        self.skip_space();
        if self.peek() == Some(b',') {
            self.at += 1;
        }
        key
    }

    /// `name = value, ...` up to the group's `close` (taken).
    fn fields(&mut self, close: u8, macros: &HashMap<String, String>) -> Result<Vec<(String, String)>, ReadError> {
        let mut fields = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                Some(b) if b == close => {
                    self.at += 1;
                    return Ok(fields);
                }
                Some(b',') => {
                    self.at += 1;
                    continue;
                }
                _ => {}
            }
            let name = self.identifier().to_ascii_lowercase();
            if name.is_empty() {
                return Err(ReadError::FieldName(self.at));
            }
            let name_end = self.at;
            self.skip_space();
            if self.peek() != Some(b'=') {
                return Err(ReadError::Equals(name_end));
            }
            self.at += 1;
            let value = self.value(macros)?;
            fields.push((name, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b) if b == close => {}
                _ => return Err(ReadError::Separator(self.at)),
            }
        }
    }

    /// A value: braced, quoted, a number or a macro, parts joined by `#`.
    fn value(&mut self, macros: &HashMap<String, String>) -> Result<String, ReadError> {
        let mut value = String::new();
        loop {
            self.skip_space();
            let start = self.at;
            match self.peek() {
                Some(b'{') => {
                    let end = self.closing(b'}')?;
                    value.push_str(&self.text[start + 1..end]);
                    self.at = end + 1;
                }
                Some(b'"') => {
                    let end = self.closing(b'"')?;
                    value.push_str(&self.text[start + 1..end]);
                    self.at = end + 1;
                }
                Some(b) if b.is_ascii_alphanumeric() => {
                    let word = self.identifier();
                    match word.bytes().all(|b| b.is_ascii_digit()) {
                        true => value.push_str(word),
                        // An undefined macro reads as nothing, as BibTeX reads it.
                        false => value.push_str(macros.get(&word.to_ascii_lowercase()).map_or("", |v| v.as_str())),
                    }
                }
                _ => return Err(ReadError::Value(start)),
            }
            self.skip_space();
            if self.peek() != Some(b'#') {
                return Ok(value);
            }
            self.at += 1;
        }
    }

    /// The byte of the `close` (`}` or `"`) that ends the group opened at `self.at`, braces
    /// inside counted; a line that starts a new entry ends the search.
    fn closing(&self, close: u8) -> Result<usize, ReadError> {
        let open = self.at;
        let mut depth = 0usize;
        let mut at = open + 1;
        while at < self.bytes.len() {
            match self.bytes[at] {
                b'\\' => at += 1,
                b'{' => depth += 1,
                b'}' if depth > 0 => depth -= 1,
                b if b == close && depth == 0 => return Ok(at),
                b'}' => return Err(ReadError::StrayBrace(at)),
                b'\n' if self.starts_an_entry(at + 1) => return Err(ReadError::Unclosed(open)),
                _ => {}
            }
            at += 1;
        }
        Err(ReadError::Unclosed(open))
    }

    /// Whether the line at `at` starts an entry (`@article{`, after spaces).
    fn starts_an_entry(&self, mut at: usize) -> bool {
        while self.bytes.get(at).is_some_and(|b| *b == b' ' || *b == b'\t') {
            at += 1;
        }
        if self.bytes.get(at) != Some(&b'@') {
            return false;
        }
        at += 1;
        let letters = at;
        while self.bytes.get(at).is_some_and(u8::is_ascii_alphabetic) {
            at += 1;
        }
        at > letters && matches!(self.bytes.get(at), Some(b'{' | b'('))
    }

    /// Skips a `@comment` or `@preamble` group (braces counted) to its `close`.
    fn skip_group(&mut self, close: u8) {
        let mut depth = 0usize;
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'{' => depth += 1,
                b'}' if depth > 0 => depth -= 1,
                b if b == close && depth == 0 => return,
                b'\n' if self.starts_an_entry(self.at) => return,
                _ => {}
            }
        }
    }

    /// `error` in words, its place as a line, and the reading moved on past the entry's start.
    fn said(&mut self, error: ReadError) -> String {
        let (what, at) = match error {
            ReadError::NoKey => return "it has no citation key".to_string(),
            ReadError::FieldName(at) => ("a field name was expected", at),
            ReadError::Equals(at) => ("`=` was expected after the field name", at),
            ReadError::Value(at) => ("a value was expected", at),
            ReadError::Unclosed(at) if self.bytes[at] == b'"' => {
                ("a quote is opened and not closed before the next entry", at)
            }
            ReadError::Unclosed(at) => ("a brace is opened and not closed before the next entry", at),
            ReadError::StrayBrace(at) => ("a `}` closes no brace", at),
            ReadError::Separator(at) => ("`,` or the entry's end was expected", at),
        };
        let line = self.lines.line_of(self.bytes, at);
        // The next entry is looked for after the place the reading stopped: an unclosed
        // group's search stopped at the next entry's line.
        if let ReadError::Unclosed(open) | ReadError::StrayBrace(open) = error {
            self.at = self.at.max(self.after_unclosed(open));
        }
        format!("{what} at line {line}")
    }

    /// Where the search for a group opened at `open` stopped: the next entry's line.
    fn after_unclosed(&self, open: usize) -> usize {
        let mut at = open + 1;
        while at < self.bytes.len() {
            if self.bytes[at] == b'\n' && self.starts_an_entry(at + 1) {
                return at + 1;
            }
            at += 1;
        }
        self.bytes.len()
    }
}

/// Line numbers of byte offsets asked in increasing order (a failure's place), counted once.
#[derive(Default)]
struct LineCounter {
    counted_to: usize,
    line: usize,
}

impl LineCounter {
    fn line_of(&mut self, bytes: &[u8], at: usize) -> usize {
        if at < self.counted_to {
            return 1 + newlines(&bytes[..at]);
        }
        self.line += newlines(&bytes[self.counted_to..at]);
        self.counted_to = at;
        self.line + 1
    }
}

fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    const LIBRARY: &str = r#"% Exported by a reference manager.
@string{ sm = "Scientific Memoirs" }
@preamble{ "\newcommand{\noop}[1]{}" }
@comment{ an @article{ inside a comment is no entry }

@Article{lovelace1843,
  author    = {Lovelace, Ada and
               Babbage, Charles},
  title     = {Notes on the {Analytical Engine}},
  journal   = sm # ", Selected",
  year      = 1843,
  month     = oct,
  volume    = "3",
  pages     = {666--731},
  keywords  = {computing; engines, Computing},
  doi       = {10.5555/\_notes},
  abstract  = {The engine weaves algebraic patterns, as the Jacquard loom weaves flowers and leaves.},
}

@inproceedings(hopper1952,
  author = {Grace Hopper and others},
  title = "The Education of a {C}omputer",
  crossref = {acm52},
)

@proceedings{acm52, title = {Proceedings of the {ACM} National Meeting}, year = {1952}, publisher = {ACM}}
@misc{broken, title = {An open brace, author = {Nobody}
@book{knuth1984, author = {Knuth, Donald E.}, title = {The {\TeX}book}, publisher = {Addison--Wesley}, year = {1984}}
@book{knuth1984, title = {A second entry under the same key}}
@misc{notext, file = {a.pdf}}
@IEEEtranBSTCTL{control, CTLuse_forced_etal = "yes"}
@article{whole-journal, key = "GAJ", journal = {\mbox{G-Animal's} Journal}, year = 1986, note = {The entire issue}}
@proceedings{tides2001, booktitle = {Conference on Tides}, year = 2001, publisher = {Harbour Press}}
"#;

    #[test]
    fn entries_are_documents_and_a_bad_entry_fails_alone() {
        let parsed = AutoParser.parse(&raw_for_test("refs.bib", LIBRARY)).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/refs.bib#entry=lovelace1843",
                "memory://test/refs.bib#entry=hopper1952",
                "memory://test/refs.bib#entry=acm52",
                "memory://test/refs.bib#entry=knuth1984",
                "memory://test/refs.bib#entry=whole-journal",
                "memory://test/refs.bib#entry=tides2001",
            ]
        );
        let notes = &parsed.documents[0];
        assert_eq!(notes.title, "Notes on the Analytical Engine");
        let texts: Vec<&str> = notes.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Notes on the Analytical Engine",
                "Ada Lovelace, Charles Babbage (1843)",
                "Scientific Memoirs, Selected, volume 3, pages 666–731",
                "The engine weaves algebraic patterns, as the Jacquard loom weaves flowers and leaves.",
                "Keywords: computing, engines",
            ]
        );
        assert_eq!(notes.tags, ["computing", "engines"]);
        let meta = &notes.metadata;
        assert_eq!(meta["entry_type"], "article");
        assert_eq!(meta["citation_key"], "lovelace1843");
        assert_eq!(meta["year"], 1843);
        assert_eq!(meta["date"], "1843-10");
        assert_eq!(meta["authors"], serde_json::json!(["Ada Lovelace", "Charles Babbage"]));
        assert_eq!(meta["doi"], "10.5555/_notes");
        assert_eq!(meta["url"], "https://doi.org/10.5555/_notes");
        // A cross-referenced proceedings gives its title as the booktitle, and its year.
        let hopper: Vec<&str> = parsed.documents[1].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            hopper,
            [
                "The Education of a Computer",
                "Grace Hopper, et al. (1952)",
                "In Proceedings of the ACM National Meeting, ACM",
            ]
        );
        assert_eq!(parsed.documents[3].title, "The TeXbook");
        let proceedings: Vec<&str> = parsed.documents[2].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(proceedings, ["Proceedings of the ACM National Meeting", "1952", "ACM"]);
        // No title: the key is the title; the journal, year and note are read.
        let journal = &parsed.documents[4];
        assert_eq!(journal.title, "whole-journal");
        let texts: Vec<&str> = journal.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["1986", "G-Animal's Journal", "The entire issue"]);
        // A booktitle standing for the title is not repeated as where it appeared.
        let conference: Vec<&str> = parsed.documents[5].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(conference, ["Conference on Tides", "2001", "Harbour Press"]);
        // Entries with no field to read (a key alone, a style's control entry) are no documents.
        let failures = failures_of(&parsed);
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert_eq!(failures[0].0, "memory://test/refs.bib#entry=broken");
        assert_eq!(
            failures[0].1,
            "entry broken: the @misc entry at line 27 cannot be read: a brace is opened and not closed before the next entry at line 27"
        );
        assert_eq!(failures[1].0, "memory://test/refs.bib#entry=knuth1984");
        assert_eq!(
            failures[1].1,
            "entry knuth1984: the key of the entry at line 29 names the entry at line 28 too; the first is kept"
        );
    }

    #[test]
    fn a_file_without_entries_is_no_bibliography() {
        let error = AutoParser
            .parse(&raw_for_test("empty.bib", "% nothing here\n"))
            .unwrap_err();
        assert_eq!(
            error.detail().unwrap(),
            "no BibTeX entry found (an entry starts `@article{key,`)"
        );
    }

    #[test]
    fn keys_read_into_uris_and_odd_entries() {
        assert_eq!(key_in_uri("doe:2020/a-b_c"), "doe:2020/a-b_c");
        assert_eq!(key_in_uri("a#b c%é"), "a%23b%20c%25%C3%A9");
        let read =
            read_bibliography("@misc{a, title = {x} # undefined # 2026}@misc{b,title=\"q {\"} x\"}\n@misc{,title={x}}");
        assert_eq!(read.entries[0].fields, [("title".to_string(), "x2026".to_string())]);
        assert_eq!(read.entries[1].fields, [("title".to_string(), "q {\"} x".to_string())]);
        assert_eq!(
            read.failures[0].reason,
            "the @misc entry at line 2 cannot be read: it has no citation key"
        );
        assert_eq!(read.failures[0].at, 65);
    }

    #[test]
    fn hostile_bibliographies_are_read_in_linear_time() {
        let started = std::time::Instant::now();
        // Braces opened and never closed, 100,000 deep; 50,000 unclosed entries, each on a line;
        // 50,000 unclosed entries on one line; a value of 200,000 parts joined by `#`.
        let deep = format!("@misc{{a, title = {}x\n", "{".repeat(100_000));
        assert_eq!(read_bibliography(&deep).failures.len(), 1);
        let lines = "@misc{a, title = {x\n".repeat(50_000);
        assert_eq!(read_bibliography(&lines).failures.len(), 50_000);
        let one_line = "@misc{a, title = {x ".repeat(50_000);
        assert_eq!(read_bibliography(&one_line).failures.len(), 1);
        let joined = format!("@misc{{a, title = {}x}}", "x # ".repeat(200_000));
        assert_eq!(read_bibliography(&joined).entries.len(), 1);
        let quotes = format!("@misc{{a, title = \"{}", "{".repeat(100_000));
        assert_eq!(read_bibliography(&quotes).failures.len(), 1);
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
        let many = AutoParser.parse(&raw_for_test("many.bib", "@misc{k, title = {x}}\n".repeat(20_000)));
        assert_eq!(failures_of(&many.unwrap()).len(), 19_999);
    }
}
