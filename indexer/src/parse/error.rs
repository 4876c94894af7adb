//! Why one file could not be read: messages written for the person who uploaded it.

/// The formats quarry parses, for the messages of the files it cannot.
pub const SUPPORTED_FORMATS: &str =
    "supported: PDF, DOCX, HTML, Markdown, CSV, TSV, JSON, JSONL and UTF-8 text (.txt, or any other extension whose bytes are text)";

/// A per-file failure. It fails that file alone; the run goes on.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ParseError {
    #[error("file is empty")]
    Empty,
    #[error("not valid UTF-8 at byte {0}")]
    InvalidUtf8(usize),
    #[error("binary file: not a supported document format ({0}); {SUPPORTED_FORMATS}")]
    Binary(String),
    #[error("unsupported file type `.{0}`: the bytes are binary, not text; {SUPPORTED_FORMATS}")]
    Unsupported(String),
    #[error("PDF is password-protected. Please upload an unlocked version.")]
    PasswordProtected,
    #[error("PDF contains only scanned images. OCR support coming soon.")]
    ScannedOnly,
    #[error("File appears corrupted ({0}). Please verify the file and try again.")]
    Corrupt(String),
    #[error("no text content found")]
    NoText,
    #[error("Document too large: {0}")]
    TooLarge(String),
    #[error(
        "{part}: more than {mib} MiB once inflated (a compression bomb, or too large a document); the file is skipped"
    )]
    Inflates { part: String, mib: u64 },
    #[error("file is nested too deeply to parse (the parser ran out of stack); the file is skipped")]
    TooDeep,
    #[error(
        "parsing needs more than {0} MiB of memory (a compression bomb, or too large a file); the file is skipped"
    )]
    TooMuchMemory(u64),
    #[error("parsing took longer than {0} s; the file is skipped")]
    TooSlow(u64),
    #[error("the parser stopped on this file ({0}); the file is skipped")]
    ParserCrashed(String),
    #[error("no parser process could be started ({0})")]
    ParserUnavailable(String),
}
