//! Why one file could not be read: messages written for the person who uploaded it.

/// The formats quarry parses, for the messages of the files it cannot.
pub const SUPPORTED_FORMATS: &str =
    "supported: PDF, DOCX, PPTX, XLSX, DOC, XLS, PPT (Office 97-2003), HWP, HWPX, ODT, ODS, ODP, EPUB, FictionBook, RTF, e-mail (EML, MBOX, MSG), HTML, Markdown, reStructuredText, AsciiDoc, Org, LaTeX, Jupyter notebooks, MediaWiki, man pages, BibTeX, RIS, XML (PubMed, RSS, Atom, Evernote), subtitles (SRT, WebVTT, SBV, ASS, TTML, SAMI, MicroDVD), LRC lyrics, CSV, TSV, JSON, JSONL, text (any extension whose bytes are text, in any encoding), ZIP, 7z and tar archives of these, and these compressed whole (.gz, .zst, .bz2, .xz, .lz4)";

/// `500000` as `500k tokens`, as seed 004 writes its limit.
fn token_count(tokens: usize) -> String {
    if tokens >= 1000 && tokens.is_multiple_of(1000) {
        format!("{}k tokens", tokens / 1000)
    } else {
        format!("{tokens} tokens")
    }
}

/// A per-file failure. It fails that file alone; the run goes on.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ParseError {
    #[error("file is empty")]
    Empty,
    #[error("binary file: not a supported document format ({0}); {SUPPORTED_FORMATS}")]
    Binary(String),
    #[error("unsupported file type `.{0}`: the bytes are binary, not text; {SUPPORTED_FORMATS}")]
    Unsupported(String),
    #[error("PDF is password-protected. Please upload an unlocked version.")]
    PasswordProtected,
    #[error("PDF contains only scanned images. OCR support coming soon.")]
    ScannedOnly,
    /// An Office file saved with a password, an OpenDocument file encrypted, an e-book
    /// under DRM: its text cannot be read without a key (the format is named).
    #[error("{0} is encrypted (saved with a password, or under DRM). Please upload an unlocked version.")]
    Encrypted(String),
    /// Seed 004's message; what was found wrong is the [`ParseError::detail`].
    #[error("File appears corrupted. Please verify the file and try again.")]
    Corrupt(String),
    #[error("no text content found")]
    NoText,
    /// A file of a kind that holds no text by design (a data dump's table of votes): the kind
    /// is the detail of the message.
    #[error("no text content found: {0}")]
    NoTextIn(String),
    /// Seed 004's message, with the limit; the document's own count is the detail.
    #[error("Document too large: exceeds maximum token limit ({}).", token_count(*limit))]
    TooLarge { tokens: usize, limit: usize },
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

impl ParseError {
    /// What a user-facing message leaves out: what was found wrong in a corrupted file, the
    /// size of a document too large.
    pub fn detail(&self) -> Option<String> {
        match self {
            ParseError::Corrupt(detail) => Some(detail.clone()),
            ParseError::TooLarge { tokens, limit } => Some(format!("{tokens} tokens; the limit is {limit}")),
            _ => None,
        }
    }

    /// Whether the file is no document at all (a picture, a program, nothing in it): what an
    /// archive's or a message's documents leave out rather than fail.
    pub fn is_no_document(&self) -> bool {
        matches!(
            self,
            ParseError::Binary(_)
                | ParseError::Unsupported(_)
                | ParseError::Empty
                | ParseError::NoText
                | ParseError::NoTextIn(_)
        )
    }

    /// The error as the reason of a failed item of a file (a mailbox's message, an
    /// attachment): a corrupted item's detail, else the message.
    pub fn as_item_reason(&self) -> String {
        match self {
            ParseError::Corrupt(detail) => detail.clone(),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod seed_message_tests {
    use super::*;

    #[test]
    fn a_binary_files_message_with_the_formats_list_is_reported_whole() {
        // A run report and an upload's record cut a reason at 600 characters: the list of
        // formats must leave room for the file's kind.
        for kind in ["PNG image", "OLE compound file", "ELF executable"] {
            let message = ParseError::Binary(kind.into()).to_string();
            assert!(message.chars().count() < 600, "{} characters", message.chars().count());
        }
    }

    #[test]
    fn messages_are_seed_004s_and_the_detail_stays_apart() {
        let corrupt = ParseError::Corrupt("row 3: unclosed quote".into());
        assert_eq!(
            corrupt.to_string(),
            "File appears corrupted. Please verify the file and try again."
        );
        assert_eq!(corrupt.detail().as_deref(), Some("row 3: unclosed quote"));
        let large = ParseError::TooLarge {
            tokens: 780_000,
            limit: 500_000,
        };
        assert_eq!(
            large.to_string(),
            "Document too large: exceeds maximum token limit (500k tokens)."
        );
        assert_eq!(large.detail().as_deref(), Some("780000 tokens; the limit is 500000"));
        assert_eq!(ParseError::NoText.detail(), None);
    }
}
