//! RIS bibliographies (`.ris`: what Zotero, EndNote, Mendeley, PubMed, Scopus and Web of Science
//! export): one document per record, `TY  - JOUR` to `ER  -`, read into the fields of a BibTeX
//! entry and made a document by [`super::bibtex_entry`] (the same titles, bylines, venues and
//! metadata), named `<file>#entry=<ID>` (`#record=<n>`, its place, where it has no `ID`). A
//! line that is no tag continues the value before it; a record that names an ID an earlier
//! one has fails alone; a record cut off before `ER` is read as far as it goes.

use std::collections::HashSet;

use super::bibtex::{entry_failure, entry_uri, Entry};
use super::bibtex_entry::entry_document;
use super::text::decode_raw_text;
use super::{ParseError, Parsed};
use crate::source::RawDocument;

/// RIS tags and the BibTeX fields they fill (several lines of one field a line each).
const FIELDS: &[(&str, &str)] = &[
    ("TI", "title"),
    ("T1", "title"),
    ("CT", "title"),
    ("AU", "author"),
    ("A1", "author"),
    ("A2", "editor"),
    ("ED", "editor"),
    ("PY", "year"),
    ("Y1", "year"),
    ("DA", "date"),
    ("T2", "journal"),
    ("JO", "journal"),
    ("JF", "journal"),
    ("JA", "journal"),
    ("BT", "booktitle"),
    ("T3", "series"),
    ("VL", "volume"),
    ("IS", "number"),
    ("SP", "startpage"),
    ("EP", "endpage"),
    ("PB", "publisher"),
    ("CY", "address"),
    ("AB", "abstract"),
    ("N2", "abstract"),
    ("KW", "keywords"),
    ("N1", "note"),
    ("DO", "doi"),
    ("UR", "url"),
    ("ID", "id"),
];

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let records = read_records(&text);
    if records.is_empty() {
        return Err(ParseError::Corrupt(
            "no RIS record found (a record starts with a `TY  - ` line)".into(),
        ));
    }
    let mut parsed = Parsed::default();
    let mut ids = HashSet::new();
    for (place, record) in records.into_iter().enumerate() {
        let entry = record.entry(place + 1);
        if !ids.insert(entry.key.to_lowercase()) {
            parsed.failures.push(entry_failure(
                raw,
                &entry.key,
                &format!(
                    "the record at line {} has the ID of an earlier record; the first is kept",
                    record.line
                ),
            ));
            continue;
        }
        // A record without an ID is named by its place.
        let uri = match entry.field("id") {
            Some(_) => entry_uri(raw, &entry.key),
            None => format!("{}#record={}", raw.uri, place + 1),
        };
        parsed.documents.extend(entry_document(raw, &entry, uri));
    }
    Ok(parsed)
}

/// One record as read: its type and its tags' values in order.
struct Record {
    line: usize,
    kind: String,
    tags: Vec<(String, String)>,
}

impl Record {
    /// The record as a BibTeX entry of plain values.
    fn entry(&self, place: usize) -> Entry {
        let mut fields: Vec<(String, String)> = Vec::new();
        for (tag, value) in &self.tags {
            let Some((_, field)) = FIELDS.iter().find(|(t, _)| t == tag) else {
                continue;
            };
            match fields.iter_mut().find(|(f, _)| f == field) {
                // Names and keywords a line each; another title or abstract tag adds nothing.
                Some((_, joined)) if matches!(*field, "author" | "editor" | "keywords") => {
                    joined.push('\n');
                    joined.push_str(value);
                }
                Some(_) => {}
                None => fields.push((field.to_string(), value.clone())),
            }
        }
        // `2019/05/01/` is 2019; pages from their start and end.
        if let Some((_, year)) = fields.iter_mut().find(|(f, _)| f == "year") {
            *year = year.chars().take_while(char::is_ascii_digit).collect();
        }
        let page = |name: &str| fields.iter().find(|(f, _)| f == name).map(|(_, v)| v.clone());
        let pages = match (page("startpage"), page("endpage")) {
            (Some(start), Some(end)) => Some(format!("{start}–{end}")),
            (start, end) => start.or(end),
        };
        fields.retain(|(f, _)| f != "startpage" && f != "endpage");
        fields.extend(pages.map(|p| ("pages".to_string(), p)));
        let key = fields
            .iter()
            .find(|(f, _)| f == "id")
            .map_or_else(|| place.to_string(), |(_, id)| id.clone());
        if self.kind == "CHAP" {
            // A chapter's secondary title is its book's.
            for (f, _) in fields.iter_mut().filter(|(f, _)| f == "journal") {
                *f = "booktitle".to_string();
            }
        }
        Entry {
            kind: entry_type(&self.kind).to_string(),
            key,
            fields,
            plain: true,
        }
    }
}

/// A RIS type as BibTeX's.
fn entry_type(ris: &str) -> &'static str {
    match ris {
        "JOUR" | "JFULL" | "MGZN" | "NEWS" | "EJOUR" => "article",
        "BOOK" | "EBOOK" | "EDBOOK" => "book",
        "CHAP" | "ECHAP" => "incollection",
        "CONF" | "CPAPER" => "inproceedings",
        "THES" => "phdthesis",
        "RPRT" => "techreport",
        "PAT" => "patent",
        "UNPB" => "unpublished",
        _ => "misc",
    }
}

/// The records of `text`: `TY  - ` starts one, `ER  - ` ends it; a line that is no tag
/// continues the value before it.
fn read_records(text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let mut open: Option<Record> = None;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_start_matches('\u{feff}');
        match tag_of(line) {
            Some(("TY", kind)) => {
                records.extend(open.take());
                open = Some(Record {
                    line: index + 1,
                    kind: kind.trim().to_ascii_uppercase(),
                    tags: Vec::new(),
                });
            }
            Some(("ER", _)) => records.extend(open.take()),
            Some((tag, value)) => {
                if let Some(record) = open.as_mut() {
                    record.tags.push((tag.to_string(), value.trim().to_string()));
                }
            }
            None => {
                if let Some((_, value)) = open.as_mut().and_then(|r| r.tags.last_mut()) {
                    if !line.trim().is_empty() {
                        value.push(' ');
                        value.push_str(line.trim());
                    }
                }
            }
        }
    }
    records.extend(open);
    records
}

/// `AU  - Lovelace, Ada` as (`AU`, `Lovelace, Ada`): two capitals or a capital and a digit,
/// spaces (two by the format; some writers put one), a hyphen.
fn tag_of(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    let tag_letter = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    if bytes.len() < 4 || !bytes[0].is_ascii_uppercase() || !tag_letter(bytes[1]) || bytes[2] != b' ' {
        return None;
    }
    let value = line[2..].trim_start_matches(' ').strip_prefix('-')?;
    Some((&line[..2], value))
}

#[cfg(test)]
mod tests {
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    const EXPORT: &str = "\u{feff}TY  - JOUR
ID  - lovelace1843
AU  - Lovelace, Ada
AU  - Babbage, Charles
TI  - Notes on the Analytical
      Engine
T2  - Scientific Memoirs
PY  - 1843/10/01/
VL  - 3
SP  - 666
EP  - 731
KW  - computing, history of
KW  - engines
AB  - The engine weaves algebraic patterns.
DO  - 10.5555/notes
ER  - 

TY  - CHAP
AU  - Hopper, Grace
TI  - The Education of a Computer
T2  - Proceedings of the ACM National Meeting
PY  - 1952
ER  - 

TY  - JOUR
ID  - lovelace1843
TI  - A record that takes an earlier record's ID
ER  - 
";

    #[test]
    fn records_are_documents_with_the_bibtex_entries_reading() {
        let parsed = AutoParser.parse(&raw_for_test("export.ris", EXPORT)).unwrap();
        let notes = &parsed.documents[0];
        assert_eq!(notes.uri, "memory://test/export.ris#entry=lovelace1843");
        let texts: Vec<&str> = notes.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Notes on the Analytical Engine",
                "Ada Lovelace, Charles Babbage (1843)",
                "Scientific Memoirs, volume 3, pages 666–731",
                "The engine weaves algebraic patterns.",
                "Keywords: computing, history of, engines",
            ]
        );
        assert_eq!(notes.tags, ["computing, history of", "engines"]);
        assert_eq!(notes.metadata["year"], 1843);
        assert_eq!(notes.metadata["entry_type"], "article");
        assert_eq!(notes.metadata["url"], "https://doi.org/10.5555/notes");
        let chapter = &parsed.documents[1];
        assert_eq!(chapter.uri, "memory://test/export.ris#record=2");
        let texts: Vec<&str> = chapter.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "The Education of a Computer",
                "Grace Hopper (1952)",
                "In Proceedings of the ACM National Meeting",
            ]
        );
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/export.ris#entry=lovelace1843",
                "entry lovelace1843: the record at line 25 has the ID of an earlier record; the first is kept"
            )]
        );
        let error = AutoParser
            .parse(&raw_for_test("empty.ris", "no records\n"))
            .unwrap_err();
        assert_eq!(
            error.detail().unwrap(),
            "no RIS record found (a record starts with a `TY  - ` line)"
        );
    }
}
