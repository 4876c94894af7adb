//! Outlook messages (`.msg`; MS-OXMSG): a compound file whose storages hold a message's
//! properties, each string or binary property a stream of its own (`__substg1.0_<id><type>`),
//! the fixed-size ones in `__properties_version1.0`. Read into [`super::message_body`] as an
//! `.eml` is: the subject as title and heading path; sender, recipients and the time it was
//! sent; the plain-text body, or the HTML body where there is none, or else the compressed
//! RTF body ([`super::compressed_rtf`], read by [`super::rtf`]); each attachment
//! (`__attach_version1.0_#n`) parsed as its format, or, for an attached Outlook item, read as
//! a message under its own subject.
//!
//! Quarry's own code over [`CompoundFile`], in process: each storage is read once however the
//! directory links them, and attached items at most four deep.

use std::collections::HashSet;

use super::compound_file::{u16_at, u32_at, CompoundFile, Storage, ROOT_STORAGE};
use super::compressed_rtf;
use super::legacy_encoding::windows_code_page;
use super::message_body::{Envelope, Reading};
use super::rtf;
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Attached Outlook items read inside one another.
const MAX_ATTACHED_DEPTH: usize = 4;
/// Property types: 8-bit and UTF-16 strings, binary, a 32-bit integer, a time.
const STRING_8: u16 = 0x001E;
const STRING: u16 = 0x001F;
const BINARY: u16 = 0x0102;
const INTEGER: u16 = 0x0003;
const TIME: u16 = 0x0040;
/// Property ids.
const SUBJECT: u16 = 0x0037;
const CLIENT_SUBMIT_TIME: u16 = 0x0039;
const SENDER_NAME: u16 = 0x0C1A;
const SENDER_EMAIL: u16 = 0x0C1F;
const SENDER_SMTP: u16 = 0x5D01;
const DISPLAY_CC: u16 = 0x0E03;
const DISPLAY_TO: u16 = 0x0E04;
const DELIVERY_TIME: u16 = 0x0E06;
const RECIPIENT_TYPE: u16 = 0x0C15;
const INTERNET_MESSAGE_ID: u16 = 0x1035;
const EMAIL_ADDRESS: u16 = 0x3003;
const SMTP_ADDRESS: u16 = 0x39FE;
const BODY: u16 = 0x1000;
const RTF_COMPRESSED: u16 = 0x1009;
const HTML: u16 = 0x1013;
const DISPLAY_NAME: u16 = 0x3001;
const ATTACHED_DATA: u16 = 0x3701;
const ATTACHED_FILE_NAME: u16 = 0x3704;
const ATTACHED_LONG_FILE_NAME: u16 = 0x3707;
const INTERNET_CODE_PAGE: u16 = 0x3FDE;
const MESSAGE_CODE_PAGE: u16 = 0x3FFD;
/// Seconds from 1601-01-01 (a FILETIME's epoch) to 1970-01-01.
const FILETIME_TO_UNIX_SECONDS: i64 = 11_644_473_600;

/// One storage's properties: the message's, an attachment's.
struct Properties<'f, 'a> {
    file: &'f CompoundFile<'a>,
    storage: Storage,
    /// `__properties_version1.0`'s fixed-size entries (16 bytes each, past its header).
    fixed: Vec<u8>,
}

impl<'f, 'a> Properties<'f, 'a> {
    /// `header_bytes`: 32 for the file's message, 24 for an attached one, 8 for an attachment.
    fn read(file: &'f CompoundFile<'a>, storage: Storage, header_bytes: usize) -> Self {
        let stream = file.stream_in(storage, "__properties_version1.0").and_then(Result::ok);
        Self {
            file,
            storage,
            fixed: stream
                .and_then(|s| s.get(header_bytes..).map(<[u8]>::to_vec))
                .unwrap_or_default(),
        }
    }

    /// A fixed-size property's 8 bytes.
    fn fixed(&self, id: u16, kind: u16) -> Option<&[u8]> {
        self.fixed
            .chunks_exact(16)
            .find(|entry| u16_at(entry, 0) == Some(kind) && u16_at(entry, 2) == Some(id))
            .map(|entry| &entry[8..16])
    }

    fn stream(&self, id: u16, kind: u16) -> Option<Vec<u8>> {
        self.file
            .stream_in(self.storage, &format!("__substg1.0_{id:04X}{kind:04X}"))?
            .ok()
    }

    /// A string property, UTF-16, or 8-bit in the message's code page.
    fn string(&self, id: u16) -> Option<String> {
        let text = match self.stream(id, STRING) {
            Some(bytes) => {
                let units: Vec<u16> = bytes
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                String::from_utf16_lossy(&units)
            }
            None => {
                let bytes = self.stream(id, STRING_8)?;
                let code_page = [INTERNET_CODE_PAGE, MESSAGE_CODE_PAGE]
                    .into_iter()
                    .find_map(|id| self.fixed(id, INTEGER).and_then(|v| u32_at(v, 0)));
                let encoding = match code_page {
                    Some(65001) => encoding_rs::UTF_8,
                    Some(number) => windows_code_page(number as i32).unwrap_or(encoding_rs::WINDOWS_1252),
                    None => encoding_rs::WINDOWS_1252,
                };
                encoding.decode_without_bom_handling(&bytes).0.into_owned()
            }
        };
        let text = text.trim_matches(|c: char| c == '\0' || c.is_whitespace()).to_string();
        (!text.is_empty()).then_some(text)
    }

    /// A time property.
    fn time(&self, id: u16) -> Option<chrono::DateTime<chrono::Utc>> {
        let ticks = u64::from_le_bytes(self.fixed(id, TIME)?.try_into().ok()?);
        let seconds = i64::try_from(ticks / 10_000_000).ok()? - FILETIME_TO_UNIX_SECONDS;
        chrono::DateTime::from_timestamp(seconds, 0)
    }

    /// When the message was sent (else delivered).
    fn sent(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.time(CLIENT_SUBMIT_TIME).or_else(|| self.time(DELIVERY_TIME))
    }
}

/// The file's message's envelope: the sender's SMTP address (or its address, where that is
/// one), its recipients' from their storages (`__recip_version1.0_#n`: To where the type says
/// 1 or nothing, Cc where it says 2; Bcc left out), when it was sent, its Internet message id.
fn envelope_of(file: &CompoundFile, message: &Properties) -> Envelope {
    let (mut to, mut cc) = (Vec::new(), Vec::new());
    for (_, storage) in file
        .storages_in(message.storage)
        .into_iter()
        .filter(|(name, _)| name.starts_with("__recip_version1.0_#"))
    {
        let recipient = Properties::read(file, storage, 8);
        let address = [SMTP_ADDRESS, EMAIL_ADDRESS]
            .into_iter()
            .find_map(|id| Envelope::address(&recipient.string(id)?));
        let kind = recipient.fixed(RECIPIENT_TYPE, INTEGER).and_then(|v| u32_at(v, 0));
        match (address, kind) {
            (Some(address), None | Some(1)) => to.push(address),
            (Some(address), Some(2)) => cc.push(address),
            _ => {}
        }
    }
    Envelope {
        from: [SENDER_SMTP, SENDER_EMAIL]
            .into_iter()
            .find_map(|id| Envelope::address(&message.string(id)?)),
        from_name: message.string(SENDER_NAME),
        to,
        cc,
        date: message.sent(),
        message_id: message.string(INTERNET_MESSAGE_ID),
    }
}

/// One message's header block, body and attachments, under `path`.
fn read_message(
    reading: &mut Reading,
    file: &CompoundFile,
    message: Properties,
    path: &[String],
    depth: usize,
    read: &mut HashSet<Storage>,
) {
    let sender = match (message.string(SENDER_NAME), message.string(SENDER_SMTP)) {
        (Some(name), Some(address)) if name != address => Some(format!("{name} <{address}>")),
        (name, address) => name.or(address).or_else(|| message.string(SENDER_EMAIL)),
    };
    let fields = [
        ("From", sender),
        ("To", message.string(DISPLAY_TO)),
        ("Cc", message.string(DISPLAY_CC)),
        ("Date", message.sent().map(|time| time.to_rfc3339())),
    ];
    reading.header(fields, path);
    let html = || {
        message.string(HTML).or_else(|| {
            let bytes = message.stream(HTML, BINARY)?;
            Some(String::from_utf8_lossy(&bytes).into_owned())
        })
    };
    if let Some(body) = message.string(BODY) {
        reading.text(&body, path);
    } else if let Some(html) = html() {
        reading.html(&html, path);
    } else if let Some(compressed) = message.stream(RTF_COMPRESSED, BINARY) {
        // A damaged RTF body leaves the message's header and attachments.
        let rtf = compressed_rtf::decompress(&compressed).ok();
        if let Some((_, blocks)) = rtf.and_then(|rtf| rtf::read(&rtf).ok()) {
            reading.blocks(blocks, path);
        }
    }
    let attachments = file.storages_in(message.storage);
    for (_, storage) in attachments
        .into_iter()
        .filter(|(name, _)| name.starts_with("__attach_version1.0_#"))
    {
        if !read.insert(storage) {
            continue;
        }
        let attachment = Properties::read(file, storage, 8);
        let name = [ATTACHED_LONG_FILE_NAME, ATTACHED_FILE_NAME, DISPLAY_NAME]
            .into_iter()
            .find_map(|id| attachment.string(id))
            .unwrap_or_else(|| "attachment".to_string());
        let item = file
            .storages_in(storage)
            .into_iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("__substg1.0_3701000D"));
        match item {
            Some((_, item)) if depth < MAX_ATTACHED_DEPTH && read.insert(item) => {
                let attached = Properties::read(file, item, 24);
                let subject = attached.string(SUBJECT).unwrap_or(name);
                let path = [path, &[subject]].concat();
                read_message(reading, file, attached, &path, depth + 1, read);
            }
            Some(_) => {}
            None => {
                if let Some(bytes) = attachment.stream(ATTACHED_DATA, BINARY) {
                    reading.attached_file(&name, &bytes, path);
                }
            }
        }
    }
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let file = CompoundFile::open(&raw.bytes).map_err(|e| ParseError::Corrupt(format!("MSG: {e}")))?;
    let message = Properties::read(&file, ROOT_STORAGE, 32);
    let title = message.string(SUBJECT).unwrap_or_else(|| Document::stem_of(raw));
    let mut reading = Reading::new(raw);
    reading.envelope(envelope_of(&file, &message));
    let mut read = HashSet::from([ROOT_STORAGE]);
    read_message(&mut reading, &file, message, std::slice::from_ref(&title), 0, &mut read);
    Ok(reading.finish(title))
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, outline_of, raw_for_test, AutoParser, ContentType, Format, Parser};

    /// An Outlook message with an Outlook item attached (msg_parser 1.2.0's `tests/files`).
    const OUTER: &[u8] = include_bytes!("../../tests/fixtures/outer.msg");

    #[test]
    fn subject_recipients_time_body_and_an_attached_item() {
        let parsed = AutoParser.parse(&raw_for_test("outer.msg", OUTER)).unwrap();
        let doc = &parsed.documents[0];
        assert_eq!(doc.title, "outer subject");
        let (outer, inner) = (vec!["outer subject"], vec!["outer subject", "test"]);
        let text = ContentType::Text;
        assert_eq!(
            outline_of(doc),
            vec![
                (
                    "To: outer@foo.bar\nDate: 2016-11-15T23:29:05+00:00",
                    outer.clone(),
                    text
                ),
                ("Outer body", outer, text),
                (
                    "To: test@foobar.com\nDate: 2016-11-15T23:28:26+00:00",
                    inner.clone(),
                    text
                ),
                ("body", inner, text),
            ]
        );
        assert!(parsed.failures.is_empty());
        assert_eq!(detect_format("upload", OUTER).unwrap(), Format::Msg);
        // Its envelope, for filters: the recipient from its storage, the time in UTC; the
        // attached item's recipient is not the message's.
        assert_eq!(
            serde_json::Value::Object(doc.metadata.clone()),
            serde_json::json!({ "to": ["outer@foo.bar"], "date": "2016-11-15T23:29:05Z" })
        );
    }

    /// Outlook's compressed RTF body, read where a message has no plain-text or HTML one: the
    /// fixture's plain bodies renamed away, its RTF bodies (HTML that Outlook encapsulated in
    /// RTF) give the same paragraphs.
    #[test]
    fn the_rtf_body_where_there_is_no_other() {
        let plain: Vec<u8> = "__substg1.0_1000001F"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let renamed: Vec<u8> = "__substg1.0_1001001F"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let mut without = OUTER.to_vec();
        let mut found = 0;
        while let Some(at) = without.windows(plain.len()).position(|w| w == plain) {
            without[at..at + plain.len()].copy_from_slice(&renamed);
            found += 1;
        }
        assert_eq!(found, 2, "the outer and the attached message's plain bodies");
        let parsed = AutoParser.parse(&raw_for_test("outer.msg", without)).unwrap();
        let bodies: Vec<(&str, Vec<&str>)> = outline_of(&parsed.documents[0])
            .into_iter()
            .filter(|(text, _, _)| !text.contains("Date: "))
            .map(|(text, path, _)| (text, path))
            .collect();
        assert_eq!(
            bodies,
            [
                ("Outer body", vec!["outer subject"]),
                ("body", vec!["outer subject", "test"])
            ]
        );
    }
}
