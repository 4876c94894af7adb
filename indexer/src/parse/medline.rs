//! MEDLINE's text format, PubMed's "PubMed" format (`.nbib` as citation managers save it, the
//! `pubmed-<query>-set.txt` a search saves, what E-utilities' `efetch` returns with
//! `rettype=medline`; told by its first line, `PMID- `, whatever its name): one document per
//! record, named `<file>#pmid=<PMID>`, read into the fields of a BibTeX entry and made a
//! document by [`super::bibtex_entry`], as PubMed's XML is ([`super::pubmed`]): the title, the
//! authors' full names (`FAU`, else `AU`) and groups (`CN`), the journal, volume, issue, pages
//! and year, the abstract, the keywords (`OT`) and MeSH headings (`MH`, without their
//! qualifiers and stars) as keywords and tags; metadata `pmid`, `doi` (`LID`/`AID` marked
//! `[doi]`) and `url` (its PubMed page). A tag is four columns, then `- `; a line that starts
//! with spaces continues the value before it. A record whose PMID an earlier record has fails
//! alone; a record without one is named `#record=<n>` by its place.

use std::collections::HashSet;

use super::bibtex::{item_failure, item_uri, Entry};
use super::bibtex_entry::entry_document;
use super::text::decode_raw_text;
use super::{ParseError, Parsed};
use crate::source::RawDocument;

/// Whether a file's bytes begin a MEDLINE record (after a byte order mark and blank lines).
pub(super) fn looks_like_medline(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(256)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    head.trim_ascii_start().starts_with(b"PMID- ")
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let records = read_records(&text);
    if records.is_empty() {
        return Err(ParseError::Corrupt(
            "no MEDLINE record found (a record starts with a `PMID- ` line)".into(),
        ));
    }
    let mut parsed = Parsed::default();
    let mut pmids = HashSet::new();
    for (place, record) in records.iter().enumerate() {
        let pmid = record.first("PMID").unwrap_or_default().to_string();
        let (uri, key) = match pmid.is_empty() {
            true => (format!("{}#record={}", raw.uri, place + 1), (place + 1).to_string()),
            false if !pmids.insert(pmid.clone()) => {
                let reason = "an earlier record of the file has this PMID too; the first is kept";
                parsed.failures.push(item_failure(raw, "pmid", &pmid, reason));
                continue;
            }
            false => (item_uri(raw, "pmid", &pmid), pmid.clone()),
        };
        if let Some(mut document) = entry_document(raw, &record.entry(key), uri) {
            if !pmid.is_empty() {
                document.metadata.insert("pmid".into(), pmid.into());
            }
            parsed.documents.push(document);
        }
    }
    Ok(parsed)
}

/// One record's tags and values, in order.
#[derive(Default)]
struct Record {
    tags: Vec<(String, String)>,
}

impl Record {
    fn first<'a>(&'a self, tag: &'a str) -> Option<&'a str> {
        self.all(tag).next()
    }

    fn all<'a>(&'a self, tag: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.tags
            .iter()
            .filter(move |(t, v)| t == tag && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    /// The value of the first of `tags` the record has.
    fn first_of(&self, tags: &[&str]) -> String {
        tags.iter()
            .find_map(|tag| self.first(tag))
            .unwrap_or_default()
            .to_string()
    }

    /// The names of `full` (`FAU`: `Lovelace, Ada`), else of `short` (`AU`: `Lovelace A`), with
    /// the groups of `group` (`CN`) where they stand.
    fn names(&self, full: &str, short: &str, group: Option<&str>) -> String {
        let person = match self.first(full) {
            Some(_) => full,
            None => short,
        };
        let names: Vec<&str> = self
            .tags
            .iter()
            .filter(|(t, v)| (t == person || Some(t.as_str()) == group) && !v.is_empty())
            .map(|(_, v)| v.as_str())
            .collect();
        names.join("\n")
    }

    /// The keywords (`OT`) and MeSH descriptors (`MH`: `*Brain/metabolism` is `Brain`).
    fn keywords(&self) -> String {
        let mut keywords: Vec<String> = Vec::new();
        for (tag, value) in &self.tags {
            let keyword = match tag.as_str() {
                "OT" => value.trim(),
                "MH" => value
                    .split('/')
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches('*')
                    .trim(),
                _ => continue,
            };
            if !keyword.is_empty() && !keywords.iter().any(|k| k == keyword) {
                keywords.push(keyword.to_string());
            }
        }
        keywords.join("\n")
    }

    /// The DOI among the ids marked `[doi]` (`LID`, then `AID`).
    fn doi(&self) -> String {
        self.all("LID")
            .chain(self.all("AID"))
            .find_map(|id| id.strip_suffix("[doi]").map(str::trim))
            .unwrap_or_default()
            .to_string()
    }

    /// The record as a BibTeX entry of plain values.
    fn entry(&self, key: String) -> Entry {
        let date = self.first_of(&["DP"]);
        let year: String = date
            .split(|c: char| !c.is_ascii_digit())
            .find(|part| part.len() == 4)
            .unwrap_or_default()
            .to_string();
        // `2002 Sep 12`: the month a name after the year.
        let month = date
            .split_whitespace()
            .nth(1)
            .filter(|m| m.len() == 3 && m.chars().all(|c| c.is_ascii_alphabetic()))
            .unwrap_or_default()
            .to_string();
        let (title, book_title) = (self.first_of(&["TI"]), self.first_of(&["BTI"]));
        let kind = match (book_title.is_empty(), title.is_empty()) {
            (true, _) => "article",
            (false, false) => "incollection",
            (false, true) => "book",
        };
        let pmid = self.first_of(&["PMID"]);
        let mut fields = vec![
            ("title".to_string(), title),
            ("author".to_string(), self.names("FAU", "AU", Some("CN"))),
            ("editor".to_string(), self.names("FED", "ED", None)),
            ("journal".to_string(), self.first_of(&["JT", "TA"])),
            ("volume".to_string(), self.first_of(&["VI"])),
            ("number".to_string(), self.first_of(&["IP"])),
            ("pages".to_string(), self.first_of(&["PG"])),
            ("year".to_string(), year),
            ("month".to_string(), month),
            ("publisher".to_string(), self.first_of(&["PB"])),
            ("abstract".to_string(), self.first_of(&["AB"])),
            ("keywords".to_string(), self.keywords()),
            ("doi".to_string(), self.doi()),
            ("booktitle".to_string(), book_title),
        ];
        if !pmid.is_empty() {
            fields.push(("url".to_string(), format!("https://pubmed.ncbi.nlm.nih.gov/{pmid}/")));
        }
        fields.retain(|(_, value)| !value.trim().is_empty());
        Entry {
            kind: kind.to_string(),
            key,
            fields,
            plain: true,
        }
    }
}

/// The records of `text`: a `PMID` tag starts one, as does a tag after a blank line; a line
/// that starts with white space continues the value before it.
fn read_records(text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let mut open = Record::default();
    let mut blank_before = false;
    for line in text.lines() {
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            blank_before = true;
            continue;
        }
        match tag_of(line) {
            Some((tag, value)) => {
                if !open.tags.is_empty() && (tag == "PMID" || blank_before) {
                    records.push(std::mem::take(&mut open));
                }
                open.tags.push((tag.to_string(), value.trim().to_string()));
            }
            None if line.starts_with([' ', '\t']) => {
                if let Some((_, value)) = open.tags.last_mut() {
                    value.push(' ');
                    value.push_str(line.trim());
                }
            }
            // A line that is neither (a note above the records) is left out.
            None => {}
        }
        blank_before = false;
    }
    if !open.tags.is_empty() {
        records.push(open);
    }
    records
}

/// `FAU - Lovelace, Ada` as (`FAU`, `Lovelace, Ada`): a tag of two to four capitals and
/// digits, padded with spaces to four columns, then `- `.
fn tag_of(line: &str) -> Option<(&str, &str)> {
    let (tag, rest) = (line.get(..4)?, line.get(4..)?);
    let value = rest.strip_prefix("- ").or_else(|| (rest == "-").then_some(""))?;
    let tag = tag.trim_end_matches(' ');
    let well_formed = tag.len() >= 2
        && tag.starts_with(|c: char| c.is_ascii_uppercase())
        && tag.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    well_formed.then_some((tag, value))
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, failures_of, raw_for_test, AutoParser, Format, Parser};

    const RECORDS: &str = "PMID- 12230038
OWN - NLM
DP  - 2002 Sep
TI  - The Quarry toolkits--a brief
      overview.
PG  - 296-302
AB  - Research is often difficult to do with commercial software.
      Open toolkits help.
FAU - Lovelace, Ada
AU  - Lovelace A
FAU - Babbage, Charles
AU  - Babbage C
CN  - Analytical Engine Study Group
LA  - eng
TA  - Brief Tools
JT  - Briefings in tools
VI  - 3
IP  - 3
MH  - *Computational Biology
MH  - Software/*standards
OT  - engines
LID - 10.1093/bib/3.3.296 [doi]
AID - S1234 [pii]

PMID- 555
TI  - Second record.
AU  - Hopper G
DP  - 1952

PMID- 555
TI  - The same PMID again.

TI  - A record without a PMID.
DP  - 1999

PMID- 20301546
BTI - GeneReviews
ED  - Adam MP
PB  - University of Washington, Seattle
DP  - 1993
";

    #[test]
    fn records_are_documents_named_by_their_pmid() {
        assert_eq!(
            detect_format("pubmed-tools-set.txt", RECORDS.as_bytes()).unwrap(),
            Format::Medline
        );
        assert_eq!(
            detect_format("citations.nbib", RECORDS.as_bytes()).unwrap(),
            Format::Medline
        );
        let parsed = AutoParser.parse(&raw_for_test("citations.nbib", RECORDS)).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/citations.nbib#pmid=12230038",
                "memory://test/citations.nbib#pmid=555",
                "memory://test/citations.nbib#record=4",
                "memory://test/citations.nbib#pmid=20301546",
            ]
        );
        // A book alone is titled by its book title.
        let book = &parsed.documents[3];
        assert_eq!(book.title, "GeneReviews");
        assert_eq!(book.metadata["entry_type"], "book");
        let first = &parsed.documents[0];
        assert_eq!(first.title, "The Quarry toolkits--a brief overview.");
        let texts: Vec<&str> = first.blocks.iter().map(|b| b.text.as_str()).collect();
        assert!(
            texts[1].starts_with("Ada Lovelace, Charles Babbage, Analytical Engine Study Group (2002)"),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t.contains("Briefings in tools")), "{texts:?}");
        assert!(
            texts
                .iter()
                .any(|t| t.contains("Research is often difficult to do with commercial software. Open toolkits help.")),
            "{texts:?}"
        );
        assert_eq!(first.tags, ["Computational Biology", "Software", "engines"]);
        assert_eq!(first.metadata["pmid"], "12230038");
        assert_eq!(first.metadata["doi"], "10.1093/bib/3.3.296");
        assert_eq!(first.metadata["year"], 2002);
        assert_eq!(first.metadata["url"], "https://pubmed.ncbi.nlm.nih.gov/12230038/");
        // Short names where a record has no full ones.
        assert_eq!(parsed.documents[1].metadata["authors"][0], "Hopper G");
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/citations.nbib#pmid=555",
                "pmid 555: an earlier record of the file has this PMID too; the first is kept"
            )]
        );
        // Text that only mentions a PMID is text.
        let note = "Notes\nPMID- 1 is cited below.\n";
        assert_eq!(detect_format("notes.txt", note.as_bytes()).unwrap(), Format::Text);
    }

    #[test]
    fn hostile_records_read_in_linear_time() {
        let started = std::time::Instant::now();
        // Lines that continue a value without end, records without end, tags alone.
        let mut text = format!("PMID- 1\nTI  - t\n{}", "      more words\n".repeat(200_000));
        text.push_str(&"PMID- 2\nFAU - a, b\nMH  - *x/y/z\n".repeat(50_000));
        text.push_str(&"AB  -\n".repeat(100_000));
        let parsed = AutoParser.parse(&raw_for_test("big.nbib", text)).unwrap();
        assert_eq!(parsed.documents.len(), 2);
        assert_eq!(parsed.failures.len(), 49_999);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
