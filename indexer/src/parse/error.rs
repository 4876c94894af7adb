//! Why one file could not be read: messages written for the person who uploaded it.

/// The formats quarry parses, for the messages of the files it cannot.
pub const SUPPORTED_FORMATS: &str =
    "supported: PDF, DOCX, HTML, Markdown, CSV, TSV, JSON, JSONL and UTF-8 text (.txt, or any other extension whose bytes are text)";

/// A per-file failure. It fails that file alone; the run goes on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
}
