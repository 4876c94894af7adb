//! Picks a file's format: by extension first, then by sniffing the leading bytes.

use super::ParseError;

/// The formats quarry parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Format {
    Text,
    Markdown,
    /// reStructuredText.
    Rst,
    AsciiDoc,
    /// Emacs Org mode.
    Org,
    /// A Jupyter notebook.
    Notebook,
    /// LaTeX source.
    Latex,
    /// MediaWiki's markup, one page (`.wiki`).
    Wikitext,
    /// A MediaWiki XML dump: many pages.
    WikiDump,
    /// Other XML: read for its text, or a PubMed article set, one document per article.
    Xml,
    /// A manual page (roff: `ls.1`), told by its first request.
    ManPage,
    /// A BibTeX or BibLaTeX bibliography: one document per entry.
    Bibtex,
    /// A RIS bibliography (`.ris`): one document per record.
    Ris,
    /// MEDLINE's text format (`.nbib`, PubMed's saved `.txt`): one document per record.
    Medline,
    /// Subtitles and transcripts (SubRip, WebVTT, SubViewer, SubStation, SAMI, MicroDVD, LRC),
    /// one document per file.
    Subtitles,
    Html,
    Json,
    Jsonl,
    Csv,
    Tsv,
    Pdf,
    Docx,
    Pptx,
    Xlsx,
    Odt,
    Ods,
    Odp,
    Epub,
    Rtf,
    Doc,
    /// Hangul Word Processor (HWP 5.0), Hancom Office's compound file.
    Hwp,
    /// HWPX, Hancom Office's OWPML package (`application/hwp+zip`).
    Hwpx,
    Xls,
    Ppt,
    Email,
    Mbox,
    Msg,
    Zip,
    /// A 7z archive.
    SevenZip,
    /// A tar archive, as it is or compressed whole (`.tar.gz`, `.tgz`, `.tar.zst`, `.tar.bz2`,
    /// `.tar.xz`, ...).
    Tar,
    /// One file compressed whole (`.gz`, `.zst`, `.bz2`, `.xz`): read as the file it holds.
    Compressed,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Markdown => "Markdown",
            Self::Rst => "reStructuredText",
            Self::AsciiDoc => "AsciiDoc",
            Self::Org => "Org",
            Self::Notebook => "Jupyter notebook",
            Self::Latex => "LaTeX",
            Self::Wikitext => "wikitext",
            Self::WikiDump => "MediaWiki dump",
            Self::Xml => "XML",
            Self::ManPage => "man page",
            Self::Bibtex => "BibTeX",
            Self::Ris => "RIS",
            Self::Medline => "MEDLINE",
            Self::Subtitles => "subtitles",
            Self::Html => "HTML",
            Self::Json => "JSON",
            Self::Jsonl => "JSONL",
            Self::Csv => "CSV",
            Self::Tsv => "TSV",
            Self::Pdf => "PDF",
            Self::Docx => "DOCX",
            Self::Pptx => "PPTX",
            Self::Xlsx => "XLSX",
            Self::Odt => "ODT",
            Self::Ods => "ODS",
            Self::Odp => "ODP",
            Self::Epub => "EPUB",
            Self::Rtf => "RTF",
            Self::Doc => "DOC",
            Self::Hwp => "HWP",
            Self::Hwpx => "HWPX",
            Self::Xls => "XLS",
            Self::Ppt => "PPT",
            Self::Email => "EML",
            Self::Mbox => "MBOX",
            Self::Msg => "MSG",
            Self::Zip => "ZIP",
            Self::SevenZip => "7Z",
            Self::Tar => "TAR",
            Self::Compressed => "compressed file",
        }
    }

    /// Whether the format is read by third-party parsers of nesting, compression and markup
    /// a file controls (lopdf and pdf-extract, zip, html5ever, mail-parser; Markdown and
    /// Jupyter notebooks' Markdown cells, whose HTML blocks html5ever reads; and messages' attachments, which may be any of those), which
    /// can overflow a stack, inflate a bomb or take time quadratic in a page's depth: those
    /// files are parsed in worker processes. The others are read by quarry's own code and
    /// parsers bounded by design (serde_json's depth limit of 128, csv), in memory and time
    /// linear in the file. Archives and
    /// mailboxes are split by quarry's own code (a 7z archive by sevenz-rust2's, its decoders'
    /// memory and the bytes it unpacks bounded), and each of their files and messages goes
    /// where its own format goes.
    pub fn needs_isolation(self) -> bool {
        matches!(
            self,
            Self::Pdf
                | Self::Docx
                | Self::Hwpx
                | Self::Pptx
                | Self::Xlsx
                | Self::Odt
                | Self::Ods
                | Self::Odp
                | Self::Epub
                | Self::Html
                | Self::Markdown
                | Self::Notebook
                | Self::Email
                | Self::Msg
        )
    }
}

pub(super) fn by_extension(ext: &str) -> Option<Format> {
    Some(match ext {
        "txt" | "text" | "log" => Format::Text,
        "rst" | "rest" => Format::Rst,
        "adoc" | "asciidoc" => Format::AsciiDoc,
        "org" => Format::Org,
        "ipynb" => Format::Notebook,
        "tex" | "latex" | "ltx" => Format::Latex,
        "wiki" | "mediawiki" | "wikitext" => Format::Wikitext,
        "bib" | "bibtex" => Format::Bibtex,
        "ris" => Format::Ris,
        "nbib" | "medline" => Format::Medline,
        "srt" | "vtt" | "sbv" | "ass" | "ssa" | "lrc" | "smi" | "sami" => Format::Subtitles,
        "md" | "markdown" | "mdx" => Format::Markdown,
        "html" | "htm" | "xhtml" => Format::Html,
        "json" => Format::Json,
        "jsonl" | "ndjson" => Format::Jsonl,
        "csv" => Format::Csv,
        "tsv" => Format::Tsv,
        "pdf" => Format::Pdf,
        "docx" => Format::Docx,
        "pptx" | "pptm" => Format::Pptx,
        "xlsx" | "xlsm" => Format::Xlsx,
        "odt" => Format::Odt,
        "ods" => Format::Ods,
        "odp" => Format::Odp,
        "epub" => Format::Epub,
        "rtf" => Format::Rtf,
        "doc" | "dot" => Format::Doc,
        "hwp" => Format::Hwp,
        "hwpx" => Format::Hwpx,
        "xls" | "xlt" => Format::Xls,
        "ppt" | "pps" | "pot" => Format::Ppt,
        "eml" => Format::Email,
        "mbox" | "mbx" => Format::Mbox,
        "msg" => Format::Msg,
        "zip" => Format::Zip,
        "7z" => Format::SevenZip,
        "tar" | "tgz" | "tzst" | "tbz" | "tbz2" | "txz" => Format::Tar,
        ext if super::compressed::EXTENSIONS.contains(&ext) || super::compressed::MOZILLA_EXTENSIONS.contains(&ext) => {
            Format::Compressed
        }
        _ => return None,
    })
}

/// Known binary formats quarry does not parse, named for the error message.
fn known_binary(bytes: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "PNG image"),
        (b"\xFF\xD8\xFF", "JPEG image"),
        (b"GIF8", "GIF image"),
        (b"\x7FELF", "ELF executable"),
    ];
    MAGIC
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map(|(_, name)| *name)
}

/// A compound file's format, by the streams it holds: Word's, Excel's, PowerPoint's and
/// Outlook's messages are read; the others (a Visio drawing, ...) are named in the error.
fn compound_file_format(bytes: &[u8]) -> Result<Format, ParseError> {
    let file = super::compound_file::CompoundFile::open(bytes).ok();
    let names: Vec<String> = match &file {
        Some(file) => file.stream_names().into_iter().map(str::to_ascii_lowercase).collect(),
        None => Vec::new(),
    };
    let holds = |name: &str| names.iter().any(|n| n == name);
    match () {
        _ if file.as_ref().is_some_and(super::hwp::is_hwp) => Ok(Format::Hwp),
        _ if holds("worddocument") => Ok(Format::Doc),
        _ if holds("workbook") || holds("book") => Ok(Format::Xls),
        _ if holds("powerpoint document") => Ok(Format::Ppt),
        _ if holds("__properties_version1.0") => Ok(Format::Msg),
        _ => Err(ParseError::Binary("OLE compound file".into())),
    }
}

/// Whether `line` is a mail header field: a name of letters, digits and `-`, then `:`.
pub(super) fn is_header_field(line: &str) -> bool {
    let name = line.split_once(':').map(|(name, _)| name).unwrap_or_default();
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Whether a file begins as an e-mail message's header: its first line a header field, and a
/// `From:` and a `Subject:`, `Date:` or `Message-ID:` among the fields of its first 8 KiB.
fn looks_like_a_message(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(8 << 10)]).to_ascii_lowercase();
    let is_field = is_header_field(head.lines().next().unwrap_or_default());
    let fields: Vec<&str> = head.lines().take_while(|l| !l.trim().is_empty()).collect();
    let has = |name: &str| fields.iter().any(|l| l.starts_with(name));
    is_field && has("from:") && (has("subject:") || has("date:") || has("message-id:"))
}

/// A UTF-16 file's first 16 KiB decoded (with a byte order mark, or told by its zero bytes):
/// those zeros hide `<?xml`, `<html` and `{` from the sniffs, which read the bytes as UTF-8.
fn utf16_head(bytes: &[u8]) -> Option<String> {
    let (encoding, bom) = super::text::utf16_encoding(bytes)?;
    let sample = &bytes[bom..bytes.len().min(16 << 10) & !1];
    Some(encoding.decode_without_bom_handling(sample).0.into_owned())
}

/// A text format told by a file's first characters (`text`: its bytes, or a UTF-16 file's
/// head decoded). Mailboxes and messages are told before, on the bytes alone: their readers
/// read bytes, where these formats' readers decode UTF-16 as a text file's is.
fn by_leading_text(text: &[u8], ext: Option<&str>) -> Option<Format> {
    let head = String::from_utf8_lossy(&text[..text.len().min(512)])
        .trim_start()
        .to_ascii_lowercase();
    if super::wiki_dump::looks_like_a_dump(&head) {
        return Some(Format::WikiDump);
    }
    // SAMI's `<SAMI>` before HTML's and XML's tags, MicroDVD's `{0}{25}` before JSON's `{`.
    if super::sami::looks_like_sami(&head) || super::microdvd::looks_like_microdvd(&head) {
        return Some(Format::Subtitles);
    }
    if head.starts_with("<!doctype html") || head.starts_with("<html") || super::xml::is_xhtml(&head) {
        return Some(Format::Html);
    }
    if super::xml::looks_like_xml(&head, ext) {
        return Some(Format::Xml);
    }
    // SubStation's `[Script Info]` before JSON's `[`.
    if super::substation::looks_like_substation(&head) {
        return Some(Format::Subtitles);
    }
    if head.starts_with('{') || head.starts_with('[') {
        let first_line = text.split(|b| *b == b'\n').next().unwrap_or(text);
        if serde_json::from_slice::<serde_json::Value>(first_line).is_ok()
            && text.iter().filter(|b| **b == b'\n').count() > 1
        {
            return Some(Format::Jsonl);
        }
        return Some(Format::Json);
    }
    if super::man_page::looks_like_a_man_page(text) {
        return Some(Format::ManPage);
    }
    if super::medline::looks_like_medline(text) {
        return Some(Format::Medline);
    }
    if super::subtitles::looks_like_subtitles(text) {
        return Some(Format::Subtitles);
    }
    None
}

/// Chooses the format of a file from its path and bytes.
pub fn detect_format(path: &str, bytes: &[u8]) -> Result<Format, ParseError> {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let ext = file_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    if let Some(format) = ext.as_deref().and_then(by_extension) {
        // `.tar.gz`, `.tar.zst`: a tar archive, compressed.
        let holds_a_tar = || {
            let inner = super::compressed::inner_name(file_name);
            inner.to_ascii_lowercase().ends_with(".tar")
        };
        if format == Format::Compressed && holds_a_tar() {
            return Ok(Format::Tar);
        }
        // PubMed saves its MEDLINE records as `pubmed-<query>-set.txt`.
        if format == Format::Text && super::medline::looks_like_medline(bytes) {
            return Ok(Format::Medline);
        }
        return Ok(format);
    }
    if super::compressed::Compression::of(bytes).is_some() {
        return Ok(Format::Compressed);
    }
    if bytes.starts_with(b"7z\xBC\xAF\x27\x1C") {
        return Ok(Format::SevenZip);
    }
    if bytes.get(257..262) == Some(b"ustar") {
        return Ok(Format::Tar);
    }
    if bytes.starts_with(b"%PDF-") {
        return Ok(Format::Pdf);
    }
    if bytes.starts_with(b"{\\rtf") {
        return Ok(Format::Rtf);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        // A package's part names are in its local headers and its central directory.
        let holds = |name: &[u8]| bytes.windows(name.len()).any(|w| w == name);
        if holds(b"word/document.xml") {
            return Ok(Format::Docx);
        }
        if holds(b"ppt/presentation.xml") {
            return Ok(Format::Pptx);
        }
        if holds(b"xl/workbook.xml") {
            return Ok(Format::Xlsx);
        }
        // OpenDocument's, HWPX's and EPUB's first part, stored: their `mimetype` (HWPX has
        // EPUB's `META-INF/container.xml` too).
        if holds(super::hwpx::MIMETYPE) {
            return Ok(Format::Hwpx);
        }
        if holds(b"application/vnd.oasis.opendocument.text") {
            return Ok(Format::Odt);
        }
        if holds(b"application/vnd.oasis.opendocument.spreadsheet") {
            return Ok(Format::Ods);
        }
        if holds(b"application/vnd.oasis.opendocument.presentation") {
            return Ok(Format::Odp);
        }
        if holds(b"application/epub+zip") || holds(b"META-INF/container.xml") {
            return Ok(Format::Epub);
        }
        // Another extension's ZIP (a Java archive, a Python wheel, an Android package) holds
        // programs, not documents.
        return match ext {
            None => Ok(Format::Zip),
            Some(_) => Err(ParseError::Binary(
                "ZIP archive; only .zip files are read as archives".into(),
            )),
        };
    }
    if super::ooxml::is_encrypted_office_package(bytes) {
        return Err(ParseError::Encrypted("Office file".into()));
    }
    if super::compound_file::is_compound_file(bytes) {
        return compound_file_format(bytes);
    }
    if let Some(kind) = known_binary(bytes) {
        return Err(ParseError::Binary(kind.into()));
    }
    if let Some(decoded) = utf16_head(bytes) {
        return Ok(by_leading_text(decoded.as_bytes(), ext.as_deref()).unwrap_or(Format::Text));
    }
    if super::mbox::looks_like_a_mailbox(bytes) {
        return Ok(Format::Mbox);
    }
    if looks_like_a_message(bytes) {
        return Ok(Format::Email);
    }
    if let Some(format) = by_leading_text(bytes, ext.as_deref()) {
        return Ok(format);
    }
    match ext {
        // Any other extension is accepted as text when the bytes are text; `decode_text` rejects binaries.
        Some(ext) if bytes.iter().take(8192).any(|b| *b == 0) && super::text::utf16_without_bom(bytes).is_none() => {
            Err(ParseError::Unsupported(ext))
        }
        _ => Ok(Format::Text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_wins_then_sniffing() {
        assert_eq!(detect_format("a/b.MD", b"x").unwrap(), Format::Markdown);
        let by_name = [
            ("guide.rst", Format::Rst),
            ("guide.adoc", Format::AsciiDoc),
            ("notes.org", Format::Org),
            ("fees.ipynb", Format::Notebook),
            ("paper.tex", Format::Latex),
            ("Main_Page.wiki", Format::Wikitext),
            ("references.bib", Format::Bibtex),
            ("export.ris", Format::Ris),
        ];
        for (name, format) in by_name {
            assert_eq!(detect_format(name, b"{\"cells\": []}").unwrap(), format, "{name}");
        }
        assert_eq!(detect_format("report", b"%PDF-1.7 ...").unwrap(), Format::Pdf);
        assert_eq!(detect_format("page", b"  <!DOCTYPE html><html>").unwrap(), Format::Html);
        // A MediaWiki dump by its first element, whatever its name; other XML is text.
        let dump =
            b"\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.11/\">";
        assert_eq!(detect_format("enwiki.xml", dump).unwrap(), Format::WikiDump);
        assert_eq!(detect_format("export", &dump[3..]).unwrap(), Format::WikiDump);
        // Other XML by its declaration, or by `<` and an XML vocabulary's extension; XHTML is HTML.
        assert_eq!(
            detect_format("feed.xml", b"<?xml version=\"1.0\"?><rss/>").unwrap(),
            Format::Xml
        );
        assert_eq!(
            detect_format("export", b"<?xml version=\"1.0\"?><a/>").unwrap(),
            Format::Xml
        );
        assert_eq!(detect_format("article.nxml", b"<article>").unwrap(), Format::Xml);
        assert_eq!(detect_format("notes", b"<b>bold</b> words").unwrap(), Format::Text);
        let xhtml = b"<?xml version=\"1.0\"?>\n<!-- made by hand -->\n<!DOCTYPE html><html/>";
        assert_eq!(detect_format("page", xhtml).unwrap(), Format::Html);
        // A manual page by its first request, whatever its section's extension.
        let page = b".\\\" generated\n.TH LS 1\n.SH NAME\nls\n";
        assert_eq!(detect_format("ls.1", page).unwrap(), Format::ManPage);
        assert_eq!(detect_format("printf.3posix", page).unwrap(), Format::ManPage);
        assert_eq!(detect_format("app.log.1", b"started\n.TH\n").unwrap(), Format::Text);
        assert_eq!(
            detect_format("data", b"{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n").unwrap(),
            Format::Jsonl
        );
        assert_eq!(detect_format("data", b"{\"a\":\n1}").unwrap(), Format::Json);
        assert_eq!(detect_format("README", b"plain words").unwrap(), Format::Text);
        // Office packages by the parts they hold.
        let deck = super::super::pptx::fixtures::pptx(&[(String::new(), None)], &[0]);
        let book = super::super::xlsx::fixtures::xlsx(&[("S", String::new())], &[]);
        let letter = super::super::docx::fixtures::docx("");
        assert_eq!(detect_format("upload", &deck).unwrap(), Format::Pptx);
        assert_eq!(detect_format("upload", &book).unwrap(), Format::Xlsx);
        // Compound files by the streams they hold.
        use super::super::compound_file::fixtures::{DECK_PPT, PARTS_XLS, REPORT_DOC};
        assert_eq!(detect_format("upload", REPORT_DOC).unwrap(), Format::Doc);
        assert_eq!(detect_format("upload", DECK_PPT).unwrap(), Format::Ppt);
        assert_eq!(detect_format("upload", PARTS_XLS).unwrap(), Format::Xls);
        let mut other = PARTS_XLS.to_vec();
        let name: Vec<u8> = "Workbook".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let at = other.windows(name.len()).position(|w| w == name).unwrap();
        other[at..at + name.len()].copy_from_slice(
            &"Workbash"
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect::<Vec<u8>>(),
        );
        assert_eq!(
            detect_format("upload", &other).unwrap_err(),
            ParseError::Binary("OLE compound file".into())
        );
        assert_eq!(detect_format("upload", &letter).unwrap(), Format::Docx);
        let text = super::super::odt::fixtures::odt("<text:p>x</text:p>", None);
        assert_eq!(detect_format("upload", &text).unwrap(), Format::Odt);
        let opendocument = super::super::opendocument::fixtures::opendocument;
        let sheet = opendocument("spreadsheet", "", None);
        assert_eq!(detect_format("upload", &sheet).unwrap(), Format::Ods);
        let slides = opendocument("presentation", "", None);
        assert_eq!(detect_format("upload", &slides).unwrap(), Format::Odp);
        let book = super::super::epub::fixtures::epub("t", &[("a.xhtml", "<p>x</p>")]);
        assert_eq!(detect_format("upload", &book).unwrap(), Format::Epub);
        assert_eq!(detect_format("q3.XLSM", b"x").unwrap(), Format::Xlsx);
        assert_eq!(detect_format("letter", b"{\\rtf1\\ansi x}").unwrap(), Format::Rtf);
    }

    #[test]
    fn utf16_files_are_told_by_their_decoded_first_characters() {
        let utf16 = |text: &str, big_endian: bool, bom: bool| -> Vec<u8> {
            let units = bom.then_some(0xFEFF).into_iter().chain(text.encode_utf16());
            match big_endian {
                true => units.flat_map(u16::to_be_bytes).collect(),
                false => units.flat_map(u16::to_le_bytes).collect(),
            }
        };
        let feed = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><rss><channel><item><title>Zürich</title><description>Die Altstadt.</description></item></channel></rss>";
        let page = "<!DOCTYPE html><html><body><p>Grüße aus Köln</p></body></html>";
        let json = "{\"title\": \"Ærø\", \"body\": \"words\"}";
        let lines = "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n";
        let page_of_a_manual = ".TH LS 1\n.SH NAME\nls \\- list directory contents\n.SH SYNOPSIS\n.B ls\n";
        let dump = "<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.11/\"><page/></mediawiki>";
        let cases = [
            (feed, Format::Xml),
            (page, Format::Html),
            (json, Format::Json),
            (lines, Format::Jsonl),
            (page_of_a_manual, Format::ManPage),
            (dump, Format::WikiDump),
            ("plain words, nothing more", Format::Text),
        ];
        for (text, format) in cases {
            for (big_endian, bom) in [(false, false), (false, true), (true, false), (true, true)] {
                let bytes = utf16(text, big_endian, bom);
                let told = detect_format("export", &bytes).unwrap();
                assert_eq!(told, format, "{text:?} big endian {big_endian}, byte order mark {bom}");
            }
        }
        // Read as what it was told: the feed's item, decoded.
        use super::super::{raw_for_test, AutoParser, Parser};
        let parsed = AutoParser
            .parse(&raw_for_test("export", utf16(feed, false, false)))
            .unwrap();
        let titles: Vec<&str> = parsed.documents.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(titles, ["Zürich"]);
    }

    #[test]
    fn binaries_are_named() {
        assert_eq!(
            detect_format("x.bin", b"\x89PNG\r\n"),
            Err(ParseError::Binary("PNG image".into()))
        );
        assert_eq!(
            detect_format("x.dat", b"ab\0cd"),
            Err(ParseError::Unsupported("dat".into()))
        );
    }
}
