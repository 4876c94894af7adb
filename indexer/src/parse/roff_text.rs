//! roff's escapes in a line of text, as a man page's reader sees them: font changes (`\fB`,
//! `\f(CW`, `\f[I]`), sizes, italic corrections and other spacing left out; `\-` a hyphen;
//! named glyphs (`\(em`, `\[u00E9]`) and strings (`\*(lq`) as their characters; a comment
//! (`\"`) ends the line. Each escape's argument is bounded by the line, so the time is linear.

/// The longest escape name looked for after `\[`.
const MAX_NAME: usize = 64;

/// Glyphs by their roff names (groff_char(7)): the ones man pages use.
const GLYPHS: [(&str, &str); 58] = [
    ("em", "—"),
    ("en", "–"),
    ("bu", "•"),
    ("aq", "'"),
    ("lq", "\u{201c}"),
    ("rq", "\u{201d}"),
    ("oq", "\u{2018}"),
    ("cq", "\u{2019}"),
    ("dq", "\""),
    ("co", "©"),
    ("rg", "®"),
    ("tm", "™"),
    ("hy", "-"),
    ("mi", "-"),
    ("pl", "+"),
    ("mu", "×"),
    ("di", "÷"),
    ("de", "°"),
    (">=", "≥"),
    ("<=", "≤"),
    ("!=", "≠"),
    ("->", "→"),
    ("<-", "←"),
    ("rs", "\\"),
    ("ti", "~"),
    ("ha", "^"),
    ("sl", "/"),
    ("ga", "`"),
    ("aa", "´"),
    ("dg", "†"),
    ("sc", "§"),
    ("ps", "¶"),
    ("Eu", "€"),
    ("Po", "£"),
    ("ua", "↑"),
    ("da", "↓"),
    ("Fo", "«"),
    ("Fc", "»"),
    ("fo", "‹"),
    ("fc", "›"),
    ("ss", "ß"),
    (":a", "ä"),
    (":o", "ö"),
    (":u", "ü"),
    (":A", "Ä"),
    (":O", "Ö"),
    (":U", "Ü"),
    ("'e", "é"),
    ("`e", "è"),
    ("^e", "ê"),
    ("'a", "á"),
    ("`a", "à"),
    ("'o", "ó"),
    ("'i", "í"),
    ("'u", "ú"),
    (",c", "ç"),
    ("~n", "ñ"),
    ("bv", "|"),
];
/// Strings man pages define or the macro packages do (`\*(lq`, `\*R`).
const STRINGS: [(&str, &str); 6] = [
    ("lq", "\u{201c}"),
    ("rq", "\u{201d}"),
    ("R", "®"),
    ("Tm", "™"),
    ("S", ""),
    ("-", "—"),
];

fn glyph(name: &str) -> String {
    if let Some(code) = name.strip_prefix('u').filter(|c| c.len() >= 4) {
        let chars: Option<String> = code
            .split('_')
            .map(|c| u32::from_str_radix(c, 16).ok().and_then(char::from_u32))
            .collect();
        return chars.unwrap_or_default();
    }
    GLYPHS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, g)| g.to_string())
        .unwrap_or_default()
}

/// An escape's name after `\(` (two characters), `\[` (to `]`) or one character; the text after it.
fn escape_name(rest: &str) -> (&str, &str) {
    if let Some(two) = rest.strip_prefix('(') {
        let end = two.char_indices().nth(2).map_or(two.len(), |(i, _)| i);
        return (&two[..end], &two[end..]);
    }
    if let Some(bracketed) = rest.strip_prefix('[') {
        // A name is short: one not closed soon is no escape (and the search stays bounded).
        return match bracketed.bytes().take(MAX_NAME).position(|b| b == b']') {
            Some(end) => (&bracketed[..end], &bracketed[end + 1..]),
            None => ("", bracketed),
        };
    }
    let end = rest.chars().next().map_or(0, char::len_utf8);
    (&rest[..end], &rest[end..])
}

/// `line`'s text with its escapes read.
pub(super) fn roff_text(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(p) = rest.find('\\') {
        out.push_str(&rest[..p]);
        let after = &rest[p + 1..];
        let Some(c) = after.chars().next() else {
            return out; // a line ending in `\` goes on with the next
        };
        let after = &after[c.len_utf8()..];
        rest = match c {
            '"' | '#' => return out,
            '-' => {
                out.push('-');
                after
            }
            'e' | '\\' => {
                out.push('\\');
                after
            }
            ' ' | '~' | '0' => {
                out.push(' ');
                after
            }
            't' => {
                out.push('\t');
                after
            }
            '.' | '\'' | '`' => {
                out.push(c);
                after
            }
            '(' | '[' => {
                let (name, tail) = escape_name(&rest[p + 1..]);
                out.push_str(&glyph(name));
                tail
            }
            '*' => {
                let (name, tail) = escape_name(after);
                let string = STRINGS.iter().find(|(n, _)| *n == name).map_or("", |(_, s)| *s);
                out.push_str(string);
                tail
            }
            'f' | 'F' | 'n' | 'g' | 'k' | 'm' | 'M' | 'V' | 'Y' | '$' => escape_name(after).1,
            's' => {
                let sized = after.strip_prefix(['+', '-']).unwrap_or(after);
                match sized.chars().next() {
                    Some('(' | '[') => escape_name(sized).1,
                    _ => sized.trim_start_matches(|c: char| c.is_ascii_digit()),
                }
            }
            // Escapes whose argument is quoted: drawing, motions, widths, marks.
            'N' | 'h' | 'v' | 'w' | 'o' | 'l' | 'L' | 'D' | 'X' | 'Z' | 'b' | 'x' | 'H' | 'S' | 'A' | 'B' | 'C'
            | 'R' => match after.strip_prefix('\'') {
                Some(quoted) => quoted.find('\'').map_or("", |end| &quoted[end + 1..]),
                None => after,
            },
            // Zero-width and joining escapes, italic corrections, a hyphenation point.
            _ => after,
        };
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_read_as_a_reader_sees_them() {
        assert_eq!(
            roff_text(r"\fB\-a\fR, \fB\-\-almost\-all\fR [\fI\,FILE\/\fR]... \(em caf\('e \[u00E9] \*(lqok\*(rq"),
            "-a, --almost-all [FILE]... — café é \u{201c}ok\u{201d}"
        );
        assert_eq!(roff_text(r"\s+2big\s0 \h'|3n'x \f(CWcode\fP\c"), "big x code");
        assert_eq!(roff_text(r#"text \" a comment"#), "text ");
        assert_eq!(roff_text(r"odd \[unclosed \s"), "odd unclosed ");
        let hostile = r"\h'".repeat(50_000) + &r"\[".repeat(50_000);
        let _ = roff_text(&hostile);
    }
}
