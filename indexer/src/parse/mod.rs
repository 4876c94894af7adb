//! Parsers: raw bytes to [`Document`]s of typed blocks. The format is chosen by file
//! extension, then by sniffing the bytes; a file that cannot be read fails alone with a
//! [`ParseError`] a user can act on.

mod archive;
mod asciidoc;
mod bibtex;
mod bibtex_entry;
mod character_references;
mod chart;
mod compound_file;
mod compressed;
mod compressed_rtf;
mod csv;
mod detect;
mod diagram;
mod doc;
mod document;
mod docx;
mod docx_notes;
mod docx_numbering;
mod docx_styles;
mod drawn_parts;
mod email;
mod encoded_data;
mod epub;
mod error;
mod evernote;
mod evernote_stream;
mod feed;
mod fictionbook;
mod firefox_bookmarks;
mod html;
mod html_lists;
mod html_text;
mod hwp;
mod hwp_distribution;
mod hwpx;
mod isolated;
mod json;
mod jsonl_stream;
mod latex;
mod latex_symbols;
mod legacy_encoding;
mod list_number;
mod long_runs;
mod lyrics;
mod lz4_frames;
mod mailbox_stream;
mod man_page;
mod markdown;
mod markup_body;
mod mbox;
mod medline;
mod message_body;
mod microdvd;
mod moz_lz4;
mod msg;
mod notebook;
mod odp;
mod ods;
mod odt;
mod odt_lists;
mod ooxml;
mod opendocument;
mod org;
mod outline_body;
mod pdf;
mod pdf_fonts;
mod pdf_headings;
mod pdf_hyphens;
mod pdf_outline;
mod pdf_page_tree;
mod pdf_text;
mod ppt;
mod pptx;
mod property_set;
mod pubmed;
mod record_stream;
mod ris;
mod roff_text;
mod rst;
mod rtf;
mod sami;
mod seven_zip;
mod slides;
mod speech_cloud;
mod speech_json;
mod spreadsheet;
mod stack_exchange;
mod stack_exchange_stream;
mod substation;
mod subtitles;
mod table_stream;
mod tar_reader;
mod text;
mod text_stream;
mod ttml;
mod wiki_dump;
mod wiki_dump_stream;
mod wikitext;
mod wikitext_markup;
mod wikitext_templates;
mod worker_protocol;
mod xls;
mod xlsx;
mod xlsx_dates;
mod xlsx_formats;
mod xlsx_numbers;
mod xml;
mod xz_index;
mod zip_reader;

pub use archive::stated_contents_size;
pub use detect::{detect_format, Format};
pub use document::{
    added_through_api, doc_id_for, file_uri_of, Block, ContentType, Document, ItemFailure, Parsed, TimeMark,
    API_URI_SCHEMES,
};
pub use encoded_data::leave_out_encoded_data;
pub use error::{ParseError, SUPPORTED_FORMATS};
pub use isolated::{run_parse_worker, IsolatedParser, ParseLimits, WorkerCommand};
pub use record_stream::{sniff_stream, stream_reading, RecordStream, StreamKind, StreamReading};
pub(crate) use text::collapse_whitespace;

use crate::source::RawDocument;

/// Turns one raw object into zero or more documents (a JSONL file holds many).
pub trait Parser: Send + Sync + std::fmt::Debug {
    /// Parses `raw` as the format its name and bytes show.
    fn parse(&self, raw: &RawDocument) -> Result<Parsed, ParseError>;
    /// Parses `raw` as `format` (a mailbox's message, which has the mailbox's name).
    fn parse_as(&self, format: Format, raw: &RawDocument) -> Result<Parsed, ParseError>;
}

/// Parses each file in this process, by its detected format.
#[derive(Debug, Default, Clone, Copy)]
pub struct AutoParser;

impl Parser for AutoParser {
    fn parse(&self, raw: &RawDocument) -> Result<Parsed, ParseError> {
        if raw.bytes.is_empty() {
            return Err(ParseError::Empty);
        }
        self.parse_as(detect_format(&raw.relative_path, &raw.bytes)?, raw)
    }

    fn parse_as(&self, format: Format, raw: &RawDocument) -> Result<Parsed, ParseError> {
        read_here(format, raw, self)
    }
}

/// `raw` read as `format` in this process; the files of an archive and the messages of a
/// mailbox are each parsed by `members`.
pub(crate) fn read_here(format: Format, raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    // A parser bug on a hostile file must fail that file, never the run.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse_format(format, raw, members)));
    let mut parsed = match outcome {
        Ok(result) => result?,
        Err(_) => {
            return Err(ParseError::Corrupt(format!(
                "the {} parser could not read this file",
                format.name()
            )))
        }
    };
    parsed
        .documents
        .retain(|d| d.blocks.iter().any(|b| !b.text.trim().is_empty()));
    if parsed.documents.is_empty() && parsed.failures.is_empty() {
        return Err(ParseError::NoText);
    }
    Ok(parsed)
}

fn parse_format(format: Format, raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    match format {
        Format::Text => text::parse(raw),
        Format::Markdown => markdown::parse(raw),
        Format::Rst => rst::parse(raw),
        Format::AsciiDoc => asciidoc::parse(raw),
        Format::Org => org::parse(raw),
        Format::Notebook => notebook::parse(raw),
        Format::Latex => latex::parse(raw),
        Format::Wikitext => wikitext::parse(raw),
        Format::WikiDump => wiki_dump::parse(raw),
        Format::Xml => xml::parse(raw, members),
        Format::ManPage => man_page::parse(raw),
        Format::Bibtex => bibtex::parse(raw),
        Format::Ris => ris::parse(raw),
        Format::Medline => medline::parse(raw),
        Format::Subtitles => subtitles::parse(raw),
        Format::Html => html::parse(raw),
        Format::Json => json::parse_json(raw),
        Format::Jsonl => json::parse_jsonl(raw),
        Format::Csv => csv::parse(raw, b','),
        Format::Tsv => csv::parse(raw, b'\t'),
        Format::Pdf => pdf::parse(raw),
        Format::Docx => docx::parse(raw),
        Format::Pptx => pptx::parse(raw),
        Format::Xlsx => xlsx::parse(raw),
        Format::Odt => odt::parse(raw),
        Format::Ods => ods::parse(raw),
        Format::Odp => odp::parse(raw),
        Format::Epub => epub::parse(raw),
        Format::Rtf => rtf::parse(raw),
        Format::Doc => doc::parse(raw),
        Format::Hwp => hwp::parse(raw),
        Format::Hwpx => hwpx::parse(raw),
        Format::Xls => xls::parse(raw),
        Format::Ppt => ppt::parse(raw),
        Format::Email => email::parse(raw),
        Format::Mbox => mbox::parse(raw, members),
        Format::Msg => msg::parse(raw),
        Format::Zip => archive::parse(raw, members),
        Format::Tar => archive::parse_tar(raw, members),
        Format::SevenZip => archive::parse_7z(raw, members),
        Format::Compressed => compressed::parse(raw, members),
    }
}

/// A parsed document's blocks as (text, heading path, kind), for tests to compare.
#[cfg(test)]
pub(crate) fn outline_of(document: &Document) -> Vec<(&str, Vec<&str>, ContentType)> {
    document
        .blocks
        .iter()
        .map(|b| {
            (
                b.text.as_str(),
                b.heading_path.iter().map(String::as_str).collect(),
                b.kind,
            )
        })
        .collect()
}

/// A parse's failed items as (URI, reason), for tests to compare.
#[cfg(test)]
pub(crate) fn failures_of(parsed: &Parsed) -> Vec<(&str, &str)> {
    parsed
        .failures
        .iter()
        .map(|f| (f.uri.as_str(), f.reason.as_str()))
        .collect()
}

/// The first (for most formats, the one) document a file named `name` parses into, for tests.
#[cfg(test)]
pub(crate) fn document_of(name: &str, bytes: impl Into<bytes::Bytes>) -> Document {
    AutoParser
        .parse(&raw_for_test(name, bytes))
        .unwrap()
        .documents
        .remove(0)
}

/// The blocks' texts of the one document a file parses into, for tests to compare.
#[cfg(test)]
pub(crate) fn block_texts_of(name: &str, bytes: impl Into<bytes::Bytes>) -> Vec<String> {
    document_of(name, bytes).blocks.into_iter().map(|b| b.text).collect()
}

/// A paged document's blocks as (text, page, heading path, kind), for tests to compare.
#[cfg(test)]
pub(crate) fn paged_outline_of(document: &Document) -> Vec<(&str, Option<u32>, Vec<&str>, ContentType)> {
    document
        .blocks
        .iter()
        .map(|b| {
            (
                b.text.as_str(),
                b.page,
                b.heading_path.iter().map(String::as_str).collect(),
                b.kind,
            )
        })
        .collect()
}

/// Each block's text cut at its time marks, with the seconds each part is said at, for tests.
#[cfg(test)]
pub(crate) fn said_when(document: &Document) -> Vec<Vec<(&str, u32)>> {
    document
        .blocks
        .iter()
        .map(|block| {
            let ends = block
                .times
                .iter()
                .skip(1)
                .map(|m| m.at as usize)
                .chain([block.text.len()]);
            block
                .times
                .iter()
                .zip(ends)
                .map(|(mark, end)| (&block.text[mark.at as usize..end], mark.seconds))
                .collect()
        })
        .collect()
}

#[cfg(test)]
pub(crate) fn raw_for_test(name: &str, bytes: impl Into<bytes::Bytes>) -> RawDocument {
    let bytes = bytes.into();
    RawDocument {
        uri: format!("memory://test/{name}"),
        relative_path: name.to_string(),
        size: bytes.len() as u64,
        bytes,
        etag: None,
        source: "memory".into(),
        content_type: None,
    }
}
