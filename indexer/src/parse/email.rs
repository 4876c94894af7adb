//! E-mail messages (`.eml`: RFC 5322 with MIME), read by mail-parser into
//! [`super::message_body`]: the subject as the title and the heading path, who sent it, to whom
//! and when, then each body part in order (plain text, or HTML with its headings and tables),
//! in whatever transfer encoding and character set it was sent (base64, quoted-printable,
//! ISO-2022-JP, GBK, Windows-1252, ...). A message forwarded as an attachment is read the same
//! way under its own subject; attached documents are parsed as their formats.

use mail_parser::{Address, Message, MessageParser, MimeHeaders, PartType};

use super::message_body::{Envelope, Reading};
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Messages forwarded inside messages read (mail-parser decodes three levels of them).
const MAX_FORWARDED_DEPTH: usize = 3;

/// `Name <address>, ...` for a header's addresses.
fn addresses(address: Option<&Address>) -> Option<String> {
    let listed: Vec<String> = address?
        .iter()
        .map(|a| match (a.name(), a.address()) {
            (Some(name), Some(address)) => format!("{name} <{address}>"),
            (name, address) => name.or(address).unwrap_or_default().to_string(),
        })
        .filter(|a| !a.is_empty())
        .collect();
    (!listed.is_empty()).then(|| listed.join(", "))
}

/// The addresses of a header, as the metadata keeps them.
fn address_list(address: Option<&Address>) -> Vec<String> {
    let listed = address.into_iter().flat_map(|a| a.iter());
    listed.filter_map(|a| Envelope::address(a.address()?)).collect()
}

/// A message's envelope: who sent it (the first `From`), to whom, when, its `Message-ID`.
fn envelope_of(message: &Message) -> Envelope {
    let sender = message.from().and_then(|from| from.first());
    Envelope {
        from: sender.and_then(|a| Envelope::address(a.address()?)),
        from_name: sender.and_then(|a| a.name()).map(str::to_string),
        to: address_list(message.to()),
        cc: address_list(message.cc()),
        date: message
            .date()
            .and_then(|date| chrono::DateTime::from_timestamp(date.to_timestamp(), 0)),
        message_id: message.message_id().map(str::to_string),
    }
}

/// One message's header block, bodies and attachments, under `path`.
fn read_message(reading: &mut Reading, message: &Message, path: &[String], depth: usize) {
    let fields = [
        ("From", addresses(message.from())),
        ("To", addresses(message.to())),
        ("Cc", addresses(message.cc())),
        ("Date", message.date().map(|d| d.to_rfc3339())),
    ];
    reading.header(fields, path);
    for i in 0..message.text_body_count() {
        match message.text_part(i as u32).map(|part| &part.body) {
            Some(PartType::Html(html)) => reading.html(html, path),
            Some(PartType::Text(text)) => reading.text(text, path),
            _ => {}
        }
    }
    for attachment in message.attachments() {
        let name = attachment.attachment_name().unwrap_or("attachment").to_string();
        match attachment.message() {
            Some(forwarded) if depth < MAX_FORWARDED_DEPTH => {
                let subject = forwarded.subject().map(str::trim).filter(|s| !s.is_empty());
                let path = [path, &[subject.unwrap_or(&name).to_string()]].concat();
                read_message(reading, forwarded, &path, depth + 1);
            }
            Some(_) => {}
            None => reading.attached_file(&name, attachment.contents(), path),
        }
    }
}

/// A message's document, titled by its subject; an untitled one by its file's name, and a
/// mailbox's untitled message by the mailbox's name and its place (`Inbox, message 3`).
pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let message = MessageParser::default()
        .parse(&raw.bytes[..])
        .filter(|m| m.headers().iter().any(|h| !h.name().is_empty()))
        .ok_or_else(|| ParseError::Corrupt("no message headers found".into()))?;
    let untitled = || match raw.uri.rsplit_once("#message=") {
        Some((_, place)) if !place.is_empty() && place.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{}, message {place}", Document::stem_of(raw))
        }
        _ => Document::stem_of(raw),
    };
    let title = message
        .subject()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map_or_else(untitled, str::to_string);
    let mut reading = Reading::new(raw);
    reading.envelope(envelope_of(&message));
    read_message(&mut reading, &message, std::slice::from_ref(&title), 0);
    Ok(reading.finish(title))
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, failures_of, outline_of, raw_for_test, AutoParser, ContentType, Format, Parser};

    /// Written by Python's `email` package: a Japanese message (its text part in ISO-2022-JP,
    /// an HTML alternative), a CSV, a picture, a password-protected DOCX and a German message
    /// (Latin-1, quoted-printable) forwarded as attachments.
    const INSPECTION: &[u8] = include_bytes!("../../tests/fixtures/inspection.eml");

    #[test]
    fn header_bodies_attachments_and_a_forwarded_message() {
        let parsed = AutoParser.parse(&raw_for_test("inspection.eml", INSPECTION)).unwrap();
        let doc = &parsed.documents[0];
        assert_eq!(doc.title, "配管点検の報告");
        let subject = "配管点検の報告";
        let forwarded = vec![subject, "Pumpe 3: Dichtung verschlissen"];
        let text = ContentType::Text;
        assert_eq!(
            outline_of(doc),
            vec![
                (
                    "From: Sato Hanako <hanako@example.jp>\nTo: Maintenance Team <team@example.com>, ops@example.com\nCc: lead@example.com\nDate: 2026-11-03T09:30:00+09:00",
                    vec![subject],
                    text
                ),
                ("配管の腐食は見られませんでした。", vec![subject], text),
                ("次回点検は六月です。", vec![subject], text),
                ("seal, 4", vec![subject, "spares.csv"], ContentType::Table),
                ("gasket, 12", vec![subject, "spares.csv"], ContentType::Table),
                (
                    "From: Jürgen Weiß <juergen@example.de>\nTo: wartung@example.de\nDate: 2026-11-02T08:15:00+01:00",
                    forwarded.clone(),
                    text
                ),
                ("Die Dichtung von Pumpe 3 ist verschlissen.", forwarded.clone(), text),
                ("Bitte Ersatzteil bestellen.", forwarded, text),
            ]
        );
        // Its envelope, for filters (the forwarded message's is not the message's): addresses
        // lower-cased, the time in UTC so that times sort as strings.
        let envelope = serde_json::json!({
            "from": "hanako@example.jp",
            "from_name": "Sato Hanako",
            "to": ["team@example.com", "ops@example.com"],
            "cc": ["lead@example.com"],
            "date": "2026-11-03T00:30:00Z",
        });
        assert_eq!(serde_json::Value::Object(doc.metadata.clone()), envelope);
        let envelope_only = b"Message-ID: <A1.x@Mail.Example.com>\nFrom: Ops <OPS@Example.com>\nTo: Ana\nDate: Tue, 1 Dec 2026 22:00:00 -0800\nSubject: pier\n\nOpen at six.";
        let noted = AutoParser.parse(&raw_for_test("note.eml", &envelope_only[..])).unwrap();
        assert_eq!(
            serde_json::Value::Object(noted.documents[0].metadata.clone()),
            serde_json::json!({
                "from": "ops@example.com",
                "from_name": "Ops",
                "date": "2026-12-02T06:00:00Z",
                "message_id": "A1.x@Mail.Example.com",
            }),
            "a recipient without an address is left out"
        );
        // The locked attachment fails alone, named; the picture is no document and is left out.
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/inspection.eml#attachment=plan.docx",
                "attachment plan.docx: DOCX is encrypted (saved with a password, or under DRM). Please upload an unlocked version."
            )]
        );
        // Without its extension, a message is known by its header.
        assert_eq!(detect_format("inspection", INSPECTION).unwrap(), Format::Email);
        let note = b"Subject: lunch\nFrom: a@example.com\n\nNoon?";
        assert_eq!(detect_format("note", note).unwrap(), Format::Email);
        assert_eq!(
            detect_format("notes", b"From: the minutes\nWe met.").unwrap(),
            Format::Text
        );
    }
}
