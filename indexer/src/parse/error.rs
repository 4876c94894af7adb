//! Why one file could not be read: messages written for the person who uploaded it.

/// A per-file failure. It fails that file alone; the run goes on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    #[error("file is empty")]
    Empty,
    #[error("not valid UTF-8 at byte {0}")]
    InvalidUtf8(usize),
    #[error("binary file: not a supported document format ({0})")]
    Binary(String),
    #[error("unsupported file type `.{0}`")]
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
