//! Wikitext's markup that is not read line by line (templates aside:
//! [`super::wikitext_templates`]): HTML-like tags and comments (read first, as MediaWiki reads
//! them before anything else), links (`[[Page|text]]` shown by their text, categories kept
//! apart), external links, bold and italic marks, magic words and character references. Every
//! step is linear in the text: closing tags and brackets are found by searches that never go
//! over the same text twice, links are matched with a stack and rendered at most
//! [`MAX_LINK_DEPTH`] deep.

use std::collections::HashMap;

use super::character_references::decode_character_references;

/// Links inside links (a file's caption holding links) rendered at most this deep; deeper
/// brackets are kept as text.
const MAX_LINK_DEPTH: usize = 8;
/// How far a tag's closing `>` or an external link's closing `]` is looked for.
const NEAR: usize = 2000;

/// What a page holds once its tags are read: wikitext, and literal blocks between it.
#[derive(Debug, PartialEq)]
pub(super) enum Segment {
    Wikitext(String),
    /// `<pre>`, `<syntaxhighlight>`, `<source>`: shown as written.
    Literal(String),
}

/// What a tag does to the text it holds.
#[derive(Clone, Copy, PartialEq)]
enum TagRule {
    /// Left out with what it holds (`<ref>`, `<references/>`, `<includeonly>`, ...).
    Drop,
    /// A literal block.
    Literal,
    /// Text shown as written, its markup not read (`<nowiki>`, `<math>`).
    Verbatim,
    /// A gallery: each line `File:name.jpg|caption`, read for its caption.
    Gallery,
    /// The tag taken off, what it holds read (`<span>`, `<small>`, `<div>`, ...).
    Strip,
}

fn rule_of(name: &str) -> Option<TagRule> {
    Some(match name {
        "ref" | "references" | "templatedata" | "templatestyles" | "timeline" | "graph" | "mapframe" | "maplink"
        | "score" | "categorytree" | "inputbox" | "imagemap" | "charinsert" | "includeonly" | "indicator"
        | "section" | "hiero" | "langconvert" | "talkpage" | "dynamicpagelist" | "references-list" => TagRule::Drop,
        "pre" | "syntaxhighlight" | "source" => TagRule::Literal,
        "nowiki" | "math" | "chem" | "ce" => TagRule::Verbatim,
        "gallery" | "packed-hover" => TagRule::Gallery,
        "span" | "div" | "small" | "big" | "sup" | "sub" | "center" | "u" | "s" | "del" | "ins" | "code" | "b"
        | "i" | "em" | "strong" | "blockquote" | "abbr" | "font" | "tt" | "var" | "kbd" | "q" | "cite" | "dfn"
        | "p" | "br" | "hr" | "wbr" | "table" | "tr" | "td" | "th" | "caption" | "tbody" | "thead" | "ul" | "ol"
        | "li" | "dl" | "dt" | "dd" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "noinclude" | "onlyinclude"
        | "poem" | "strike" | "mark" | "bdi" | "bdo" | "ruby" | "rb" | "rp" | "rt" | "time" | "data" | "samp"
        | "translate" | "tvar" | "languages" => TagRule::Strip,
        _ => return None,
    })
}

/// `text` split where its literal blocks are, comments and the tags of [`rule_of`] read:
/// text held by a dropped tag left out, verbatim text protected from the markup read after
/// (see [`protect`]), other tags taken off. A tag that does not close is taken off alone.
pub(super) fn segments(text: &str) -> Vec<Segment> {
    let lower = text.to_ascii_lowercase();
    let mut closers = ClosingTags::default();
    let mut tag_ends = NextByte::new(b'>');
    let mut segments = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(offset) = text[i..].find('<') {
        let at = i + offset;
        out.push_str(&text[i..at]);
        if lower[at..].starts_with("<!--") {
            i = lower[at + 4..].find("-->").map_or(text.len(), |p| at + 4 + p + 3);
            continue;
        }
        let Some(tag) = Tag::at(text, &lower, at, &mut tag_ends) else {
            out.push('<');
            i = at + 1;
            continue;
        };
        let rule = rule_of(&tag.name).expect("a known tag");
        if tag.closing || tag.self_closing || rule == TagRule::Strip {
            if matches!(
                tag.name.as_str(),
                "br" | "p" | "div" | "li" | "tr" | "td" | "th" | "dd" | "dt"
            ) {
                out.push(' ');
            }
            i = tag.end;
            continue;
        }
        let Some((inner_end, after)) = closers.after(&lower, &tag.name, tag.end) else {
            i = tag.end; // an opening tag that never closes: taken off alone
            continue;
        };
        let inner = &text[tag.end..inner_end];
        match rule {
            TagRule::Drop | TagRule::Strip => {}
            TagRule::Verbatim => out.push_str(&protect(inner)),
            TagRule::Gallery => {
                for line in inner.lines() {
                    let caption = line.split_once('|').and_then(|(_, options)| options.rsplit('|').next());
                    if let Some(caption) = caption.filter(|c| !is_image_option(c)) {
                        out.push_str(&format!("\n{}\n", caption.trim()));
                    }
                }
            }
            TagRule::Literal => {
                segments.push(Segment::Wikitext(std::mem::take(&mut out)));
                segments.push(Segment::Literal(decode_character_references(inner.trim_matches('\n'))));
            }
        }
        i = after;
    }
    out.push_str(&text[i..]);
    segments.push(Segment::Wikitext(out));
    segments.retain(|s| !matches!(s, Segment::Wikitext(t) | Segment::Literal(t) if t.trim().is_empty()));
    segments
}

/// A tag of [`rule_of`] at a `<`.
struct Tag {
    name: String,
    closing: bool,
    self_closing: bool,
    /// The position after its `>`.
    end: usize,
}

impl Tag {
    fn at(text: &str, lower: &str, at: usize, tag_ends: &mut NextByte) -> Option<Tag> {
        let rest = &lower[at + 1..];
        let closing = rest.starts_with('/');
        let name_start = at + 1 + usize::from(closing);
        let name_len = lower[name_start..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
            .count();
        let name = &lower[name_start..name_start + name_len];
        rule_of(name)?;
        let after_name = lower[name_start + name_len..].chars().next()?;
        if !(after_name.is_whitespace() || after_name == '>' || after_name == '/') {
            return None;
        }
        let gt = tag_ends
            .at_or_after(text, name_start + name_len)
            .filter(|gt| gt - at <= NEAR)?;
        Some(Tag {
            name: name.to_string(),
            closing,
            self_closing: text[..gt].ends_with('/') || matches!(name, "br" | "hr" | "wbr"),
            end: gt + 1,
        })
    }
}

/// Where the next `byte` is at or after a position: positions asked for only grow, so the one
/// found is kept while it lies ahead, and none found means none after.
struct NextByte {
    byte: u8,
    found: Option<Option<usize>>,
}

impl NextByte {
    fn new(byte: u8) -> Self {
        Self { byte, found: None }
    }

    fn at_or_after(&mut self, text: &str, from: usize) -> Option<usize> {
        match self.found {
            Some(None) => return None,
            Some(Some(p)) if p >= from => return Some(p),
            _ => {}
        }
        let found = text.as_bytes()[from..]
            .iter()
            .position(|b| *b == self.byte)
            .map(|p| from + p);
        self.found = Some(found);
        found
    }
}

/// Where the next `</name` is, for each tag name: the scan only moves forward, so a closer
/// found is kept while it lies ahead, and none found means none after.
#[derive(Default)]
struct ClosingTags {
    found: HashMap<String, Option<usize>>,
}

impl ClosingTags {
    /// The start of the first `</name ...>` at or after `from`, and the position after it.
    fn after(&mut self, lower: &str, name: &str, from: usize) -> Option<(usize, usize)> {
        let cached = self.found.get(name).copied();
        let start = match cached {
            Some(None) => return None,
            Some(Some(p)) if p >= from => p,
            _ => {
                let needle = format!("</{name}");
                let mut at = from;
                let found = loop {
                    let Some(p) = lower[at..].find(&needle).map(|p| at + p) else {
                        break None;
                    };
                    let next = lower[p + needle.len()..].chars().next();
                    if next.is_none_or(|c| c == '>' || c.is_whitespace()) {
                        break Some(p);
                    }
                    at = p + needle.len();
                };
                self.found.insert(name.to_string(), found);
                found?
            }
        };
        let gt = lower[start..].find('>').map_or(lower.len(), |p| start + p + 1);
        Some((start, gt))
    }
}

/// The characters wikitext's markup is made of, written as private-use characters so that
/// verbatim text passes the markup read after it unread; [`unprotect`] writes them back.
const MARKUP_CHARS: &str = "[]{}|'=*#:;<>!~_&";
const PROTECTED_BASE: u32 = 0xF0000;

fn protect(text: &str) -> String {
    text.chars()
        .map(|c| match MARKUP_CHARS.find(c) {
            Some(i) => char::from_u32(PROTECTED_BASE + i as u32).expect("a private-use character"),
            None => c,
        })
        .collect()
}

fn unprotect(text: &str) -> String {
    text.chars()
        .map(|c| {
            let index = (c as u32).wrapping_sub(PROTECTED_BASE) as usize;
            MARKUP_CHARS.as_bytes().get(index).map_or(c, |b| *b as char)
        })
        .collect()
}

/// The namespace names a wiki's links use, lower case: its files' (`File:`, `Image:`, and
/// their names in the wiki's language) and its categories'.
#[derive(Debug, Clone)]
pub(super) struct LinkNames {
    pub files: Vec<String>,
    pub categories: Vec<String>,
}

/// The file namespace's names on the largest wikis (English and its aliases, German, French,
/// Spanish, Portuguese, Dutch, Polish, Russian, Japanese, Chinese, Swedish), for a `.wiki`
/// file, which does not say which wiki it comes from; a dump names its own.
const FILE_NAMESPACES: [&str; 18] = [
    "file",
    "image",
    "media",
    "datei",
    "bild",
    "fichier",
    "archivo",
    "imagen",
    "ficheiro",
    "arquivo",
    "bestand",
    "plik",
    "файл",
    "изображение",
    "ファイル",
    "画像",
    "文件",
    "fil",
];
/// The category namespace's names on the same wikis.
const CATEGORY_NAMESPACES: [&str; 12] = [
    "category",
    "kategorie",
    "catégorie",
    "categoría",
    "categoria",
    "categorie",
    "kategoria",
    "категория",
    "カテゴリ",
    "分类",
    "分類",
    "kategori",
];

impl Default for LinkNames {
    fn default() -> Self {
        Self {
            files: FILE_NAMESPACES.iter().map(|n| n.to_string()).collect(),
            categories: CATEGORY_NAMESPACES.iter().map(|n| n.to_string()).collect(),
        }
    }
}

/// A line's (a paragraph's, a heading's, a cell's) inline markup read: links shown by their
/// text (a category link added to `categories`, a file by its caption), external links by
/// their label, bold and italic marks, magic words and signatures taken off, character
/// references decoded.
pub(super) fn inline(text: &str, names: &LinkNames, categories: &mut Vec<String>) -> String {
    let linked = links(text, names, categories);
    let mut out = String::with_capacity(linked.len());
    let mut rest = linked.as_str();
    while let Some(p) = rest.find(['\'', '_', '~']) {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        let c = rest.as_bytes()[0];
        let run = rest.bytes().take_while(|b| *b == c).count();
        match c {
            b'\'' if run == 4 => out.push('\''),
            b'\'' if run >= 2 => {}
            b'~' if (3..=5).contains(&run) => {}
            b'_' if run == 2 => match magic_word_end(&rest[2..]) {
                Some(end) => {
                    rest = &rest[2 + end..];
                    continue;
                }
                None => out.push_str("__"),
            },
            _ => out.push_str(&rest[..run]),
        }
        rest = &rest[run..];
    }
    out.push_str(rest);
    unprotect(&decode_character_references(&out))
}

/// The length of a magic word's name and closing `__` (`TOC__` after a `__`), if one starts here.
fn magic_word_end(text: &str) -> Option<usize> {
    let name_len: usize = text
        .chars()
        .take_while(|c| c.is_uppercase() || c.is_numeric())
        .map(char::len_utf8)
        .sum();
    (name_len > 0 && text[name_len..].starts_with("__")).then_some(name_len + 2)
}

/// Links read: `[[...]]` (see [`link_text`]), pairs found with a stack and rendered as they
/// close, so a caption's links are read before the file link holding them; `[url label]`.
fn links(text: &str, names: &LinkNames, categories: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    // Where each open `[[`'s text starts in `out` (its `[[` written before it).
    let mut open: Vec<usize> = Vec::new();
    let (mut closes, mut line_ends) = (NextByte::new(b']'), NextByte::new(b'\n'));
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with("[[") && open.len() < MAX_LINK_DEPTH {
            out.push_str("[[");
            open.push(out.len());
            i += 2;
        } else if rest.starts_with("]]") && !open.is_empty() {
            let start = open.pop().expect("an open link");
            let inner = out.split_off(start);
            out.truncate(start - 2);
            out.push_str(&link_text(&inner, names, categories));
            i += 2;
        } else if let Some((label, next)) = external_link(text, i, &mut closes, &mut line_ends) {
            out.push_str(label);
            i = next;
        } else {
            let c = rest.chars().next().expect("within the text");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `[https://example.org the label]` at `i`: its label (none for a bare `[url]`) and the
/// position after it.
fn external_link<'t>(
    text: &'t str,
    i: usize,
    closes: &mut NextByte,
    line_ends: &mut NextByte,
) -> Option<(&'t str, usize)> {
    const SCHEMES: [&str; 9] = [
        "http://", "https://", "ftp://", "ftps://", "sftp://", "//", "mailto:", "irc://", "news:",
    ];
    let rest = text[i..].strip_prefix('[')?;
    let head: Vec<u8> = rest.bytes().take(8).map(|b| b.to_ascii_lowercase()).collect();
    if !SCHEMES.iter().any(|s| head.starts_with(s.as_bytes())) {
        return None;
    }
    let close = closes.at_or_after(text, i + 1)?;
    if line_ends.at_or_after(text, i + 1).is_some_and(|end| end < close) || close - i > NEAR {
        return None;
    }
    let inside = &text[i + 1..close];
    let label = inside
        .split_once(char::is_whitespace)
        .map_or("", |(_, label)| label.trim());
    Some((label, close + 1))
}

/// Options of a file link that are not its caption.
fn is_image_option(part: &str) -> bool {
    let part = part.trim().to_ascii_lowercase();
    const WORDS: [&str; 26] = [
        "thumb",
        "thumbnail",
        "frame",
        "framed",
        "frameless",
        "border",
        "left",
        "right",
        "center",
        "centre",
        "none",
        "upright",
        "baseline",
        "middle",
        "sub",
        "super",
        "top",
        "bottom",
        "mini",
        "miniatur",
        "hochkant",
        "links",
        "rechts",
        "vignette",
        "gauche",
        "droite",
    ];
    const KEYED: [&str; 9] = [
        "alt=",
        "link=",
        "upright=",
        "page=",
        "class=",
        "lang=",
        "thumb=",
        "lossy=",
        "hochkant=",
    ];
    WORDS.contains(&part.as_str())
        || KEYED.iter().any(|k| part.starts_with(k))
        || part
            .strip_suffix("px")
            .is_some_and(|size| size.bytes().all(|b| b.is_ascii_digit() || b == b'x'))
        || part == "text-top"
        || part == "text-bottom"
}

/// Whether `prefix` names a language, as an interlanguage link's does (`de`, `zh-yue`, `simple`).
fn is_language_code(prefix: &str) -> bool {
    let mut parts = prefix.split('-');
    let first = parts.next().unwrap_or_default();
    prefix == "simple"
        || ((2..=3).contains(&first.len())
            && first.bytes().all(|b| b.is_ascii_lowercase())
            && parts.all(|p| !p.is_empty() && p.len() <= 8 && p.bytes().all(|b| b.is_ascii_lowercase())))
}

/// What a link `[[inner]]` shows: its text after the first `|`, else its target; a file by
/// its caption (none without one), a category or interlanguage link nothing (a category's
/// name added to `categories`). A link with a leading `:` is shown as a link.
fn link_text(inner: &str, names: &LinkNames, categories: &mut Vec<String>) -> String {
    let (target, text) = match inner.split_once('|') {
        Some((target, text)) => (target.trim(), Some(text)),
        None => (inner.trim(), None),
    };
    if let Some(shown) = target.strip_prefix(':') {
        return text
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(shown)
            .trim()
            .to_string();
    }
    if let Some((prefix, name)) = target.split_once(':') {
        let prefix = prefix.trim().to_lowercase();
        if names.files.contains(&prefix) {
            let caption = text.and_then(|t| t.rsplit('|').next()).filter(|c| !is_image_option(c));
            return caption.map(|c| c.trim().to_string()).unwrap_or_default();
        }
        if names.categories.contains(&prefix) {
            let name = name.trim();
            if !name.is_empty() && !categories.iter().any(|c| c == name) {
                categories.push(name.to_string());
            }
            return String::new();
        }
        if text.is_none() && is_language_code(&prefix) {
            return String::new();
        }
    }
    match text.map(str::trim) {
        Some("") => pipe_trick(target),
        Some(text) => text.to_string(),
        None => target.to_string(),
    }
}

/// What `[[target|]]` shows: the target without its namespace and a trailing `(...)`.
fn pipe_trick(target: &str) -> String {
    let name = target.split_once(':').map_or(target, |(_, name)| name);
    let name = match name.rfind(" (") {
        Some(p) if name.ends_with(')') => &name[..p],
        _ => name,
    };
    name.split_once(',')
        .map_or(name, |(before, _)| before)
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::wikitext_templates::without_templates;

    fn read(text: &str) -> (String, Vec<String>) {
        let mut categories = Vec::new();
        let shown = inline(&without_templates(text), &LinkNames::default(), &mut categories);
        (shown, categories)
    }

    #[test]
    fn links_show_their_text_and_categories_are_kept_apart() {
        let (shown, categories) = read(
            "'''Quarry''' is a [[search engine|search]] [[appliance]]s tool{{cite web|url=x|title={{nested}}}} \
             ([[Help:Contents|]], [[Paris (France)|]], [[:Category:Tools]]). \
             [[File:Logo.png|thumb|200px|The [[logo]] of ''quarry'']][[File:Bare.png|thumb]] \
             [https://example.org the site] [https://example.org] [[de:Quarry]] [[wikt:quarry|quarry]]\
             [[Category:Search engines|Q]][[Category:Rust software]]__NOTOC__ &mdash; caf&eacute; &#x263A; ~~~~",
        );
        assert_eq!(
            shown,
            "Quarry is a search appliances tool (Contents, Paris, Category:Tools). The logo of quarry \
             the site   quarry — café ☺ "
        );
        assert_eq!(categories, ["Search engines", "Rust software"]);
        // A German page's file and category links, without a dump to name its namespaces.
        let (shown, categories) =
            read("[[Datei:Bruch.jpg|mini|hochkant=1.3|Ein [[Steinbruch]]]] [[Kategorie:Bergbau]]");
        assert_eq!(
            (shown.as_str(), categories.as_slice()),
            ("Ein Steinbruch ", ["Bergbau".to_string()].as_slice())
        );
    }

    #[test]
    fn tags_are_read_before_the_markup() {
        let text = "A<ref name=\"a\">{{cite|x}}</ref> b<ref name=\"a\"/> <!-- hidden [[x]] -->\
                    <nowiki>[[not a link]] ''kept''</nowiki> <span style=\"x\">shown</span> <math>a^{2}</math>\n\
                    <syntaxhighlight lang=\"rust\">\nfn main() {}\n</syntaxhighlight>\nafter<br/>line\
                    <gallery>\nFile:A.jpg|alt=A quay|First caption\nFile:B.jpg\n</gallery><references />";
        let segments = segments(text);
        let Segment::Wikitext(first) = &segments[0] else {
            panic!("{segments:?}")
        };
        let (shown, _) = read(first);
        assert_eq!(shown, "A b [[not a link]] ''kept'' shown a^{2}\n");
        assert_eq!(segments[1], Segment::Literal("fn main() {}".into()));
        let Segment::Wikitext(last) = &segments[2] else {
            panic!("{segments:?}")
        };
        assert_eq!(read(last).0, "\nafter line\nFirst caption\n");
        // An unclosed tag is taken off alone; an unknown one is text.
        assert_eq!(segments_text("a <ref>b and a < c <T> d"), "a b and a < c <T> d");
        assert_eq!(segments_text("x <!-- never closed"), "x ");
    }

    fn segments_text(text: &str) -> String {
        match segments(text).as_slice() {
            [Segment::Wikitext(t)] => t.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hostile_nesting_and_unclosed_markup_take_linear_time() {
        let started = std::time::Instant::now();
        let n = 100_000;
        let deep = format!("{}x{}", "[[".repeat(n), "]]".repeat(n));
        let (shown, _) = read(&deep);
        assert!(shown.len() < deep.len(), "{}", shown.len());
        let unclosed = "[[a ".repeat(n) + &"{{b ".repeat(n) + &"<ref>c ".repeat(n) + &"[http://x ".repeat(n);
        let segments = segments(&unclosed);
        assert_eq!(segments.len(), 1);
        let _ = read(&unclosed);
        let tags = "<nowiki>".repeat(n) + &"<pre>".repeat(n);
        let _ = super::segments(&tags);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
