//! HTML's character references (`&amp;`, `&mdash;`, `&#8364;`, `&#x20AC;`), as RTF's HTML
//! fields and wikitext write them: named ones by the table html5ever reads them by.

/// The characters an HTML character reference stands for (`&amp;`, `&#8364;`, `&#x20AC;`).
pub(super) fn character_reference(text: &str) -> Option<String> {
    let name = text.strip_prefix('&')?;
    if !name.ends_with(';') || name.len() > 40 {
        return None;
    }
    let number = name.strip_prefix('#').map(|n| &n[..n.len() - 1]);
    let code_points = match number {
        Some(hex) if hex.starts_with(['x', 'X']) => (u32::from_str_radix(&hex[1..], 16).ok()?, 0),
        Some(decimal) => (decimal.parse().ok()?, 0),
        None => *markup5ever::data::NAMED_ENTITIES.get(name)?,
    };
    [code_points.0, code_points.1]
        .into_iter()
        .filter(|c| *c != 0)
        .map(char::from_u32)
        .collect()
}

/// `text` with its character references replaced by the characters they stand for; one not
/// known is kept as written.
pub(super) fn decode_character_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        let end = rest.bytes().take(42).position(|b| b == b';');
        match end.and_then(|end| character_reference(&rest[..=end]).map(|c| (c, end))) {
            Some((decoded, end)) => {
                out.push_str(&decoded);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_numbered_references_are_decoded_and_others_kept() {
        assert_eq!(
            decode_character_references("caf&eacute; &mdash; &#x263A;&#9731; &amp;amp; &unknown; a & b &"),
            "café — ☺☃ &amp; &unknown; a & b &"
        );
    }
}
