//! One BibTeX entry as a document: its title the first block, then who wrote it and when,
//! where it appeared, its abstract, keywords and notes, each value's LaTeX read as typeset
//! (`{\"o}` reads `ö`, `--` `–`, protective braces off). Its metadata: `entry_type`,
//! `citation_key`, `authors`, `year` (a number), `date`, `doi` and `url` (the DOI's address
//! where no `url` is given); its keywords are its tags.

use super::bibtex::{Entry, MONTHS};
use super::text::collapse_whitespace;
use super::{Block, Document};
use crate::source::RawDocument;

/// The fields that name where an entry appeared, in the order they are written.
const CONTAINERS: [&str; 5] = ["journal", "journaltitle", "booktitle", "howpublished", "eventtitle"];
/// Who published it, and where.
const PUBLISHERS: [&str; 6] = [
    "school",
    "institution",
    "organization",
    "publisher",
    "address",
    "location",
];

/// The entry's document at `uri`; none for an entry with no field to read (a style's control
/// entry, `@IEEEtranBSTCTL{...}`, or one with a key alone).
pub(super) fn entry_document(raw: &RawDocument, entry: &Entry, uri: String) -> Option<Document> {
    let text = |name: &str| entry.field(name).map(|v| entry.read(v)).filter(|t| !t.is_empty());
    let authors = names(entry, "author");
    let editors = names(entry, "editor");
    let title = match (text("title"), text("subtitle")) {
        (Some(title), Some(subtitle)) => Some(format!("{title}: {subtitle}")),
        (title, _) => title,
    };
    let year = text("year").or_else(|| text("date").map(|d| d.chars().take(4).collect()));
    let mut blocks = Vec::new();
    let mut block = |text: String| {
        if !text.trim().is_empty() {
            blocks.push(Block::text(text, &[]));
        }
    };
    let shown_title = title.or_else(|| text("booktitle"));
    if let Some(title) = &shown_title {
        block(title.clone());
    }
    block(byline(&authors, &editors, year.as_deref()));
    block(venue(entry, &text, &authors, &editors));
    if let Some(abstract_text) = text("abstract") {
        block(abstract_text);
    }
    let keywords = keywords(entry);
    if !keywords.is_empty() {
        block(format!("Keywords: {}", keywords.join(", ")));
    }
    for note in ["note", "annote", "annotation", "addendum"] {
        if let Some(note) = text(note) {
            block(note);
        }
    }
    if blocks.is_empty() {
        return None;
    }
    let mut content = format!("{}\n{}\n", entry.kind, entry.key);
    let mut fields = entry.fields.clone();
    fields.sort();
    for (name, value) in &fields {
        content.push_str(&format!("{name}={value}\n"));
    }
    let title = shown_title.unwrap_or_else(|| entry.key.clone());
    let mut document = Document::from_part(raw, uri, content.as_bytes(), title, blocks);
    document.tags = keywords;
    let metadata = &mut document.metadata;
    metadata.insert("entry_type".into(), entry.kind.clone().into());
    metadata.insert("citation_key".into(), entry.key.clone().into());
    if !authors.is_empty() {
        metadata.insert("authors".into(), authors.into());
    }
    if let Some(year) = year.filter(|y| !y.is_empty()) {
        metadata.insert(
            "year".into(),
            year.parse::<i64>().map_or_else(|_| year.clone().into(), Into::into),
        );
        let date = text("date").unwrap_or_else(|| match month_number(entry.field("month")) {
            Some(month) => format!("{year}-{month:02}"),
            None => year,
        });
        metadata.insert("date".into(), date.into());
    }
    let doi = entry.field("doi").map(verbatim);
    if let Some(doi) = &doi {
        metadata.insert("doi".into(), doi.clone().into());
    }
    let url = entry
        .field("url")
        .map(verbatim)
        .or_else(|| doi.map(|d| format!("https://doi.org/{}", d.trim_start_matches("https://doi.org/"))));
    if let Some(url) = url {
        metadata.insert("url".into(), url.into());
    }
    Some(document)
}

/// `Ada Lovelace, Charles Babbage (1843)`; editors alone as `Edited by ...`.
fn byline(authors: &[String], editors: &[String], year: Option<&str>) -> String {
    let who = match (authors.is_empty(), editors.is_empty()) {
        (false, _) => authors.join(", "),
        (true, false) => format!("Edited by {}", editors.join(", ")),
        (true, true) => String::new(),
    };
    match (who.is_empty(), year) {
        (false, Some(year)) => format!("{who} ({year})"),
        (true, Some(year)) => year.to_string(),
        (_, None) => who,
    }
}

/// Where it appeared: `PhD thesis, MIT`, `Scientific Memoirs, volume 3, pages 666–731`,
/// `In Proceedings of ..., edited by ..., Springer, Berlin`.
fn venue(entry: &Entry, text: &dyn Fn(&str) -> Option<String>, authors: &[String], editors: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let kind_words = match entry.kind.as_str() {
        "phdthesis" => Some("PhD thesis"),
        "mastersthesis" => Some("Master's thesis"),
        "techreport" | "report" => Some("Technical report"),
        "patent" => Some("Patent"),
        _ => None,
    };
    parts.extend(kind_words.map(str::to_string));
    for name in CONTAINERS {
        if let Some(container) = text(name) {
            match name {
                "booktitle" if entry.field("title").is_some() => parts.push(format!("In {container}")),
                // A proceedings' own title, already its document's title.
                "booktitle" => {}
                _ => parts.push(container),
            }
        }
    }
    if !authors.is_empty() && !editors.is_empty() {
        parts.push(format!("edited by {}", editors.join(", ")));
    }
    for (name, label) in [
        ("series", ""),
        ("volume", "volume "),
        ("number", "number "),
        ("pages", "pages "),
    ] {
        if let Some(value) = text(name) {
            parts.push(format!("{label}{value}"));
        }
    }
    parts.extend(PUBLISHERS.iter().filter_map(|name| text(name)));
    parts.join(", ")
}

/// The names of an `author` or `editor` field: split at ` and ` outside braces (a RIS
/// record's: a line each), each
/// `Last, First` (or `Last, Jr, First`) read `First Last`; `others` read `et al.`.
fn names(entry: &Entry, name: &str) -> Vec<String> {
    let Some(field) = entry.field(name) else {
        return Vec::new();
    };
    // A RIS record's names are a line each; BibTeX's are joined by `and`, which may stand at a
    // line's end (white space is one space first).
    let joined = collapse_whitespace(field);
    let split: Vec<&str> = match entry.plain {
        true => field.lines().collect(),
        false => split_outside_braces(&joined, " and "),
    };
    split
        .into_iter()
        .filter_map(|name| {
            let name = name.trim();
            if name.eq_ignore_ascii_case("others") {
                return Some("et al.".to_string());
            }
            let parts = split_outside_braces(name, ",");
            let ordered = match parts.as_slice() {
                [last, first] => format!("{} {}", first.trim(), last.trim()),
                [last, junior, first] => format!("{} {} {}", first.trim(), last.trim(), junior.trim()),
                _ => name.to_string(),
            };
            Some(entry.read(&ordered)).filter(|n| !n.is_empty())
        })
        .collect::<Vec<_>>()
}

/// `text` split at `separator` (ASCII, matched without case) where no brace is open.
fn split_outside_braces<'a>(text: &'a str, separator: &str) -> Vec<&'a str> {
    let (bytes, sep) = (text.as_bytes(), separator.as_bytes());
    let mut parts = Vec::new();
    let (mut depth, mut start, mut at) = (0usize, 0, 0);
    while at < bytes.len() {
        match bytes[at] {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            _ if depth == 0
                && bytes[at..].len() >= sep.len()
                && bytes[at..at + sep.len()].eq_ignore_ascii_case(sep) =>
            {
                parts.push(&text[start..at]);
                at += sep.len();
                start = at;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    parts.push(&text[start..]);
    parts
}

/// Keywords split at `,` or `;` (a RIS record's: a line each), each once.
fn keywords(entry: &Entry) -> Vec<String> {
    let mut keywords: Vec<String> = Vec::new();
    let field = entry.field("keywords").unwrap_or_default();
    let split: Vec<String> = match entry.plain {
        true => field.lines().map(|k| entry.read(k)).collect(),
        false => entry.read(field).split([',', ';']).map(str::to_string).collect(),
    };
    for keyword in split.iter().map(|k| k.trim()) {
        if !keyword.is_empty() && !keywords.iter().any(|k| k.eq_ignore_ascii_case(keyword)) {
            keywords.push(keyword.to_string());
        }
    }
    keywords
}

/// A `month` field's number: `10`, `oct` (the macro already read `October`), `October`.
fn month_number(field: Option<&str>) -> Option<u32> {
    let month = field?.trim().trim_matches(['{', '}']).to_ascii_lowercase();
    if let Ok(number) = month.parse::<u32>() {
        return (1..=12).contains(&number).then_some(number);
    }
    MONTHS
        .iter()
        .position(|(abbreviation, _)| month.len() >= 3 && month.starts_with(abbreviation))
        .map(|p| p as u32 + 1)
}

/// A DOI or URL as written: braces and white space off, `\_` and `\%` unescaped.
fn verbatim(value: &str) -> String {
    let value = value.trim();
    let value = value
        .strip_prefix("\\url{")
        .and_then(|v| v.strip_suffix('}'))
        .unwrap_or(value);
    value
        .replace(['{', '}'], "")
        .replace("\\_", "_")
        .replace("\\%", "%")
        .replace("\\&", "&")
        .split_whitespace()
        .collect()
}
