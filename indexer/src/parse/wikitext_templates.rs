//! Wikitext's templates and parser functions (`{{name|arg|key=value}}`, however nested): an
//! infobox (`{{Infobox ...}}`) shown as a table of its filled fields, the few templates whose
//! text a page shows in its sentence (`{{lang|fr|texte}}`, `{{nowrap|...}}`, `{{convert|5|km}}`,
//! `{{nihongo|Tokyo|東京}}`) shown by that text, `{{!}}` as the `|` it stands for, and the rest
//! (citations, navigation boxes, maintenance tags, `{{DEFAULTSORT:...}}`) left out. A wiki
//! defines its templates in pages a dump may not hold, so none is expanded. Pairs are matched
//! with a stack; an infobox's own templates are left out in one more pass, so the time is
//! linear in the text. Braces that do not pair are kept.

/// `text` with its templates read (see the module's documentation).
pub(super) fn without_templates(text: &str) -> String {
    let pairs = template_pairs(text);
    let mut out = String::with_capacity(text.len());
    let mut kept_to = 0;
    for (index, &(start, end)) in pairs.iter().enumerate() {
        if start < kept_to {
            continue; // inside the pair before, which is shown or left out whole
        }
        out.push_str(&text[kept_to..start]);
        let inner = &text[start + 2..end - 2];
        let holds_templates = pairs.get(index + 1).is_some_and(|&(next, _)| next < end);
        out.push_str(&shown(inner, holds_templates));
        kept_to = end;
    }
    out.push_str(&text[kept_to..]);
    out
}

/// The `{{`..`}}` pairs of `text` as (start, end) byte ranges, sorted by start (pairs nest, so a
/// pair's nested ones follow it, before the next one outside it).
fn template_pairs(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut open = Vec::new();
    let mut pairs = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        match &bytes[i..i + 2] {
            b"{{" => {
                open.push(i);
                i += 2;
            }
            b"}}" if !open.is_empty() => {
                pairs.push((open.pop().expect("an open pair"), i + 2));
                i += 2;
            }
            _ => i += 1,
        }
    }
    pairs.sort_unstable();
    pairs
}

/// `text` without any template (an infobox's fields, read once more).
fn without_any_template(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut kept_to = 0;
    for (start, end) in template_pairs(text) {
        if start >= kept_to {
            out.push_str(&text[kept_to..start]);
            kept_to = end;
        }
    }
    out.push_str(&text[kept_to..]);
    out
}

/// What a template `{{inner}}` shows.
fn shown(inner: &str, holds_templates: bool) -> String {
    match inner.trim() {
        "!" => return "|".into(),
        "!!" => return "||".into(),
        "=" => return "=".into(),
        _ => {}
    }
    let name = inner
        .split('|')
        .next()
        .unwrap_or_default()
        .trim()
        .replace('_', " ")
        .to_lowercase();
    if name.starts_with("infobox") {
        return infobox_table(&without_any_template(inner));
    }
    if holds_templates {
        return String::new();
    }
    let args = arguments(inner);
    let positional: Vec<&str> = args.iter().skip(1).filter(|a| !is_named(a)).map(|a| a.trim()).collect();
    let at = |i: usize| positional.get(i).copied().unwrap_or_default().to_string();
    match name.as_str() {
        "lang" | "transl" | "resize" => positional.last().copied().unwrap_or_default().to_string(),
        "nowrap" | "nobr" | "small" | "smaller" | "big" | "larger" | "em" | "strong" | "mvar" | "var" | "code"
        | "kbd" | "samp" => at(0),
        "nihongo" | "nihongo2" => match (at(0), at(1)) {
            (english, japanese) if japanese.is_empty() => english,
            (english, japanese) if english.is_empty() => japanese,
            (english, japanese) => format!("{english} ({japanese})"),
        },
        "convert" | "cvt" => measure(&positional),
        name if name.starts_with("lang-") => at(0),
        _ => String::new(),
    }
}

/// Whether a template's argument is named (`key=value`, the `=` before any link).
fn is_named(argument: &str) -> bool {
    let equals = argument.find('=');
    equals.is_some_and(|e| argument.find("[[").is_none_or(|link| e < link))
}

/// A template's arguments, its name first: split at each `|` outside a link.
fn arguments(inner: &str) -> Vec<&str> {
    let bytes = inner.as_bytes();
    let mut args = Vec::new();
    let (mut depth, mut from, mut i) = (0usize, 0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'[' if bytes.get(i + 1) == Some(&b'[') => {
                depth += 1;
                i += 1;
            }
            b']' if bytes.get(i + 1) == Some(&b']') && depth > 0 => {
                depth -= 1;
                i += 1;
            }
            b'|' if depth == 0 => {
                args.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    args.push(&inner[from..]);
    args
}

/// `{{convert|5|to|10|km|mi}}`'s measure as written: the numbers (and the words of a range
/// between them), then the unit.
fn measure(positional: &[&str]) -> String {
    let is_number = |a: &str| !a.is_empty() && a.chars().all(|c| c.is_ascii_digit() || ".,-+−/".contains(c));
    let mut shown = Vec::new();
    for argument in positional {
        let range_word = ["to", "-", "–", "and", "or", "x", "by", "&"].contains(argument);
        shown.push(*argument);
        if !is_number(argument) && !range_word {
            break;
        }
    }
    shown.join(" ")
}

/// An infobox's filled fields (`| population = 14,736`) as a wikitext table the line reader
/// reads as a table block: a row `field | value` each, images and empty fields left out.
fn infobox_table(inner: &str) -> String {
    let mut rows = String::new();
    for argument in arguments(inner).into_iter().skip(1).filter(|a| is_named(a)) {
        let (key, value) = argument.split_once('=').expect("a named argument");
        let value = value
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("||", "|");
        let is_image = [".jpg", ".jpeg", ".png", ".svg", ".gif", ".tif", ".webp"]
            .iter()
            .any(|ext| value.to_lowercase().ends_with(ext));
        if value.is_empty() || is_image {
            continue;
        }
        rows.push_str(&format!("|-\n| {} || {value}\n", key.trim().replace('_', " ")));
    }
    match rows.is_empty() {
        true => String::new(),
        false => format!("\n{{|\n{rows}|}}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_nest_and_unpaired_braces_stay() {
        assert_eq!(without_templates("a {{x|{{y}}|z}} b {{ c }} d"), "a  b  d");
        assert_eq!(without_templates("{| a {{!}} b}}"), "{| a | b}}");
        assert_eq!(without_templates("open {{ never"), "open {{ never");
        let n = 100_000;
        assert_eq!(without_templates(&("{{".repeat(n) + &"}}".repeat(n))), "");
    }

    #[test]
    fn infoboxes_are_tables_and_a_few_templates_show_their_text() {
        let text = "{{Infobox UK place\n|static_image_name = Bodmin.jpg\n|official_name = Bodmin\n\
                    |population = 14,736{{cite|x}}\n|civil_parish = [[Bodmin|Bodmin parish]]\n|map_type =\n}}\n\
                    '''Bodmin''' ({{lang-kw|Bosvena}}) lies {{convert|5|to|10|km|mi}} from {{nowrap|Bodmin Moor}} \
                    ({{nihongo|Tokyo|東京|Tōkyō}}, {{lang|fr|la ville}}){{cn|date=May 2020}}.";
        assert_eq!(
            without_templates(text),
            "\n{|\n|-\n| official name || Bodmin\n|-\n| population || 14,736\n|-\n\
             | civil parish || [[Bodmin|Bodmin parish]]\n|}\n\n\
             '''Bodmin''' (Bosvena) lies 5 to 10 km from Bodmin Moor (Tokyo (東京), la ville)."
        );
    }
}
