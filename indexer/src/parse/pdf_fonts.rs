//! Fonts' parts checked before the PDF reader meets them: a character map (`ToUnicode`) and a
//! Type 1 font program (`FontFile`, whose encoding pdf-extract reads). pdf-extract stops
//! (panics) on either where it cannot parse it, and every page drawn with that font is lost
//! with it: a damaged part is taken away instead, so the font's text is read by the encoding
//! the font states (or the standard one), and the document says so in a warning.

use std::collections::{BTreeMap, BTreeSet};

use lopdf::{Dictionary, Document as PdfDocument, Object, ObjectId, Stream};

/// Dictionaries nested inside one object that are looked into for fonts at most (a page's
/// resources may name their fonts inline).
const MAX_DEPTH: usize = 4;

/// A font's part that is checked: the key naming it, what it is, and why it cannot be read.
struct FontPart {
    key: &'static [u8],
    what: &'static str,
    damage: fn(&[u8]) -> Option<String>,
}

const FONT_PARTS: [FontPart; 2] = [
    FontPart {
        key: b"ToUnicode",
        what: "character map (ToUnicode)",
        damage: map_damage,
    },
    FontPart {
        key: b"FontFile",
        what: "Type 1 font program (FontFile)",
        damage: font_program_damage,
    },
];

/// Takes every damaged font part out of `pdf`; a warning for each kind of part taken, naming
/// the fonts.
pub fn set_aside_damaged_font_parts(pdf: &mut PdfDocument) -> Vec<String> {
    FONT_PARTS.iter().filter_map(|part| set_aside(pdf, part)).collect()
}

fn set_aside(pdf: &mut PdfDocument, part: &FontPart) -> Option<String> {
    let mut named = BTreeSet::new();
    // Walked mutably only because the one walk also serves the removal below; nothing changes here.
    for object in pdf.objects.values_mut() {
        each_dictionary_mut(object, 0, &mut |dictionary| {
            if let Ok(Object::Reference(id)) = dictionary.get(part.key) {
                named.insert(*id);
            }
        });
    }
    let damaged: BTreeMap<ObjectId, String> = named
        .into_iter()
        .filter_map(|id| match pdf.get_object(id) {
            Ok(Object::Stream(stream)) => (part.damage)(&contents(stream)).map(|why| (id, why)),
            _ => None,
        })
        .collect();
    let first = damaged.values().next()?.clone();
    let mut fonts = BTreeSet::new();
    for object in pdf.objects.values_mut() {
        each_dictionary_mut(object, 0, &mut |dictionary| {
            let Ok(Object::Reference(id)) = dictionary.get(part.key) else {
                return;
            };
            if damaged.contains_key(id) {
                fonts.insert(font_name(dictionary));
                dictionary.remove(part.key);
            }
        });
    }
    let names: Vec<String> = fonts.into_iter().collect();
    let (fonts, its) = match names.len() {
        1 => ("font", "its"),
        _ => ("fonts", "their"),
    };
    Some(format!(
        "the {} of {fonts} {} could not be read ({first}); {its} text was read by the encoding the font states or the standard one, which may give other characters",
        part.what,
        names.join(", ")
    ))
}

/// A font's (`BaseFont`) or font descriptor's (`FontName`) name.
fn font_name(dictionary: &Dictionary) -> String {
    [b"BaseFont".as_slice(), b"FontName"]
        .iter()
        .find_map(|key| dictionary.get(key).and_then(Object::as_name).ok())
        .map_or_else(|| "unnamed".into(), |name| String::from_utf8_lossy(name).into_owned())
}

/// A stream's bytes as pdf-extract reads them: inflated where its filters allow, else as stored.
fn contents(stream: &Stream) -> Vec<u8> {
    match stream.filters() {
        Ok(_) => stream.decompressed_content().unwrap_or_else(|_| stream.content.clone()),
        Err(_) => stream.content.clone(),
    }
}

/// Why pdf-extract would stop on `contents` as a character map (none: it reads it).
fn map_damage(contents: &[u8]) -> Option<String> {
    let map = match std::panic::catch_unwind(|| adobe_cmap_parser::get_unicode_map(contents)) {
        Ok(Ok(map)) => map,
        Ok(Err(why)) => return Some(why.to_string()),
        Err(_) => return Some("its text does not parse".into()),
    };
    // Each target is UTF-16BE: an even number of bytes, whole characters but for a lone
    // surrogate (which pdf-extract skips).
    map.values().find_map(|target| {
        if target.len() % 2 != 0 {
            return Some("a character maps to an odd number of bytes".to_string());
        }
        let units: Vec<u16> = target
            .chunks_exact(2)
            .map(|u| u16::from_be_bytes([u[0], u[1]]))
            .collect();
        let lone_surrogate = matches!(units[..], [0xd800..=0xdfff]);
        (!lone_surrogate && String::from_utf16(&units).is_err()).then(|| "a character maps to broken UTF-16".into())
    })
}

/// Why pdf-extract would stop on `contents` as a Type 1 font program whose encoding it reads.
fn font_program_damage(contents: &[u8]) -> Option<String> {
    match std::panic::catch_unwind(|| type1_encoding_parser::get_encoding_map(contents)) {
        Ok(Ok(_)) => None,
        Ok(Err(why)) => Some(why.to_string()),
        Err(_) => Some("it does not parse".into()),
    }
}

/// Calls `visit` with `object`'s dictionary and those nested in it, [`MAX_DEPTH`] deep.
fn each_dictionary_mut(object: &mut Object, depth: usize, visit: &mut impl FnMut(&mut Dictionary)) {
    let dictionary = match object {
        Object::Dictionary(dictionary) => dictionary,
        Object::Stream(stream) => &mut stream.dict,
        _ => return,
    };
    visit(dictionary);
    if depth < MAX_DEPTH {
        dictionary
            .iter_mut()
            .for_each(|(_, inner)| each_dictionary_mut(inner, depth + 1, visit));
    }
}
