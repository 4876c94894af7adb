//! Hostile files through a nightly run's stages, as it meets them: a seeded generator
//! writes about 2,000 files of every format (truncated, bit-flipped, padded with junk,
//! nested thousands deep, compression bombs, UTF-16 without a mark, wrong extensions, one
//! endless line, ...) beside control files of every format that must be indexed. The run
//! must end normally (no abort), every bad file must fail alone with a specific reason, the
//! controls must be found, and memory must stay bounded. Bounded in count and time: about a
//! minute on 2 cores. The run is `quarry bench-pipeline`, `quarry index` with seeded vectors
//! in place of the model: every stage but the model's is the same, and embedding the junk
//! text of 2,000 files on a CPU would take most of the suite's time for nothing it checks.

use crate::common::pdf_files::{pdf_of, pdf_with_a_page_it_cannot_read};
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// Files the generator writes besides the controls.
const HOSTILE_FILES: usize = 2000;
/// Controls per format.
const CONTROLS_PER_FORMAT: usize = 6;
/// A parse worker's memory limit in this run, MiB.
const PARSE_MEMORY_MIB: u64 = 512;

const FORMATS: [&str; 56] = [
    "txt", "md", "rst", "adoc", "org", "ipynb", "tex", "wiki", "xml", "nxml", "pubmed", "rss", "posts", "1", "bib",
    "ris", "nbib", "vtt", "srt", "ass", "ttml", "lrc", "smi", "sub", "whisper", "hwp", "hwpx", "html", "json", "jsonl",
    "csv", "tsv", "pdf", "docx", "pptx", "xlsx", "odt", "ods", "odp", "epub", "fb2", "enex", "rtf", "doc", "xls",
    "ppt", "eml", "mbox", "msg", "zip", "tgz", "gz", "txz", "bz2", "lz4", "7z",
];

// The suite must give the same files every run.
use quarry_datasets::synthetic::SeededRng as Rng;

const WORDS: [&str; 16] = [
    "harbour", "tide", "quay", "lantern", "ledger", "anchor", "signal", "beacon", "channel", "pilot", "buoy",
    "current", "dock", "keel", "mast", "rope",
];

fn sentence(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| WORDS[rng.below(WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

/// A minimal one-page PDF whose page shows `text`; `extra` goes into the page dictionary.
fn pdf(text: &str, extra: &[u8]) -> Vec<u8> {
    let content = format!("BT /F1 12 Tf 72 700 Td ({text}) Tj ET");
    let mut page =
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> "
            .to_vec();
    page.extend_from_slice(extra);
    page.extend_from_slice(b">>");
    let stream = [
        format!("<< /Length {} >>\nstream\n", content.len()).into_bytes(),
        content.into_bytes(),
        b"\nendstream".to_vec(),
    ]
    .concat();
    pdf_of(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        page,
        stream,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ])
}

/// A gzipped MediaWiki dump of two pages with a comment of `mib` MiB between them.
fn dump_with_a_comment_of(mib: usize) -> Vec<u8> {
    let page = |id: u32| {
        format!(
            "<page><title>Page {id}</title><ns>0</ns><id>{id}</id><revision><id>{id}</id>\
             <text xml:space=\"preserve\">The harbour page {id}.</text></revision></page>\n"
        )
    };
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder
        .write_all(
            format!(
                "<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.11/\">\n{}<!--",
                page(1)
            )
            .as_bytes(),
        )
        .unwrap();
    let block = vec![b'x'; 1 << 20];
    for _ in 0..mib {
        encoder.write_all(&block).unwrap();
    }
    encoder
        .write_all(format!("-->\n{}</mediawiki>\n", page(2)).as_bytes())
        .unwrap();
    encoder.finish().unwrap()
}

/// A PDF whose page content is a Flate stream inflating to `mib` MiB of spaces.
fn flate_bomb_pdf(mib: usize) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..mib {
        encoder.write_all(&spaces).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    let stream = [
        format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", bomb.len()).into_bytes(),
        bomb,
        b"\nendstream".to_vec(),
    ]
    .concat();
    let page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>".to_vec();
    pdf_of(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        page,
        stream,
    ])
}

/// An Office Open XML package of `parts` (name, XML); with `bomb_mib`, the last part's XML
/// inflates by that many MiB before its closing `bomb_tail`.
fn package(parts: &[(&str, String)], bomb_mib: usize, bomb_tail: &str) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(bomb_mib > 0);
    zip.start_file("[Content_Types].xml", options).unwrap();
    zip.write_all(
        br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>"#,
    )
    .unwrap();
    for (name, xml) in parts {
        zip.start_file(*name, options).unwrap();
        zip.write_all(xml.as_bytes()).unwrap();
    }
    let filler = vec![b'a'; 1 << 20];
    if bomb_mib > 0 {
        for _ in 0..bomb_mib {
            zip.write_all(&filler).unwrap();
        }
        zip.write_all(bomb_tail.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A DOCX whose body holds `paragraphs`, or whose document.xml inflates to `bomb_mib` MiB.
fn docx(paragraphs: &[String], bomb_mib: usize) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<w:p><w:r><w:t>{p}</w:t></w:r></w:p>"))
        .collect();
    let (open, close) = match bomb_mib {
        0 => ("", "</w:body></w:document>"),
        _ => ("<w:p><w:r><w:t>", ""),
    };
    let xml = format!(
        r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}{open}{close}"#
    );
    package(
        &[("word/document.xml", xml)],
        bomb_mib,
        "</w:t></w:r></w:p></w:body></w:document>",
    )
}

/// An HWPX package (its `mimetype` stored first, as Hancom Office writes it) whose section holds
/// `paragraphs` and a table of all but the first, after `nesting` unclosed tables' openings, if
/// any.
fn hwpx(paragraphs: &[String], nesting: usize) -> Vec<u8> {
    let paragraph = |text: &str| format!("<hp:p><hp:run><hp:t>{text}</hp:t></hp:run></hp:p>");
    let cells: String = paragraphs
        .iter()
        .skip(1)
        .map(|p| format!("<hp:tc><hp:subList>{}</hp:subList></hp:tc>", paragraph(p)))
        .collect();
    let body: String = paragraphs.iter().map(|p| paragraph(p)).collect();
    let nested = "<hp:p><hp:run><hp:tbl><hp:tr><hp:tc><hp:subList>".repeat(nesting);
    let section = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><hs:sec xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section" xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph">{nested}{body}<hp:p><hp:run><hp:tbl><hp:tr>{cells}</hp:tr></hp:tbl></hp:run></hp:p></hs:sec>"#
    );
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(b"application/hwp+zip").unwrap();
    zip.start_file("Contents/section0.xml", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(section.as_bytes()).unwrap();
    zip.finish().unwrap().into_inner()
}

const RELATIONSHIP: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// A PPTX of one slide whose shapes hold `paragraphs` (after `nesting`, unclosed group
/// shapes' openings, if any), or whose slide inflates to `bomb_mib` MiB.
fn pptx(paragraphs: &[String], nesting: usize, bomb_mib: usize) -> Vec<u8> {
    let ns = format!(
        r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="{RELATIONSHIP}""#
    );
    let shapes: String = paragraphs
        .iter()
        .map(|p| format!("<p:sp><p:txBody><a:p><a:r><a:t>{p}</a:t></a:r></a:p></p:txBody></p:sp>"))
        .collect();
    let (open, close) = match bomb_mib {
        0 => ("", "</p:spTree></p:cSld></p:sld>"),
        _ => ("<p:sp><p:txBody><a:p><a:r><a:t>", ""),
    };
    let groups = "<p:grpSp>".repeat(nesting);
    package(
        &[
            (
                "ppt/presentation.xml",
                format!(
                    r#"<?xml version="1.0"?><p:presentation {ns}><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>"#
                ),
            ),
            (
                "ppt/_rels/presentation.xml.rels",
                format!(
                    r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId2" Type="{RELATIONSHIP}/slide" Target="slides/slide1.xml"/></Relationships>"#
                ),
            ),
            (
                "ppt/slides/slide1.xml",
                format!(r#"<?xml version="1.0"?><p:sld {ns}><p:cSld><p:spTree>{groups}{shapes}{open}{close}"#),
            ),
        ],
        bomb_mib,
        "</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>",
    )
}

/// An XLSX of one sheet whose column A holds `cells` under a header, or whose sheet
/// inflates to `bomb_mib` MiB.
fn xlsx(cells: &[String], bomb_mib: usize) -> Vec<u8> {
    let main = r#"xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main""#;
    let rows: String = std::iter::once("description")
        .chain(cells.iter().map(String::as_str))
        .enumerate()
        .map(|(i, cell)| {
            format!(
                r#"<row r="{0}"><c r="A{0}" t="inlineStr"><is><t>{cell}</t></is></c></row>"#,
                i + 1
            )
        })
        .collect();
    let (open, close) = match bomb_mib {
        0 => ("", "</sheetData></worksheet>"),
        _ => (r#"<row><c t="inlineStr"><is><t>"#, ""),
    };
    package(
        &[
            (
                "xl/workbook.xml",
                format!(
                    r#"<?xml version="1.0"?><workbook {main} xmlns:r="{RELATIONSHIP}"><sheets><sheet name="Log" sheetId="1" r:id="rId1"/></sheets></workbook>"#
                ),
            ),
            (
                "xl/_rels/workbook.xml.rels",
                format!(
                    r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{RELATIONSHIP}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
                ),
            ),
            (
                "xl/worksheets/sheet1.xml",
                format!(r#"<?xml version="1.0"?><worksheet {main}><sheetData>{rows}{open}{close}"#),
            ),
        ],
        bomb_mib,
        "</t></is></c></row></sheetData></worksheet>",
    )
}

/// An OpenDocument file of `kind` (`text`, `spreadsheet`, `presentation`) whose body holds
/// `body`, or whose content.xml inflates to `bomb_mib` MiB inside the body's `bomb_open`
/// (closed by `bomb_close`).
fn opendocument(kind: &str, body: &str, bomb_mib: usize, bomb_open: &str, bomb_close: &str) -> Vec<u8> {
    let ns = r#"xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0""#;
    let end = format!("</office:{kind}></office:body></office:document-content>");
    let (open, close) = match bomb_mib {
        0 => ("", end.clone()),
        _ => (bomb_open, String::new()),
    };
    package(
        &[
            ("mimetype", format!("application/vnd.oasis.opendocument.{kind}")),
            (
                "content.xml",
                format!(
                    r#"<?xml version="1.0"?><office:document-content {ns}><office:body><office:{kind}>{body}{open}{close}"#
                ),
            ),
        ],
        bomb_mib,
        &format!("{bomb_close}{end}"),
    )
}

/// An ODT whose body holds `paragraphs` (after `nesting` unclosed sections' openings), or
/// whose content.xml inflates to `bomb_mib` MiB.
fn odt(paragraphs: &[String], nesting: usize, bomb_mib: usize) -> Vec<u8> {
    let body: String = paragraphs.iter().map(|p| format!("<text:p>{p}</text:p>")).collect();
    let sections = "<text:section>".repeat(nesting);
    opendocument("text", &format!("{sections}{body}"), bomb_mib, "<text:p>", "</text:p>")
}

/// An ODS of one sheet whose column A holds `cells` under a header (after `nesting` unclosed
/// rows' and cells' openings), or whose content.xml inflates to `bomb_mib` MiB.
fn ods(cells: &[String], nesting: usize, bomb_mib: usize) -> Vec<u8> {
    let rows: String = std::iter::once("description")
        .chain(cells.iter().map(String::as_str))
        .map(|cell| {
            format!("<table:table-row><table:table-cell><text:p>{cell}</text:p></table:table-cell></table:table-row>")
        })
        .collect();
    let deep = "<table:table-row><table:table-cell>".repeat(nesting);
    let sheet = r#"<table:table table:name="Log">"#;
    let body = match bomb_mib {
        0 => format!("{sheet}{rows}{deep}</table:table>"),
        _ => String::new(),
    };
    let bomb_open = format!("{sheet}<table:table-row><table:table-cell><text:p>");
    let bomb_close = "</text:p></table:table-cell></table:table-row></table:table>";
    opendocument("spreadsheet", &body, bomb_mib, &bomb_open, bomb_close)
}

/// An ODS whose one row, a kilobyte wide, is repeated over every column and a million rows:
/// a few kilobytes that would make terabytes of text.
fn ods_repeat_bomb() -> Vec<u8> {
    let cell = format!(
        r#"<table:table-cell table:number-columns-repeated="16384"><text:p>{}</text:p></table:table-cell>"#,
        "tide ".repeat(200)
    );
    let body = format!(
        r#"<table:table table:name="Log"><table:table-row table:number-rows-repeated="1048576">{cell}</table:table-row></table:table>"#
    );
    opendocument("spreadsheet", &body, 0, "", "")
}

/// What Office saves for a workbook with a password: an OLE compound file whose directory
/// names the encrypted package's stream.
fn office_with_a_password() -> Vec<u8> {
    let mut bytes = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
    bytes.resize(512, 0);
    for stream in ["EncryptionInfo", "EncryptedPackage"] {
        bytes.extend(stream.encode_utf16().flat_map(u16::to_le_bytes));
        bytes.resize(bytes.len().next_multiple_of(128), 0);
    }
    bytes.resize(8192, 0xA5);
    bytes
}

/// An ODP of one slide whose frames hold `paragraphs` (after `nesting` unclosed groups'
/// openings), or whose content.xml inflates to `bomb_mib` MiB.
fn odp(paragraphs: &[String], nesting: usize, bomb_mib: usize) -> Vec<u8> {
    let frames: String = paragraphs
        .iter()
        .map(|p| format!("<draw:frame><draw:text-box><text:p>{p}</text:p></draw:text-box></draw:frame>"))
        .collect();
    let groups = "<draw:g>".repeat(nesting);
    let body = match bomb_mib {
        0 => format!("<draw:page>{groups}{frames}</draw:page>"),
        _ => String::new(),
    };
    let bomb_open = "<draw:page><draw:frame><draw:text-box><text:p>";
    let bomb_close = "</text:p></draw:text-box></draw:frame></draw:page>";
    opendocument("presentation", &body, bomb_mib, bomb_open, bomb_close)
}

/// An EPUB of one chapter holding `paragraphs` (after `nesting` unclosed `div`s), or whose
/// chapter inflates to `bomb_mib` MiB.
fn epub(paragraphs: &[String], nesting: usize, bomb_mib: usize) -> Vec<u8> {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    let (open, close) = match bomb_mib {
        0 => ("", "</body></html>"),
        _ => ("<p>", ""),
    };
    let divs = "<div>".repeat(nesting);
    package(
        &[
            ("mimetype", "application/epub+zip".to_string()),
            ("META-INF/container.xml", r#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf"/></rootfiles></container>"#.to_string()),
            ("OEBPS/book.opf", r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Log</dc:title></metadata><manifest><item id="c" href="c.xhtml"/></manifest><spine><itemref idref="c"/></spine></package>"#.to_string()),
            ("OEBPS/c.xhtml", format!(r#"<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body>{divs}{body}{open}{close}"#)),
        ],
        bomb_mib,
        "</p></body></html>",
    )
}

/// A Word 97-2003 document, an Excel 97-2003 workbook and a PowerPoint 97-2003 presentation
/// written by LibreOffice, each with a placeholder (`PLACEHOLDER_` repeated) in a paragraph or a
/// text box (in UTF-16) or a cell (8-bit).
const LEGACY_DOC: &[u8] = include_bytes!("../indexer/tests/fixtures/report.doc");
const LEGACY_XLS: &[u8] = include_bytes!("../indexer/tests/fixtures/parts.xls");
const LEGACY_PPT: &[u8] = include_bytes!("../indexer/tests/fixtures/deck.ppt");
/// An HWP 5.0 document, its sections not compressed (so its `PLACEHOLDER_` run is UTF-16 in the file).
const HWP: &[u8] = include_bytes!("../indexer/tests/fixtures/notice.hwp");
/// A message Outlook saved, with an Outlook item attached (no placeholder: its controls hold
/// its own text).
const OUTLOOK_MSG: &[u8] = include_bytes!("../indexer/tests/fixtures/outer.msg");

/// A legacy Office fixture with its placeholder's characters overwritten by `text`'s (ASCII),
/// cut or padded with spaces to the placeholder's length; `wide` where it is UTF-16.
fn legacy_office(fixture: &[u8], wide: bool, text: &str) -> Vec<u8> {
    let unit = if wide { 2 } else { 1 };
    let mark: Vec<u8> = "PLACEHOLDER_"
        .bytes()
        .flat_map(|b| [b, 0].into_iter().take(unit))
        .collect();
    let start = fixture.windows(mark.len()).position(|w| w == mark).unwrap();
    let mut end = start;
    while fixture[end..].starts_with(&mark) {
        end += mark.len();
    }
    let mut out = fixture.to_vec();
    let characters = text.bytes().chain(std::iter::repeat(b' '));
    for (slot, character) in out[start..end].chunks_mut(unit).zip(characters) {
        slot[0] = character;
    }
    out
}

/// An e-mail message of `parts` (each a part's headers and body, MIME's lines), nested
/// `depth` multiparts deep.
fn email(parts: &[Vec<u8>], depth: usize) -> Vec<u8> {
    let open: String = (0..depth)
        .map(|i| format!("Content-Type: multipart/mixed; boundary=\"b{i}\"\r\n\r\n--b{i}\r\n"))
        .collect();
    let close: String = (0..depth).rev().map(|i| format!("\r\n--b{i}--\r\n")).collect();
    let body = match parts {
        [only] => only.clone(),
        parts => {
            let mut body = b"Content-Type: multipart/mixed; boundary=\"parts\"\r\n\r\n".to_vec();
            for part in parts {
                body.extend([&b"--parts\r\n"[..], part, b"\r\n"].concat());
            }
            body.extend(b"--parts--\r\n");
            body
        }
    };
    let head = "From: Harbour Office <office@example.com>\r\nTo: pilots@example.com\r\nSubject: Log\r\nDate: Mon, 02 Nov 2026 08:15:00 +0000\r\nMIME-Version: 1.0\r\n";
    [head.as_bytes(), open.as_bytes(), &body, close.as_bytes()].concat()
}

/// A mailbox of `messages`, each after its `From ` separator line.
fn mailbox(messages: &[Vec<u8>]) -> Vec<u8> {
    let separator = b"From office@example.com Mon Nov  2 08:15:00 2026\r\n";
    messages
        .iter()
        .flat_map(|message| [&separator[..], message, b"\r\n"].concat())
        .collect()
}

/// A ZIP archive of `files` (name, bytes).
fn archive(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in files {
        zip.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// `bytes` gzipped.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `bytes` compressed with XZ.
fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = liblzma::write::XzEncoder::new(Vec::new(), 6);
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `bytes` compressed with bzip2.
fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `bytes` in LZ4 frames (blocks of 64 KB, linked), as `lz4 -B4 -BD` writes them.
fn lz4(bytes: &[u8]) -> Vec<u8> {
    let info = lz4_flex::frame::FrameInfo::new()
        .block_size(lz4_flex::frame::BlockSize::Max64KB)
        .block_mode(lz4_flex::frame::BlockMode::Linked);
    let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A solid 7z archive (LZMA2) of `files` (name, bytes).
fn seven_zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = sevenz_rust2::ArchiveWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
    let entries = files
        .iter()
        .map(|(name, _)| sevenz_rust2::ArchiveEntry::new_file(name))
        .collect();
    let readers = files
        .iter()
        .map(|(_, bytes)| sevenz_rust2::SourceReader::new(*bytes))
        .collect();
    writer.push_archive_entries(entries, readers).unwrap();
    writer.finish().unwrap().into_inner()
}

/// A POSIX tar archive of `files` (name, bytes).
fn tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = Vec::new();
    for (name, bytes) in files {
        let mut header = vec![0u8; 512];
        header[..name.len()].copy_from_slice(name.as_bytes());
        header[100..108].copy_from_slice(b"0000644\0");
        header[124..136].copy_from_slice(format!("{:011o}\0", bytes.len()).as_bytes());
        header[156] = b'0';
        header[257..263].copy_from_slice(b"ustar\0");
        header[148..156].copy_from_slice(b"        ");
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        tar.extend(header);
        tar.extend_from_slice(bytes);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.extend([0u8; 1024]);
    tar
}

/// An archive whose directory names one deflated file `copies` times more under other names,
/// all sharing its bytes (the overlapping zip bomb: a small file that inflates `copies` times over).
fn overlapping_archive(kernel: &[u8], copies: usize) -> Vec<u8> {
    let one = archive(&[("kernel.txt", kernel.to_vec())]);
    let end = one.len() - 22;
    let entry_at = u32::from_le_bytes(one[end + 16..end + 20].try_into().unwrap()) as usize;
    let entry = &one[entry_at..end];
    let mut bomb = one[..end].to_vec();
    for copy in 0..copies {
        // The same entry, renamed: its name is the entry's last bytes ("kernel.txt").
        let mut renamed = entry.to_vec();
        let name_at = 46;
        renamed[name_at..name_at + 10].copy_from_slice(format!("copy{copy:04}.t").as_bytes());
        bomb.extend_from_slice(&renamed);
    }
    let count = (copies + 1) as u16;
    let mut record = one[end..].to_vec();
    record[8..10].copy_from_slice(&count.to_le_bytes());
    record[10..12].copy_from_slice(&count.to_le_bytes());
    record[12..16].copy_from_slice(&((entry.len() * (copies + 1)) as u32).to_le_bytes());
    bomb.extend_from_slice(&record);
    bomb
}

/// A plain-text part holding `text`.
fn text_part(text: &str) -> Vec<u8> {
    format!("Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n").into_bytes()
}

/// A well-formed file of `format` holding `text`.
fn valid(format: &str, text: &str, rng: &mut Rng) -> Vec<u8> {
    let more = sentence(rng, 12);
    match format {
        "txt" => format!("{text}\n\n{more}\n").into_bytes(),
        "md" => format!("# Notes\n\n## Part\n\n{text}\n\n| a | b |\n|---|---|\n| {more} | 2 |\n").into_bytes(),
        "rst" => format!("Notes\n=====\n\n{text}\n\n.. note:: {more}\n\n=====  =====\na      b\n=====  =====\n").into_bytes(),
        "adoc" => format!("= Notes\n:part: Part\n\n== {{part}}\n\n{text}\n\n|===\n|a |b\n|{more} |2\n|===\n").into_bytes(),
        "ipynb" => serde_json::json!({"nbformat": 4, "cells": [
            {"cell_type": "markdown", "source": ["# Notes\n", "\n", text]},
            {"cell_type": "code", "source": "print(1)", "outputs": [{"output_type": "stream", "text": more}]}
        ]}).to_string().into_bytes(),
        "tex" => format!("\\documentclass{{article}}\n\\title{{Notes}}\n\\begin{{document}}\n\\section{{Part}}\n{text}\\footnote{{{more}}}\n\n\\begin{{tabular}}{{ll}}\na & b \\\\\n\\end{{tabular}}\n\\end{{document}}\n").into_bytes(),
        "wiki" => format!("== Part ==\n''{text}''<ref>{{{{cite|x}}}}</ref>\n\n{{| class=\"wikitable\"\n! a !! b\n|-\n| [[{more}]] || 2\n|}}\n[[Category:Notes]]\n").into_bytes(),
        // A MediaWiki XML dump (`.xml`, told by its first element).
        "xml" => format!("<?xml version=\"1.0\"?>\n<mediawiki><siteinfo><base>https://wiki.example/wiki/Main</base></siteinfo><page><title>Notes</title><ns>0</ns><id>1</id><revision><timestamp>2026-12-04T00:00:00Z</timestamp><text>== Part ==\n{text}\n\n* {more}</text></revision></page></mediawiki>").into_bytes(),
        // Other XML, read for its text (a JATS article, `.nxml`).
        "nxml" => format!("<?xml version=\"1.0\"?>\n<article><front><article-meta><title-group><article-title>Notes</article-title></title-group></article-meta></front><body><sec><title>Part</title><p>{text} <italic>x</italic></p><table><tr><td>{more}</td><td>2</td></tr></table></sec></body></article>").into_bytes(),
        // A PubMed article set (told by its root element): one document per article.
        "pubmed" => format!("<?xml version=\"1.0\"?>\n<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID Version=\"1\">7</PMID><Article><Journal><Title>Harbour Notes</Title></Journal><ArticleTitle>Notes on tides</ArticleTitle><Abstract><AbstractText Label=\"RESULTS\">{text}</AbstractText></Abstract><AuthorList><Author><LastName>Lovelace</LastName><ForeName>Ada</ForeName></Author></AuthorList></Article><KeywordList><Keyword>{more}</Keyword></KeywordList></MedlineCitation></PubmedArticle><PubmedArticle><MedlineCitation><Article><ArticleTitle>No PMID</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>").into_bytes(),
        // A news feed: one document per item.
        "rss" => format!("<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>Harbour News</title><item><title>Notes</title><guid>notes</guid><pubDate>Fri, 04 Dec 2026 09:00:00 +0000</pubDate><description>&lt;p&gt;{text}&lt;/p&gt;</description><category>{more}</category></item><item><guid>empty</guid></item></channel></rss>").into_bytes(),
        // A Stack Exchange dump's posts (told by their root element): one document per row;
        // the second answer's Id is the first's, so it fails alone.
        "posts" => format!("<?xml version=\"1.0\"?>\n<posts><row Id=\"1\" PostTypeId=\"1\" Title=\"Notes\" Tags=\"&lt;tides&gt;\" Body=\"&lt;h2&gt;Part&lt;/h2&gt;&lt;p&gt;{text}&lt;/p&gt;\"/><row Id=\"2\" PostTypeId=\"2\" ParentId=\"1\" Body=\"&lt;ul&gt;&lt;li&gt;{more}&lt;/li&gt;&lt;/ul&gt;\"/><row Id=\"2\" PostTypeId=\"2\" ParentId=\"1\" Body=\"copy\"/></posts>").into_bytes(),
        // A manual page (`.1`, told by its `.TH` request).
        "1" => format!(".TH NOTES 1\n.SH NAME\nnotes \\- {text}\n.SH DESCRIPTION\n.TP\n\\fB\\-v\\fR\n{more}\n.TS\ntab(:);\nl l.\na:b\n.TE\n").into_bytes(),
        // A BibTeX bibliography: one document per entry.
        "bib" => format!("@string{{j = \"Harbour Notes\"}}\n@article{{notes, author = {{Lovelace, Ada and others}}, title = {{Notes on {{T}}ides}}, journal = j # \" 3\", year = 2026, abstract = {{{text}}}, keywords = {{{more}}}}}\n@misc{{empty}}\n").into_bytes(),
        // A RIS bibliography: one document per record.
        // MEDLINE records (PubMed's text format): one document per record; the second
        // record's PMID is the first's, so it fails alone.
        "nbib" => format!("PMID- 7\nTI  - Notes on tides\nFAU - Lovelace, Ada\nDP  - 2026 Dec\nAB  - {text}\n      {more}\nMH  - *Tides/analysis\n\nPMID- 7\nTI  - Again\n").into_bytes(),
        "ris" => format!("TY  - JOUR\nID  - notes\nAU  - Lovelace, Ada\nTI  - Notes on tides\nAB  - {text}\nKW  - {more}\nER  - \n\nTY  - GEN\nER  - \n").into_bytes(),
        // Subtitles: a meeting's WebVTT transcript, a film's SubRip file.
        "vtt" => format!("WEBVTT\n\nNOTE {more}\n\n1\n00:00:01.000 --> 00:00:04.000 align:start\n<v Ada Lovelace>{text}</v>\n\n00:00:05.000 --> 00:00:09.000\n<c.yellow>{more}</c>\n").into_bytes(),
        "srt" => format!("1\n00:00:01,000 --> 00:00:04,000\n<i>{text}</i>\n\n2\n00:00:06,000 --> 00:00:09,000\n{{\\an8}}{more}\n\n").into_bytes(),
        "ass" => format!("[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:01.00,0:00:04.00,Default,Ada,0,0,0,,{{\\i1}}{text}\nComment: 0,0:00:02.00,0:00:03.00,Default,,0,0,0,,left out\nDialogue: 0,0:00:06.00,0:00:09.00,Default,,0,0,0,,{more}\\N{{\\k20}}two\n").into_bytes(),
        // Lyrics: ID tags, a line sung twice, word times.
        "smi" => format!("<SAMI><HEAD><TITLE>Notes</TITLE><STYLE TYPE=\"text/css\"><!-- .KRCC {{Name:Korean; lang:ko-KR;}} --></STYLE></HEAD><BODY>\r\n<SYNC Start=1000><P Class=KRCC>{text}<br>two\r\n<SYNC Start=4000><P Class=KRCC>&nbsp;\r\n<SYNC Start=\"9000\"><P Class=ENCC><font color=\"yellow\">{more}</font>\r\n</BODY></SAMI>\r\n").into_bytes(),
        // MicroDVD (told by its first line whatever the name), a line with broken frames.
        "sub" => format!("{{1}}{{1}}25\n{{25}}{{100}}{{y:i}}{text}|two\n{{}}{{120}}{{130}} broken\n{{250}}{{300}}/{more}\n").into_bytes(),
        // Whisper's JSON (told by its shape), with WhisperX's speakers.
        "whisper" => serde_json::json!({"text": format!(" {text} {more}"), "language": "en", "segments": [
            {"id": 0, "start": 1.0, "end": 4.5, "text": format!(" {text}"), "speaker": "SPEAKER_00", "tokens": [1, 2]},
            {"id": 1, "start": 9.0, "end": 12.0, "text": format!(" {more}"), "speaker": "SPEAKER_01"}
        ]}).to_string().into_bytes(),
        "lrc" => format!("[ti:Harbour]\n[ar:The Pilots]\n[offset:-200]\n[00:01.00]{text}\n[00:05.00][01:00.00]<00:05.20>{more}\n").into_bytes(),
        // Timed Text captions (DFXP in ticks).
        "fb2" => format!("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<FictionBook xmlns=\"http://www.gribuser.ru/xml/fictionbook/2.0\"><description><title-info><author><first-name>Ada</first-name><last-name>Lovelace</last-name></author><book-title>Harbour Notes</book-title><lang>en</lang><sequence name=\"Tides\" number=\"1\"/></title-info><document-info><program-used>left out</program-used></document-info></description><body><title><p>Harbour Notes</p></title><section><title><p>Part</p></title><p>{text}</p><poem><stanza><v>{more}</v><v>two</v></stanza></poem><table><tr><td>a</td><td>b</td></tr></table></section></body><body name=\"notes\"><section id=\"n1\"><p>note</p></section></body><binary id=\"c.jpg\" content-type=\"image/jpeg\">{}</binary></FictionBook>", "/9j/4AAQSkZJRgABAQEASABIAAD".repeat(20)).into_bytes(),
        "enex" => format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE en-export SYSTEM \"http://xml.evernote.com/pub/evernote-export3.dtd\">\n<en-export application=\"Evernote\"><note><title>Harbour Notes</title><created>20260101T120000Z</created><tag>tides</tag><content><![CDATA[<en-note><div>{text}</div><en-crypt>U2FsdGVk</en-crypt><en-media hash=\"a1\" type=\"image/png\"/></en-note>]]></content><resource><data encoding=\"base64\">{}</data><mime>text/plain</mime><resource-attributes><file-name>more.txt</file-name></resource-attributes></resource><resource><data encoding=\"base64\">iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk</data><mime>image/png</mime><recognition><![CDATA[<recoIndex><item x=\"1\" y=\"1\"><t w=\"80\">Harbour</t><t w=\"20\">Harb0ur</t></item></recoIndex>]]></recognition></resource></note><note><title>Second</title><content><![CDATA[<en-note>two</en-note>]]></content></note></en-export>", {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(more.as_bytes())
        }).into_bytes(),
        "ttml" => format!("<?xml version=\"1.0\"?>\n<tt xmlns=\"http://www.w3.org/ns/ttml\" xmlns:ttp=\"http://www.w3.org/ns/ttml#parameter\" ttp:tickRate=\"10000000\"><head><metadata><title>left out</title></metadata></head><body><div><p begin=\"10000000t\" end=\"40000000t\">{text}</p><p begin=\"00:01:00.000\" dur=\"2s\"><span>{more}</span><br/>two</p></div></body></tt>").into_bytes(),
        "org" => format!("#+TITLE: Notes\n\n* Part\n{text}\n\n| a | b |\n|---+---|\n| {more} | 2 |\n").into_bytes(),
        "html" => format!("<!doctype html><html><head><title>Log</title></head><body><h1>Log</h1><p>{text}</p><table><tr><td>{more}</td></tr></table></body></html>").into_bytes(),
        "json" => serde_json::json!({"title": "entry", "text": text, "notes": [more]}).to_string().into_bytes(),
        "jsonl" => format!("{}\n{}\n", serde_json::json!({"_id": "a", "text": text}), serde_json::json!({"_id": "b", "text": more})).into_bytes(),
        "csv" => format!("name,description\nfirst,{text}\nsecond,{more}\n").into_bytes(),
        "tsv" => format!("name\tdescription\nfirst\t{text}\nsecond\t{more}\n").into_bytes(),
        "pdf" => pdf(text, b""),
        "docx" => docx(&[text.to_string(), more], 0),
        "hwpx" => hwpx(&[text.to_string(), more], 0),
        "pptx" => pptx(&[text.to_string(), more], 0, 0),
        "xlsx" => xlsx(&[text.to_string(), more], 0),
        "odt" => odt(&[text.to_string(), more], 0, 0),
        "ods" => ods(&[text.to_string(), more], 0, 0),
        "odp" => odp(&[text.to_string(), more], 0, 0),
        "epub" => epub(&[text.to_string(), more], 0, 0),
        "doc" => legacy_office(LEGACY_DOC, true, text),
        "hwp" => legacy_office(HWP, true, text),
        "xls" => legacy_office(LEGACY_XLS, false, text),
        "ppt" => legacy_office(LEGACY_PPT, true, text),
        "eml" => email(&[text_part(text), text_part(&more)], 0),
        "mbox" => mailbox(&[email(&[text_part(text)], 0), email(&[text_part(&more)], 0)]),
        "msg" => OUTLOOK_MSG.to_vec(),
        "zip" => archive(&[("notes/log.txt", text.as_bytes().to_vec()), ("notes/more.docx", docx(&[more], 0))]),
        "tgz" => gzip(&tar(&[("notes/log.txt", text.as_bytes()), ("notes/more.docx", &docx(&[more], 0))])),
        "gz" => gzip(format!("{text}\n\n{more}\n").as_bytes()),
        "txz" => xz(&tar(&[("notes/log.txt", text.as_bytes()), ("notes/more.odt", &odt(&[more], 0, 0))])),
        "bz2" => bzip2(format!("{text}\n\n{more}\n").as_bytes()),
        "lz4" => lz4(format!("{text}\n\n{more}\n").as_bytes()),
        "7z" => seven_zip(&[("notes/log.txt", text.as_bytes()), ("notes/more.docx", &docx(&[more], 0))]),
        "rtf" => format!("{{\\rtf1\\ansi\\ansicpg1252{{\\fonttbl{{\\f0 Arial;}}}}{{\\info{{\\title Log}}}}\\pard {text}\\par {more}\\par}}").into_bytes(),
        other => unreachable!("{other}"),
    }
}

/// Nesting `depth` deep in the format's own structure.
fn deep(format: &str, depth: usize) -> Vec<u8> {
    match format {
        "html" => format!(
            "<html><body>{}deep</body></html>",
            ["<div>", "<b>", "<ul><li>", "<table><tr><td>"][depth % 4].repeat(depth)
        )
        .into_bytes(),
        "json" | "jsonl" => format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes(),
        // A Markdown cell's HTML block nested deep (read by html5ever, in a worker).
        "ipynb" => serde_json::json!({"cells": [{"cell_type": "markdown", "source": format!("<div>\n{}deep", "<div>".repeat(depth))}]}).to_string().into_bytes(),
        // Quotes in quotes, or an HTML block's elements (read by html5ever, in a worker).
        "md" if depth.is_multiple_of(2) => format!("{}deep quote\n", "> ".repeat(depth)).into_bytes(),
        "md" => format!("# Deep\n\n<div>\n{}deep\n", "<div>".repeat(depth)).into_bytes(),
        // Directives in directives, delimited blocks in blocks, quotes in quotes.
        "rst" => (0..depth)
            .map(|d| format!("{}.. note::\n", " ".repeat(d)))
            .chain([format!("{}deep\n", " ".repeat(depth))])
            .collect::<String>()
            .into_bytes(),
        "adoc" => format!(
            "{}deep\n",
            ["====\n", "****\n", "____\n"]
                .iter()
                .cycle()
                .take(depth)
                .copied()
                .collect::<String>()
        )
        .into_bytes(),
        // Links in links, templates, tags and tables in tables.
        "wiki" => {
            let (open, close) = [("[[", "]]"), ("{{", "}}"), ("<div>", "</div>"), ("{|\n|", "\n|}")][depth % 4];
            format!("{}deep{}", open.repeat(depth), close.repeat(depth)).into_bytes()
        }
        // Definitions, tables and conditionals left open, escapes in escapes.
        "1" => format!(".TH DEEP 1\n.SH A\n{}deep\n", [".de x\n", ".TS\n", ".if n \\{\\\n", "\\f(\\[\\s("][depth % 4].repeat(depth)).into_bytes(),
        "xml" => format!("<mediawiki>{}deep{}</mediawiki>", "<page>".repeat(depth), "</page>".repeat(depth)).into_bytes(),
        // Items in items, markup in a description, comments and scripts left open.
        "rss" => format!("<rss><channel><item><title>t</title><description>{}deep</description>{}</channel></rss>", ["&lt;b&gt;", "&lt;!--", "&lt;script&gt;", "&lt;a"][depth % 4].repeat(depth), "<item>".repeat(depth)).into_bytes(),
        // Sections in sections, elements left open, cells in cells.
        "nxml" => format!("<?xml version=\"1.0\"?><a>{}deep", ["<sec><title>t</title>", "<p>x <b>", "<tr><td>"][depth % 3].repeat(depth)).into_bytes(),
        // A body nested deep, rows in rows.
        "posts" => format!("<?xml version=\"1.0\"?><posts><row Id=\"1\" PostTypeId=\"1\" Title=\"t\" Body=\"{}deep\"/>{}</posts>", ["&lt;div&gt;", "&lt;b&gt;&lt;p&gt;", "&lt;table&gt;&lt;tr&gt;&lt;td&gt;"][depth % 3].repeat(depth), "<row Id=\"2\">".repeat(depth)).into_bytes(),
        "pubmed" => format!("<?xml version=\"1.0\"?><PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>{}deep</ArticleTitle></Article></MedlineCitation></PubmedArticle>{}</PubmedArticleSet>", "<i>".repeat(depth), "<PubmedArticle>".repeat(depth)).into_bytes(),
        // Braces and quotes left open, values of many parts.
        "bib" => format!("@misc{{a, title = {}deep\n", ["{", "\"{", "x # "][depth % 3].repeat(depth)).into_bytes(),
        // Many names, lines that continue a value, records that never end.
        // Values continued without end, records of one tag, tags alone.
        "nbib" => format!("PMID- 1\nTI  - t\n{}deep\n", ["      more\n", "PMID- 2\n", "AB  -\n"][depth % 3].repeat(depth)).into_bytes(),
        "ris" => format!("TY  - JOUR\n{}deep\n", ["AU  - a\n", "  more\n", "TY  - JOUR\n"][depth % 3].repeat(depth)).into_bytes(),
        // Voices, ruby text and tags left open, karaoke timestamps; cues without end.
        "vtt" => format!("WEBVTT\n\n00:01.000 --> 00:02.000\n{}deep\n", ["<v a>", "<ruby><rt>", "<c.x><i>", "<00:00:01.000>"][depth % 4].repeat(depth)).into_bytes(),
        "srt" => format!("{}deep\n", ["1\n00:00:01,000 --> 00:00:02,000\n", "<i>{\\an8}", "line\n"][depth % 3].repeat(depth)).into_bytes(),
        // Override blocks left open in one dialogue, dialogues without times, formats without end.
        "ass" => format!("[Events]\nFormat: Start, End, Text\n{}deep\n", ["Dialogue: 0:00:01.00,0:00:02.00,{\\i1", "Dialogue: ,,,,\n", "Format: Text,\n"][depth % 3].repeat(depth)).into_bytes(),
        // Tags never closed, times without end, word times in word times.
        // SYNCs without their end, line breaks, comments never closed.
        "smi" => format!("<SAMI><BODY>{}deep", ["<SYNC Start=1>", "<br>", "<!--"][depth % 3].repeat(depth)).into_bytes(),
        "sub" => format!("{}deep\n", ["{", "{1}{2}|", "{y:i}"][depth % 3].repeat(depth)).into_bytes(),
        "whisper" => format!("{{\"segments\": [{}{{\"start\": 1, \"end\": 2, \"text\": \"deep\"}}]}}", "{\"start\": 1e308, \"end\": -1, \"text\": \"deep\"},".repeat(depth)).into_bytes(),
        "lrc" => format!("{}deep\n", ["[", "[00:01.00]", "<00:01.00<"][depth % 3].repeat(depth)).into_bytes(),
        // Spans in spans, timed divs in divs, heads never closed.
        "fb2" => format!("<FictionBook><body>{}deep", ["<section><title><p>t</p></title>", "<p><emphasis>", "<poem><stanza><v>", "<title>", "<table><tr><td>"][depth % 5].repeat(depth)).into_bytes(),
        "enex" => format!("<en-export><note><title>t</title><content><![CDATA[{}deep]]></content>{}</note></en-export>", ["<div>", "<en-crypt>", "<b><ul><li>"][depth % 3].repeat(depth), ["<resource><data>", "<note>", "<task><title>", "<resource><mime>image/png</mime><recognition><![CDATA[<recoIndex><item><t>", "<resource><recognition>"][depth % 5].repeat(depth)).into_bytes(),
        "ttml" => format!("<tt><body>{}<p begin=\"1s\">deep</p>", ["<span>", "<div begin=\"99999h\">", "<head>"][depth % 3].repeat(depth)).into_bytes(),
        "org" => format!("{}{} deep\n", "#+begin_quote\n".repeat(depth), "*".repeat(depth)).into_bytes(),
        // Groups in groups, notes in notes.
        "tex" => format!("{}deep{}", ["{", "\\footnote{", "\\section{"][depth % 3].repeat(depth), "}".repeat(depth)).into_bytes(),
        "pdf" => pdf(
            "deep",
            &[
                b"/Deep ".to_vec(),
                b"[".repeat(depth),
                b"]".repeat(depth),
                b" ".to_vec(),
            ]
            .concat(),
        ),
        "docx" => docx(&[format!("{}deep{}", "<w:r>".repeat(depth), "</w:r>".repeat(depth))], 0),
        // Tables in tables' cells, never closed.
        "hwpx" => hwpx(&["deep".to_string()], depth),
        "pptx" => pptx(&["deep".to_string()], depth, 0),
        "odt" => odt(&["deep".to_string()], depth, 0),
        "ods" => ods(&["deep".to_string()], depth, 0),
        "odp" => odp(&["deep".to_string()], depth, 0),
        "epub" => epub(&["deep".to_string()], depth, 0),
        "rtf" => format!("{{\\rtf1 {}deep{}}}", "{\\b ".repeat(depth), "}".repeat(depth)).into_bytes(),
        "xlsx" => xlsx(&[format!("{}deep{}", "<is>".repeat(depth), "</is>".repeat(depth))], 0),
        "eml" => email(&[text_part("deep")], depth),
        "mbox" => mailbox(&[email(&[text_part("deep")], depth)]),
        _ => format!("{}deep{}", "(".repeat(depth), ")".repeat(depth)).into_bytes(),
    }
}

/// One hostile file of `format`: a valid one damaged by one of the generator's mutations.
fn hostile(format: &str, rng: &mut Rng) -> Vec<u8> {
    let text = sentence(rng, 20);
    let mut bytes = valid(format, &text, rng);
    match rng.below(12) {
        // Cut anywhere.
        0 => bytes.truncate(rng.below(bytes.len())),
        // Bytes flipped.
        1 => {
            for _ in 0..1 + rng.below(20) {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
            }
        }
        // Random bytes inserted.
        2 => {
            let at = rng.below(bytes.len());
            let junk: Vec<u8> = (0..1 + rng.below(64)).map(|_| rng.next_u64() as u8).collect();
            bytes.splice(at..at, junk);
        }
        // Nothing but random bytes.
        3 => bytes = (0..1 + rng.below(4096)).map(|_| rng.next_u64() as u8).collect(),
        // A slice repeated until the file is large.
        4 => {
            let start = rng.below(bytes.len());
            let slice = bytes[start..(start + 1 + rng.below(64)).min(bytes.len())].to_vec();
            let times = (32 << 10) / slice.len().max(1);
            let at = rng.below(bytes.len());
            bytes.splice(at..at, slice.repeat(times));
        }
        // Nested deep.
        5 => bytes = deep(format, 1_000 + rng.below(5_000)),
        // Another format's bytes under this name.
        6 => bytes = valid(FORMATS[rng.below(FORMATS.len())], &text, rng),
        // NUL and invalid UTF-8 bytes.
        7 => {
            let at = rng.below(bytes.len());
            bytes.splice(at..at, [0u8, 0xC3, 0x28, 0xFF, 0xFE]);
        }
        // UTF-16 without a byte order mark.
        8 => {
            bytes = String::from_utf8_lossy(&bytes)
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect()
        }
        // Empty, or blank.
        9 => {
            bytes = if rng.below(2) == 0 {
                Vec::new()
            } else {
                b" \n\t \n".to_vec()
            }
        }
        // One endless line.
        10 => bytes = format!("{}\n", text.repeat(500)).into_bytes(),
        // A CSV header or JSON key 100 KB long; for binary formats, their bytes doubled.
        _ => match format {
            "csv" | "tsv" | "txt" | "md" | "rst" | "adoc" | "org" => {
                bytes = format!("{}\nvalue\n", "column,".repeat(15_000)).into_bytes()
            }
            "json" | "jsonl" | "ipynb" => bytes = format!("{{\"{}\": 1}}\n", "k".repeat(100_000)).into_bytes(),
            _ => bytes = bytes.repeat(2),
        },
    }
    bytes
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// The report of `quarry bench-pipeline` over `source`, its parse workers held to
/// `memory_mib`; the run must end on its own (no abort). Freed memory goes back to the OS at
/// once (`MIMALLOC_PURGE_DELAY=0`; a run keeps it by default), so the run's peak is what it
/// held at once: 570-600 MiB for the 2,000 files here, where the memory it kept for reuse made
/// it 810-970 MiB from run to run (2026-12-06, 2-core Intel Xeon).
fn bench_pipeline(source: &Path, out: &Path, memory_mib: u64) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args([
            "bench-pipeline",
            source.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--json", "--progress", "quiet", "--parse-timeout-secs", "60"])
        .args(["--parse-memory-mb", &memory_mib.to_string()])
        .env("MIMALLOC_PURGE_DELAY", "0")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "status {:?}\n{}",
        output.status,
        &stderr[stderr.len().saturating_sub(4000)..]
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The reasons a hostile file may fail with: each says what was wrong (none is a bare
/// "error", an empty string or a panic's words); seed 004's classified messages say it in
/// their `detail`.
fn is_specific(reason: &str, detail: Option<&str>) -> bool {
    let classified = [
        "File appears corrupted. Please verify the file and try again.",
        "Document too large: exceeds maximum token limit (",
    ];
    if classified.iter().any(|c| reason.starts_with(c)) {
        return detail.is_some_and(|d| !d.trim().is_empty() && d.len() < 1000);
    }
    let known = [
        "file is empty",
        "binary file:",
        "unsupported file type",
        "PDF is password-protected",
        "PDF contains only scanned images",
        "is encrypted (saved with a password, or under DRM)",
        "no text content found",
        "once inflated",
        "nested too deeply",
        "parsing needs more than",
        "parsing took longer than",
        "the parser stopped on this file (",
        "invalid JSON at column",
        "expected a JSON object",
        "duplicate document:",
        "no message headers found",
        "read by its files' local headers instead",
    ];
    !reason.trim().is_empty() && reason.len() < 1000 && known.iter().any(|k| reason.contains(k))
}

/// Whether a failed item of a file (an archive's member, a mailbox's message, an attachment,
/// a JSONL line) names itself, then says what was wrong, briefly.
fn names_its_item(uri: &str, reason: &str) -> bool {
    let Some((_, item)) = uri.rsplit_once('#') else {
        return false;
    };
    // An item inside an item (`note=.../attachment=more.txt`) is named by the innermost.
    let item = match item.rsplit_once('/') {
        Some((_, innermost)) if innermost.contains('=') => innermost,
        _ => item,
    };
    let named = match item.split_once('=') {
        Some(("member", path)) => path.to_string(),
        Some((kind, name)) => format!("{kind} {name}"),
        None => format!("line {}", item.trim_start_matches('L')),
    };
    let said = reason.strip_prefix(&named).and_then(|rest| rest.strip_prefix(": "));
    said.is_some_and(|rest| !rest.trim().is_empty()) && reason.len() < 1000
}

#[test]
fn two_thousand_hostile_files_fail_alone_and_the_controls_are_indexed() {
    let dir = tempfile::tempdir().unwrap();
    // QUARRY_KEEP_HOSTILE_FILES=1 keeps the files (and the snapshot) to look at.
    let dir_path = match std::env::var_os("QUARRY_KEEP_HOSTILE_FILES") {
        Some(_) => dir.keep(),
        None => dir.path().to_path_buf(),
    };
    eprintln!("hostile files in {}", dir_path.display());
    let dir = dir_path;
    let source = dir.join("source");
    std::fs::create_dir(&source).unwrap();
    let mut rng = Rng::new(0x5EED_2026_1126);
    let mut controls = Vec::new();
    for format in FORMATS {
        for i in 0..CONTROLS_PER_FORMAT {
            let marker = format!("controlmark{format}{i}");
            let name = format!("control-{format}-{i}.{format}");
            write(
                &source,
                &name,
                &valid(format, &format!("{marker} {}", sentence(&mut rng, 10)), &mut rng),
            );
            controls.push(name);
        }
    }
    // The findings the suite was built from, by name, beside the generated ones.
    write(&source, "named-deep-array.pdf", &deep("pdf", 1_000));
    write(&source, "named-deep-array-100k.pdf", &deep("pdf", 100_000));
    write(
        &source,
        "named-unclosed-divs.html",
        format!("<html><body>{}deep</body></html>", "<div>".repeat(10_000)).as_bytes(),
    );
    write(
        &source,
        "named-many-b.html",
        format!("<html><body>{}bold</body></html>", "<b>".repeat(100_000)).as_bytes(),
    );
    write(&source, "named-flate-bomb.pdf", &flate_bomb_pdf(200));
    write(&source, "named-zip-bomb.docx", &docx(&[], 1024));
    write(&source, "named-zip-bomb.pptx", &pptx(&[], 0, 300));
    write(&source, "named-zip-bomb.xlsx", &xlsx(&[], 300));
    write(&source, "named-zip-bomb.odt", &odt(&[], 0, 300));
    write(&source, "named-zip-bomb.ods", &ods(&[], 0, 300));
    write(&source, "named-zip-bomb.odp", &odp(&[], 0, 300));
    write(&source, "named-repeat-bomb.ods", &ods_repeat_bomb());
    write(&source, "named-with-a-password.xlsx", &office_with_a_password());
    // Word's FIB saying the document is encrypted; a workbook whose sector table sends every
    // chain back to sector 0.
    let mut locked_doc = LEGACY_DOC.to_vec();
    let fib = locked_doc.windows(2).position(|w| w == [0xEC, 0xA5]).unwrap();
    locked_doc[fib + 11] |= 0x01;
    write(&source, "named-with-a-password.doc", &locked_doc);
    let mut looping = LEGACY_XLS.to_vec();
    let first_fat = u32::from_le_bytes(looping[76..80].try_into().unwrap()) as usize;
    looping[(first_fat + 1) * 512..(first_fat + 2) * 512].fill(0);
    write(&source, "named-looping-sectors.xls", &looping);
    // A message whose attachment is a 300 MiB zip bomb (sent as binary, as MIME allows): the
    // message is indexed, its attachment fails alone.
    let mut bomb = b"Content-Type: application/octet-stream; name=\"bomb.docx\"\r\nContent-Disposition: attachment; filename=\"bomb.docx\"\r\nContent-Transfer-Encoding: binary\r\n\r\n".to_vec();
    bomb.extend(docx(&[], 300));
    write(
        &source,
        "named-attached-zip-bomb.eml",
        &email(&[text_part("The harbour log is attached."), bomb], 0),
    );
    write(&source, "named-zip-bomb.epub", &epub(&[], 0, 300));
    // An archive holding a zip bomb: the archive's other file is indexed, the bomb fails alone.
    write(
        &source,
        "named-archived-zip-bomb.zip",
        &archive(&[
            ("readme.txt", b"The harbour log is attached.".to_vec()),
            ("bomb.docx", docx(&[], 300)),
        ]),
    );
    // An archive of 300 more names for one file's deflated bytes (a bomb, scaled down): the
    // copies fail alone as overlapping, the file itself is read.
    let kernel = "The harbour log is kept daily. ".repeat(1024);
    write(
        &source,
        "named-overlapping-zip-bomb.zip",
        &overlapping_archive(kernel.as_bytes(), 300),
    );
    // A full stop then a long run of closing brackets or spaces: cutting the text into the
    // sentences of its layers took time quadratic in the run (hours at these sizes).
    write(
        &source,
        "named-brackets-after-a-stop.txt",
        format!("It ends here.{} and goes on. The end.", ")".repeat(300_000)).as_bytes(),
    );
    write(
        &source,
        "named-spaces-after-a-stop.md",
        format!("It ends here.{}and goes on. The end.", "\u{3000}".repeat(300_000)).as_bytes(),
    );
    // A gzipped MediaWiki dump (read as a stream) with a comment of 900 MiB between its two
    // pages: the XML reader held it whole (a peak past 1 GiB); cut at 1 MiB, it costs nothing.
    write(&source, "named-comment-bomb.xml.gz", &dump_with_a_comment_of(900));
    for i in 0..HOSTILE_FILES {
        let format = FORMATS[i % FORMATS.len()];
        let bytes = hostile(format, &mut rng);
        write(&source, &format!("hostile-{i:04}.{format}"), &bytes);
    }

    let out = dir.join("out");
    let started = std::time::Instant::now();
    let report = bench_pipeline(&source, &out, PARSE_MEMORY_MIB);
    eprintln!(
        "{} files in {:.1} s: {} documents indexed, {} failed; peak {:.0} MiB",
        std::fs::read_dir(&source).unwrap().count(),
        started.elapsed().as_secs_f64(),
        report["documents_indexed"],
        report["documents_failed"],
        report["peak_rss_mib"]
    );

    let failures = report["failures"].as_array().unwrap();
    let reason_of = |name: &str| {
        failures
            .iter()
            .find(|f| f["uri"].as_str().unwrap().ends_with(&format!("/{name}")))
            .map(|f| f["reason"].as_str().unwrap().to_string())
    };
    // Every failure says what was wrong, briefly.
    for failure in failures {
        let (reason, detail) = (failure["reason"].as_str().unwrap(), failure["detail"].as_str());
        assert!(
            is_specific(reason, detail) || names_its_item(failure["uri"].as_str().unwrap(), reason),
            "{}: unspecific reason {reason:?} ({detail:?})",
            failure["uri"]
        );
    }
    // Every control was indexed...
    for name in &controls {
        assert_eq!(reason_of(name), None, "{name} failed");
    }
    // ...and is found.
    let search = Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args([
            "search",
            out.to_str().unwrap(),
            "controlmarktxt0 controlmarkpdf5 controlmarkdocx3 controlmarkhtml2 controlmarkpptx1 controlmarkxlsx4 controlmarkodt2 controlmarkods3 controlmarkodp0 controlmarkepub5 controlmarkdoc1 controlmarkxls2 controlmarkppt3 controlmarkeml4 controlmarkmbox5 controlmarkzip0 controlmarktxz1 controlmarkbz23 controlmark7z2 controlmarkwiki1 controlmarkxml4 controlmark12 controlmarkbib3 controlmarkris5 controlmarknxml2 controlmarkpubmed1 controlmarkrss0 controlmarkposts4 controlmarknbib1 controlmarkvtt3 controlmarksrt0 controlmarkhwpx4 controlmarkass1 controlmarkhwp5 controlmarkttml2 controlmarklrc3",
            "--mode",
            "keyword",
            "--top-k",
            "40",
            "--json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(search.status.success(), "{}", String::from_utf8_lossy(&search.stderr));
    let found = String::from_utf8_lossy(&search.stdout);
    for name in [
        "control-txt-0.txt",
        "control-pdf-5.pdf",
        "control-docx-3.docx",
        "control-html-2.html",
        "control-pptx-1.pptx",
        "control-xlsx-4.xlsx",
        "control-odt-2.odt",
        "control-ods-3.ods",
        "control-odp-0.odp",
        "control-epub-5.epub",
        "control-doc-1.doc",
        "control-xls-2.xls",
        "control-ppt-3.ppt",
        "control-eml-4.eml",
        "control-mbox-5.mbox#message=1",
        "control-zip-0.zip#member=notes/log.txt",
        "control-txz-1.txz#member=notes/log.txt",
        "control-bz2-3.bz2",
        "control-7z-2.7z#member=notes/log.txt",
        "control-wiki-1.wiki",
        "control-xml-4.xml#page=1",
        "control-1-2.1",
        "control-bib-3.bib#entry=notes",
        "control-ris-5.ris#entry=notes",
        "control-nxml-2.nxml",
        "control-pubmed-1.pubmed#pmid=7",
        "control-rss-0.rss#item=notes",
        "control-posts-4.posts#post=1",
        "control-nbib-1.nbib#pmid=7",
        "control-vtt-3.vtt",
        "control-srt-0.srt",
        "control-hwpx-4.hwpx",
        "control-ass-1.ass",
        "control-hwp-5.hwp",
        "control-ttml-2.ttml",
        "control-lrc-3.lrc",
    ] {
        assert!(found.contains(name), "{name} not found: {found}");
    }
    // The named findings fail with their own reasons.
    let named = |name: &str, says: &str| {
        let reason = reason_of(name).unwrap_or_else(|| panic!("{name} did not fail"));
        assert!(reason.contains(says), "{name}: {reason}");
    };
    named("named-deep-array.pdf", "nested too deeply");
    named("named-deep-array-100k.pdf", "nested too deeply");
    named("named-flate-bomb.pdf", "PDF streams: more than 64 MiB once inflated");
    named("named-zip-bomb.docx", "once inflated");
    named(
        "named-zip-bomb.pptx",
        "PPTX part ppt/slides/slide1.xml: more than 128 MiB once inflated",
    );
    named(
        "named-zip-bomb.xlsx",
        "XLSX part xl/worksheets/sheet1.xml: more than 128 MiB once inflated",
    );
    named(
        "named-zip-bomb.odt",
        "ODT part content.xml: more than 128 MiB once inflated",
    );
    named(
        "named-zip-bomb.ods",
        "ODS part content.xml: more than 128 MiB once inflated",
    );
    named(
        "named-zip-bomb.odp",
        "ODP part content.xml: more than 128 MiB once inflated",
    );
    named(
        "named-repeat-bomb.ods",
        "ODS part content.xml's repeated rows and cells: more than 128 MiB once inflated",
    );
    named(
        "named-zip-bomb.epub",
        "EPUB part OEBPS/c.xhtml: more than 128 MiB once inflated",
    );
    named(
        "named-with-a-password.xlsx",
        "XLSX is encrypted (saved with a password, or under DRM). Please upload an unlocked version.",
    );
    named("named-with-a-password.doc", "DOC is encrypted");
    assert_eq!(reason_of("named-attached-zip-bomb.eml"), None);
    assert_eq!(reason_of("named-archived-zip-bomb.zip#member=readme.txt"), None);
    let member = reason_of("named-archived-zip-bomb.zip#member=bomb.docx").unwrap_or_default();
    assert!(
        member.starts_with("bomb.docx: ") && member.contains("once inflated"),
        "the archived bomb: {member:?}"
    );
    let attachment = reason_of("named-attached-zip-bomb.eml#attachment=bomb.docx").unwrap_or_default();
    assert!(
        attachment.starts_with("attachment bomb.docx: ") && attachment.contains("once inflated"),
        "the attachment: {attachment:?}"
    );
    let looping = failures
        .iter()
        .find(|f| f["uri"].as_str().unwrap().ends_with("/named-looping-sectors.xls"))
        .expect("named-looping-sectors.xls did not fail");
    let detail = looping["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("sector chain loops"),
        "named-looping-sectors.xls: {looping}"
    );
    assert_eq!(reason_of("named-overlapping-zip-bomb.zip#member=kernel.txt"), None);
    let copy = reason_of("named-overlapping-zip-bomb.zip#member=copy0299.t").unwrap_or_default();
    assert_eq!(copy, "copy0299.t: its data overlaps another file's (a zip bomb)");
    assert!(
        !failures
            .iter()
            .any(|f| f["uri"].as_str().unwrap().contains("named-comment-bomb")),
        "the comment bomb: {failures:?}"
    );
    // Deep pages are read (the walk keeps its own stack).
    assert_eq!(reason_of("named-unclosed-divs.html"), None);
    assert_eq!(reason_of("named-many-b.html"), None);
    // So are texts whose sentences once took hours to find.
    assert_eq!(reason_of("named-brackets-after-a-stop.txt"), None);
    assert_eq!(reason_of("named-spaces-after-a-stop.md"), None);
    // Memory stayed bounded: the run's own peak, and each worker by its limit (which the
    // report would name in a "parsing needs more than" failure; the bombs above stop sooner).
    let peak = report["peak_rss_mib"].as_f64().unwrap();
    assert!(peak < 1024.0, "the run peaked at {peak} MiB");
}

/// Compression bombs one after another through the same few workers, each held to 240 MiB:
/// each fails as the bomb it is. A part is read into room for its stated size at once; read
/// into a vector grown by doubling, one 128 MiB part took over 300 MiB while its old and new
/// buffers were both held, and bombs in a row in one worker sometimes failed as "parsing
/// needs more than 512 MiB" instead of naming the bomb (the 2,000-file test's rare failure).
#[test]
fn compression_bombs_in_a_row_each_fail_as_a_bomb_under_a_240_mib_limit() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    std::fs::create_dir(&source).unwrap();
    write(
        &source,
        "control.txt",
        b"The control file of a run of compression bombs.",
    );
    let (xlsx_bomb, odt_bomb) = (xlsx(&[], 300), odt(&[], 0, 300));
    for i in 0..4 {
        write(&source, &format!("bomb-{i}.xlsx"), &xlsx_bomb);
        write(&source, &format!("bomb-{i}.odt"), &odt_bomb);
    }
    let report = bench_pipeline(&source, &dir.path().join("out"), 240);
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 8, "{failures:?}");
    for failure in failures {
        let reason = failure["reason"].as_str().unwrap();
        assert!(
            reason.contains("more than 128 MiB once inflated"),
            "{}: {reason}",
            failure["uri"]
        );
    }
    assert_eq!(report["documents_indexed"], 1);
}

/// A DOCX holding `text` in a Heading1 paragraph and a list item, whose styles and numbering
/// parts are cut off.
fn docx_with_damaged_styles(text: &str) -> Vec<u8> {
    const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
    let body = format!(
        r#"<?xml version="1.0"?><w:document xmlns:w="{W}"><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Berths</w:t></w:r></w:p><w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p></w:body></w:document>"#
    );
    let rels = format!(
        r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{RELATIONSHIP}/styles" Target="styles.xml"/><Relationship Id="rId2" Type="{RELATIONSHIP}/numbering" Target="numbering.xml"/></Relationships>"#
    );
    package(
        &[
            ("word/document.xml", body),
            ("word/_rels/document.xml.rels", rels),
            (
                "word/styles.xml",
                format!(r#"<w:styles xmlns:w="{W}"><w:style w:styleId="#),
            ),
            (
                "word/numbering.xml",
                format!(r#"<w:numbering xmlns:w="{W}"><w:abstractNum"#),
            ),
        ],
        0,
        "",
    )
}

#[test]
fn files_read_in_part_are_indexed_and_the_report_says_what_was_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    std::fs::create_dir(&source).unwrap();
    write(&source, "whole.txt", b"A file read whole, with no warning.");
    write(&source, "partial.pdf", &pdf_with_a_page_it_cannot_read("Harbour dues"));
    write(
        &source,
        "damaged.docx",
        &docx_with_damaged_styles("Berths are let by the year."),
    );
    let report = bench_pipeline(&source, &dir.path().join("out"), PARSE_MEMORY_MIB);
    assert_eq!(report["documents_indexed"], 3, "{report:#}");
    assert_eq!(report["failures"].as_array().unwrap().len(), 0, "{report:#}");
    let warnings: Vec<(String, String)> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let uri = w["uri"].as_str().unwrap();
            let file = uri.rsplit('/').next().unwrap().to_string();
            (file, w["warning"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    let (docx, pdf) = (&warnings[..2], &warnings[2]);
    assert!(
        docx[0].0 == "damaged.docx"
            && docx[0].1.starts_with("DOCX part word/styles.xml: XML at byte ")
            && docx[0].1.ends_with("; headings were read by their style ids"),
        "{warnings:#?}"
    );
    assert!(
        docx[1].0 == "damaged.docx"
            && docx[1].1.starts_with("DOCX part word/numbering.xml: XML at byte ")
            && docx[1].1.ends_with("; list numbers were left out"),
        "{warnings:#?}"
    );
    assert!(
        pdf.0 == "partial.pdf"
            && pdf
                .1
                .starts_with("page 2 of 2: text could not be extracted (the PDF reader stopped: ")
            && pdf.1.ends_with("); it was left out"),
        "{warnings:#?}"
    );

    // The version keeps them with the documents: a later run that reads no file again (each
    // is unchanged) tells none, and `quarry inspect --read-in-part` still lists them.
    let snapshot = dir.path().join("snap");
    let quarry = |args: &[&str]| -> serde_json::Value {
        let output = Command::new(env!("CARGO_BIN_EXE_quarry"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("QUARRY_LOG", "warn")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let index = [
        "index",
        source.to_str().unwrap(),
        "--out",
        snapshot.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
    ];
    assert_eq!(quarry(&index)["documents_warned"], 2);
    let again = quarry(&index);
    assert_eq!(
        (&again["documents_warned"], &again["delta"]["files_unchanged"]),
        (&0.into(), &3.into()),
        "{again:#}"
    );
    let inspected = quarry(&[
        "inspect",
        snapshot.to_str().unwrap(),
        "--read-in-part",
        "--no-verify",
        "--json",
    ]);
    let listed: Vec<(String, usize)> = inspected["read_in_part"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let uri = d["uri"].as_str().unwrap();
            let file = uri.rsplit('/').next().unwrap().to_string();
            (file, d["warnings"].as_array().unwrap().len())
        })
        .collect();
    assert_eq!(
        listed,
        [("damaged.docx".to_string(), 2), ("partial.pdf".to_string(), 1)]
    );
}
