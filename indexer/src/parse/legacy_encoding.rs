//! Text that is not UTF-8: read in the encoding it declares (an HTML page's `<meta charset>`,
//! an XML declaration's `encoding`),
//! else as UTF-8 with its few bad bytes replaced where most of its non-ASCII is UTF-8, else in
//! the encoding Firefox's detector (chardetng) finds likeliest: Shift_JIS, EUC-JP, GBK,
//! Big5, EUC-KR, Windows-1250..1258, KOI8, ISO-8859-x. Documents in any language arrive in
//! these (a Japanese text file saved by Notepad, a CSV exported by Excel); refused, their
//! words were lost. Bytes that read as no encoding's text are refused as binary.

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, ISO_2022_JP, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

use super::ParseError;

/// The bytes the detector reads: enough for any encoding's tell-tale pairs, and a bound on
/// its time over a large file (it weighs 27 encodings at once).
pub(super) const GUESS_SAMPLE_BYTES: usize = 1 << 20;

/// The characters, from the start of the decoded text, looked at for control characters.
const CONTROL_SAMPLE_CHARS: usize = 1 << 16;

/// Decoded text with more than one control character (or undecodable byte) in this many
/// characters is not text: written text in any encoding has none besides tabs, line breaks
/// and form feeds, while binary data read as a single-byte encoding has about one in eight.
const ONE_CONTROL_IN: usize = 50;

/// `bytes` (without a byte order mark; not valid UTF-8), decoded: in `declared` where given
/// (an ASCII-compatible encoding), else as UTF-8 with its bad sequences replaced where valid
/// UTF-8 characters outnumber them, else in the likeliest legacy encoding. A declared UTF-8 is
/// no declaration here: the bytes already say it is wrong (a Windows-1252 page with
/// `<meta charset="utf-8">`, a client that labels every upload UTF-8).
pub(super) fn decode_legacy(bytes: &[u8], declared: Option<&'static Encoding>) -> Result<String, ParseError> {
    let encoding = match declared {
        Some(encoding) if encoding != UTF_8 => encoding,
        _ if mostly_utf8(bytes) => UTF_8,
        _ => guess(bytes),
    };
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    refuse_control_characters(&text, encoding)?;
    Ok(text.into_owned())
}

/// The encoding a text stream is decoded from (None: UTF-8, passed on as it is), decided on
/// `window`, its bytes from the first past ASCII or escape (`ended`: to the stream's end), as
/// [`decode_legacy`] decides on a whole file's: UTF-8 where the window is (but for a character
/// cut at its end), ISO-2022-JP where it is 7-bit and switches to a Japanese character set,
/// else `declared`, else UTF-8 where it mostly is, else the likeliest legacy encoding; fails
/// where the window does not read as text in it.
pub(super) fn stream_encoding(
    window: &[u8],
    ended: bool,
    declared: Option<&'static Encoding>,
) -> Result<Option<&'static Encoding>, ParseError> {
    let utf8 = match std::str::from_utf8(window) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && !ended,
    };
    let japanese_escapes = || find(window, b"\x1b$B").or(find(window, b"\x1b$@")).is_some();
    let encoding = if utf8 && window.is_ascii() && japanese_escapes() {
        ISO_2022_JP
    } else if utf8 {
        return Ok(None);
    } else {
        match declared {
            Some(encoding) if encoding != UTF_8 => encoding,
            _ if mostly_utf8(window) => return Ok(None),
            _ => guess_in(&window[..window.len().min(GUESS_SAMPLE_BYTES)], ended),
        }
    };
    let (text, _) = encoding.decode_without_bom_handling(window);
    refuse_control_characters(&text, encoding)?;
    Ok(Some(encoding))
}

/// Fails where `text` (decoded from `encoding`) holds control characters or undecodable bytes
/// as binary data read as text does ([`ONE_CONTROL_IN`]).
fn refuse_control_characters(text: &str, encoding: &'static Encoding) -> Result<(), ParseError> {
    let (looked_at, controls) = text
        .chars()
        .take(CONTROL_SAMPLE_CHARS)
        .fold((0, 0), |(seen, controls), c| {
            (seen + 1, controls + usize::from(is_control_or_undecodable(c)))
        });
    if controls * ONE_CONTROL_IN > looked_at {
        return Err(ParseError::Binary(format!(
            "not text in UTF-8 nor in {}, its likeliest other encoding: {controls} of its first {looked_at} characters are control characters or undecodable bytes",
            encoding.name()
        )));
    }
    Ok(())
}

/// `text` (valid UTF-8, so 7-bit where it has escapes) read as ISO-2022-JP, where it switches
/// to a Japanese character set (`ESC $ B`, `ESC $ @`) and reads as ISO-2022-JP throughout:
/// Japanese mail archives and old text files.
pub(super) fn decode_iso_2022_jp(text: &str) -> Option<String> {
    if !(text.contains("\x1b$B") || text.contains("\x1b$@")) {
        return None;
    }
    ISO_2022_JP
        .decode_without_bom_handling_and_without_replacement(text.as_bytes())
        .map(|decoded| decoded.into_owned())
}

/// Whether the valid UTF-8 characters beyond ASCII outnumber the invalid sequences: UTF-8
/// with a few stray bytes (a Latin-1 line pasted into a UTF-8 file), not a legacy encoding,
/// whose bytes form a valid multi-byte UTF-8 character only by chance.
fn mostly_utf8(bytes: &[u8]) -> bool {
    let (mut valid, mut invalid) = (0usize, 0usize);
    for chunk in bytes[..bytes.len().min(GUESS_SAMPLE_BYTES)].utf8_chunks() {
        valid += chunk.valid().chars().filter(|c| !c.is_ascii()).count();
        invalid += usize::from(!chunk.invalid().is_empty());
    }
    valid > invalid
}

/// The likeliest encoding of `bytes` other than UTF-8, by chardetng over their first
/// [`GUESS_SAMPLE_BYTES`] (no top-level domain to go by).
fn guess(bytes: &[u8]) -> &'static Encoding {
    let sample = &bytes[..bytes.len().min(GUESS_SAMPLE_BYTES)];
    guess_in(sample, sample.len() == bytes.len())
}

/// The likeliest encoding of `sample` other than UTF-8 (`last`: the text ends with it).
fn guess_in(sample: &[u8], last: bool) -> &'static Encoding {
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Allow);
    detector.feed(sample, last);
    detector.guess(None, Utf8Detection::Deny)
}

/// C0 and C1 control characters but tab, line feed, form feed and carriage return; DEL;
/// the replacement character an undecodable byte became.
fn is_control_or_undecodable(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\x0C' | '\r') || c == char::REPLACEMENT_CHARACTER
}

/// The encoding an HTML page declares in its first 1,024 bytes (`<meta charset="...">`, or
/// `<meta http-equiv="Content-Type" content="text/html; charset=...">`), as the HTML standard's
/// prescan reads it: a UTF-16 label means UTF-8 (the bytes had no UTF-16 byte order mark) and
/// `x-user-defined` Windows-1252.
pub(super) fn declared_in_html(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = bytes[..bytes.len().min(1024)].to_ascii_lowercase();
    let mut rest = head.as_slice();
    while let Some(at) = find(rest, b"<meta") {
        let tag = &rest[at + b"<meta".len()..];
        let end = tag.iter().position(|b| *b == b'>').unwrap_or(tag.len());
        if let Some(encoding) = charset_in(&tag[..end]) {
            return Some(match encoding {
                e if e == UTF_16LE || e == UTF_16BE => UTF_8,
                e if e == X_USER_DEFINED => WINDOWS_1252,
                e => e,
            });
        }
        rest = &tag[end..];
    }
    None
}

/// The encoding an XML declaration names (`<?xml version="1.0" encoding="ISO-8859-1"?>`), where
/// it names an ASCII-compatible one (a declaration read in ASCII names no UTF-16).
pub(super) fn declared_in_xml(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(1024)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head).trim_ascii_start();
    let declaration = head.strip_prefix(b"<?xml")?;
    let declaration = declaration[..find(declaration, b"?>")?].to_ascii_lowercase();
    let after = &declaration[find(&declaration, b"encoding")? + b"encoding".len()..];
    let value = after.trim_ascii_start().strip_prefix(b"=")?.trim_ascii_start();
    let quote = *value.first().filter(|q| matches!(q, b'"' | b'\''))?;
    let value = &value[1..];
    let label = &value[..value.iter().position(|b| *b == quote)?];
    Encoding::for_label(label).filter(|encoding| ![UTF_16LE, UTF_16BE, X_USER_DEFINED].contains(encoding))
}

/// The encoding a media type names in its `charset` (`text/plain; charset=ISO-8859-5`, as an
/// S3 object's `Content-Type` may), where it names an ASCII-compatible one.
pub(super) fn declared_in_content_type(content_type: &str) -> Option<&'static Encoding> {
    charset_in(content_type.to_ascii_lowercase().as_bytes())
        .filter(|encoding| *encoding != UTF_16LE && *encoding != UTF_16BE && *encoding != X_USER_DEFINED)
}

/// The encoding a `<meta>` tag's attributes (lower-cased) name after `charset=`, if known.
fn charset_in(attributes: &[u8]) -> Option<&'static Encoding> {
    let mut rest = attributes;
    while let Some(at) = find(rest, b"charset") {
        let after = rest[at + b"charset".len()..].trim_ascii_start();
        if let Some(value) = after.strip_prefix(b"=") {
            let value = value.trim_ascii_start();
            let value = value
                .strip_prefix(b"\"")
                .or_else(|| value.strip_prefix(b"'"))
                .unwrap_or(value);
            let end = value
                .iter()
                .position(|b| matches!(b, b'"' | b'\'' | b';' | b'/' | b'>') || b.is_ascii_whitespace())
                .unwrap_or(value.len());
            return Encoding::for_label(&value[..end]);
        }
        rest = after;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A Windows code page by number (RTF's `\ansicpg`, an Office property set's code page), as an
/// encoding.
pub(super) fn windows_code_page(number: i32) -> Option<&'static Encoding> {
    let label = match number {
        932 => "shift_jis".to_string(),
        936 => "gbk".to_string(),
        949 => "euc-kr".to_string(),
        950 => "big5".to_string(),
        10000 => "macintosh".to_string(),
        874 | 1250..=1258 => format!("windows-{number}"),
        _ => return None,
    };
    Encoding::for_label(label.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sentence or two in each language, in the legacy encodings its texts are found in.
    const SAMPLES: [(&str, &str); 16] = [
        ("Shift_JIS", "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。"),
        ("EUC-JP", "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。"),
        ("ISO-2022-JP", "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"),
        ("GBK", "床前明月光，疑是地上霜。举头望明月，低头思故乡。这首诗是唐代诗人李白的作品，表达了诗人对故乡的思念之情。"),
        ("Big5", "床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。這首詩是唐代詩人李白的作品，表達了詩人對故鄉的思念之情。"),
        ("EUC-KR", "대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다. 수도는 서울특별시이며, 인구는 약 오천만 명이다."),
        ("windows-1251", "Москва — столица России, крупнейший по численности населения город страны и её важнейший экономический и культурный центр."),
        ("KOI8-R", "Москва является столицей России, крупнейшим по численности населения городом страны и её важнейшим экономическим и культурным центром."),
        ("windows-1252", "Über den Wolken muss die Freiheit wohl grenzenlos sein. Größere Städte wie München und Köln liegen weiter südlich."),
        ("windows-1252", "L'été dernier, nous avons visité une très belle église près de la forêt ; c'était à côté du château."),
        ("windows-1250", "Zażółć gęślą jaźń. Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw. Są oni obdarzeni rozumem i sumieniem."),
        ("windows-1253", "Η Αθήνα είναι η πρωτεύουσα και μεγαλύτερη πόλη της Ελλάδας, με μακρά ιστορία που ξεκινά από την αρχαιότητα."),
        ("windows-1254", "İstanbul, Türkiye'nin en kalabalık şehri ve ekonomik, kültürel ve tarihi başkentidir. Boğaziçi iki kıtayı birbirinden ayırır."),
        ("windows-1255", "ירושלים היא עיר הבירה של מדינת ישראל והעיר הגדולה ביותר בה, ובה מקומות קדושים לשלוש הדתות."),
        ("windows-1256", "القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها، وتقع على ضفاف نهر النيل في شمال البلاد."),
        ("windows-874", "กรุงเทพมหานครเป็นเมืองหลวงและนครที่มีประชากรมากที่สุดของประเทศไทย ตั้งอยู่บนฝั่งแม่น้ำเจ้าพระยา"),
    ];

    fn encoded(label: &str, text: &str) -> Vec<u8> {
        let encoding = Encoding::for_label(label.as_bytes()).unwrap();
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(!unmappable, "{label} cannot hold {text}");
        bytes.into_owned()
    }

    #[test]
    fn each_languages_legacy_encoding_is_read_back() {
        for (label, text) in SAMPLES {
            let bytes = encoded(label, text);
            // ISO-2022-JP is 7-bit: valid UTF-8 with escapes.
            assert_eq!(std::str::from_utf8(&bytes).is_ok(), label == "ISO-2022-JP", "{label}");
            assert_eq!(super::super::text::decode_text(&bytes).unwrap(), text, "{label}");
        }
        // Escapes that switch to no Japanese set stay as they are.
        assert_eq!(decode_iso_2022_jp("a \x1b[1mbold\x1b[0m word"), None);
    }

    #[test]
    fn utf8_with_a_stray_byte_stays_utf8() {
        let bytes = [
            "Grüße aus Köln — 東京もよろしく. A UTF-8 file, with a line pasted from elsewhere".as_bytes(),
            b" and its one Latin-1 byte: caf\xe9.",
        ]
        .concat();
        assert_eq!(
            decode_legacy(&bytes, None).unwrap(),
            "Grüße aus Köln — 東京もよろしく. A UTF-8 file, with a line pasted from elsewhere and its one Latin-1 byte: caf\u{FFFD}."
        );
    }

    #[test]
    fn a_declared_encoding_wins_over_the_guess() {
        // KOI8-U and KOI8-R differ only in Ukrainian letters; Windows-1251 bytes read as KOI8-R are not Russian.
        let text = "Москва — столица России.";
        let bytes = encoded("windows-1251", text);
        assert_eq!(decode_legacy(&bytes, Some(encoding_rs::WINDOWS_1251)).unwrap(), text);
        assert_ne!(decode_legacy(&bytes, Some(encoding_rs::KOI8_R)).unwrap(), text);
        // A declared UTF-8 the bytes are not is guessed past, as if undeclared.
        assert_eq!(decode_legacy(&bytes, Some(UTF_8)).unwrap(), text);
        let stray = [
            "Grüße aus Köln — 東京もよろしく. A UTF-8 file, with a line pasted from elsewhere".as_bytes(),
            b" and its one Latin-1 byte: caf\xe9.",
        ]
        .concat();
        assert!(decode_legacy(&stray, Some(UTF_8)).unwrap().ends_with("caf\u{FFFD}."));
    }

    #[test]
    fn html_declarations_are_found() {
        let page =
            |head: &str| format!("<!doctype html><html><head>{head}<title>x</title></head><body>hi</body></html>");
        let found = |head: &str| declared_in_html(page(head).as_bytes()).map(Encoding::name);
        assert_eq!(found("<meta charset=\"Shift_JIS\">"), Some("Shift_JIS"));
        assert_eq!(found("<META CHARSET=euc-kr/>"), Some("EUC-KR"));
        assert_eq!(
            found("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">"),
            Some("windows-1251")
        );
        assert_eq!(found("<meta charset='latin1'>"), Some("windows-1252"));
        assert_eq!(found("<meta charset=\"utf-16\">"), Some("UTF-8"));
        assert_eq!(found("<meta charset=\"no-such-encoding\">"), None);
        assert_eq!(found("<meta name=\"description\" content=\"charset\">"), None);
        assert_eq!(found(""), None);
        // Past the first 1,024 bytes, as the standard's prescan.
        let late = format!("{}<meta charset=\"gbk\">", " ".repeat(1100));
        assert_eq!(declared_in_html(late.as_bytes()), None);
    }

    #[test]
    fn bytes_that_are_no_encodings_text_are_binary() {
        // Seeded bytes without NUL: read as any single-byte encoding, about one in eight is a control.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let bytes: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8 | 1
            })
            .collect();
        let error = decode_legacy(&bytes, None).unwrap_err();
        assert!(
            matches!(&error, ParseError::Binary(why) if why.contains("control characters")),
            "{error:?}"
        );
    }
}
