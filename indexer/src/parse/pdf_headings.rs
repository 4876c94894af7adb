//! A PDF's blocks with their heading paths. From the outline when the file has one: each entry's
//! title is looked for among its page's lines, in order (a title wrapped over two lines too); an
//! entry whose title is not drawn on its page applies from where the page's previous heading
//! ended (the page's top for the first). Without an outline, from font sizes: the body size is
//! the one most characters are drawn at, and a short line drawn at least [`HEADING_SCALE`] times
//! larger is a heading, the larger sizes the outer levels. Heading lines become blocks of their
//! own, inside their own path, as a Markdown heading does.

use super::pdf_outline::OutlineEntry;
use super::pdf_text::Line;
use super::Block;

/// How much larger than the body a line must be drawn to be a heading (typesetting's usual
/// steps: 10 pt body, 12 pt and up for headings).
pub const HEADING_SCALE: f32 = 1.2;
/// The most words a heading line holds.
const MAX_HEADING_WORDS: usize = 15;
/// The most characters a heading holds.
const MAX_HEADING_CHARS: usize = 150;
/// Heading levels told apart by size; smaller sizes share the last.
const MAX_LEVELS: usize = 6;

/// A page's lines.
pub struct PageLines {
    /// 1-based.
    pub page: u32,
    pub lines: Vec<Line>,
}

#[cfg(test)]
impl PageLines {
    /// Page `page` of `lines`, each its font size and text.
    pub fn of(page: u32, lines: &[(f32, &str)]) -> Self {
        let lines = lines
            .iter()
            .map(|&(size, text)| Line {
                text: text.into(),
                size,
            })
            .collect();
        Self { page, lines }
    }
}

/// A heading on a page: it starts at `line`, and is drawn on `span` lines from there (0: not
/// drawn on the page, it only applies from `line`).
#[derive(Debug, PartialEq)]
struct Marker {
    line: usize,
    span: usize,
    level: usize,
    title: String,
}

/// The blocks of `pages`, in order, a text block per run of lines between headings.
pub fn blocks(pages: &[PageLines], outline: &[OutlineEntry]) -> Vec<Block> {
    let markers = match outline.is_empty() {
        true => markers_by_font_size(pages),
        false => markers_by_outline(pages, outline),
    };
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut blocks = Vec::new();
    for (page, markers) in pages.iter().zip(markers) {
        let titles = |path: &[(usize, String)]| path.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>();
        let push = |lines: &[Line], path: &[(usize, String)], blocks: &mut Vec<Block>| {
            let text = lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n");
            let text = text.trim();
            if !text.is_empty() {
                blocks.push(Block {
                    text: text.to_string(),
                    page: Some(page.page),
                    heading_path: titles(path),
                    ..Default::default()
                });
            }
        };
        let mut cursor = 0;
        for marker in markers {
            let start = marker.line.max(cursor);
            push(&page.lines[cursor..start], &path, &mut blocks);
            path.retain(|(level, _)| *level < marker.level);
            path.push((marker.level, marker.title));
            let end = (start + marker.span).min(page.lines.len());
            if marker.span > 0 {
                let heading = page.lines[start..end]
                    .iter()
                    .map(|l| l.text.trim())
                    .collect::<Vec<_>>()
                    .join(" ");
                push(
                    &[Line {
                        text: heading,
                        size: 0.0,
                    }],
                    &path,
                    &mut blocks,
                );
            }
            cursor = end;
        }
        push(&page.lines[cursor..], &path, &mut blocks);
    }
    blocks
}

/// Letters and digits, lower-cased: how a title and a line are compared.
fn comparable(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn markers_by_outline(pages: &[PageLines], outline: &[OutlineEntry]) -> Vec<Vec<Marker>> {
    pages
        .iter()
        .map(|page| {
            let lines: Vec<String> = page.lines.iter().map(|l| comparable(&l.text)).collect();
            let mut cursor = 0;
            let mut markers = Vec::new();
            for entry in outline.iter().filter(|e| e.page == page.page) {
                let wanted = comparable(&entry.title);
                let drawn = (!wanted.is_empty())
                    .then(|| {
                        (cursor..lines.len()).find_map(|i| {
                            if lines[i] == wanted {
                                return Some((i, 1));
                            }
                            let two = lines.get(i + 1).map(|next| format!("{}{next}", lines[i]));
                            (!lines[i].is_empty() && two.as_deref() == Some(wanted.as_str())).then_some((i, 2))
                        })
                    })
                    .flatten();
                let (line, span) = drawn.unwrap_or((cursor, 0));
                markers.push(Marker {
                    line,
                    span,
                    level: entry.level,
                    title: entry.title.clone(),
                });
                cursor = line + span;
            }
            markers
        })
        .collect()
}

/// Could `line` be a heading, by its text alone?
fn heading_shaped(line: &Line) -> bool {
    let text = line.text.trim();
    !text.is_empty()
        && text.chars().count() <= MAX_HEADING_CHARS
        && text.split_whitespace().count() <= MAX_HEADING_WORDS
        && text.chars().any(char::is_alphabetic)
        && !text.ends_with([',', ';'])
}

fn markers_by_font_size(pages: &[PageLines]) -> Vec<Vec<Marker>> {
    let none = || pages.iter().map(|_| Vec::new()).collect();
    // Characters by size: the body size is the one most are drawn at.
    let mut tally: Vec<(u32, usize)> = Vec::new();
    for line in pages.iter().flat_map(|p| &p.lines) {
        let chars = line.text.chars().filter(|c| !c.is_whitespace()).count();
        if chars == 0 {
            continue;
        }
        match tally.iter_mut().find(|(key, _)| *key == line.size_key()) {
            Some((_, count)) => *count += chars,
            None => tally.push((line.size_key(), chars)),
        }
    }
    let Some(&(body, _)) = tally
        .iter()
        .max_by_key(|(key, count)| (*count, std::cmp::Reverse(*key)))
    else {
        return none();
    };
    let is_heading = |line: &Line| line.size_key() as f32 >= body as f32 * HEADING_SCALE && heading_shaped(line);
    let mut sizes: Vec<u32> = pages
        .iter()
        .flat_map(|p| &p.lines)
        .filter(|l| is_heading(l))
        .map(Line::size_key)
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    if sizes.is_empty() {
        return none();
    }
    let level_of = |key: u32| sizes.iter().position(|&s| s == key).unwrap_or(0).min(MAX_LEVELS - 1) + 1;
    pages
        .iter()
        .map(|page| {
            let mut markers: Vec<Marker> = Vec::new();
            let mut i = 0;
            while i < page.lines.len() {
                let line = &page.lines[i];
                if !is_heading(line) {
                    i += 1;
                    continue;
                }
                // A heading wrapped over lines of the same size is one heading.
                let mut span = 1;
                while page
                    .lines
                    .get(i + span)
                    .is_some_and(|next| next.size_key() == line.size_key() && is_heading(next))
                {
                    span += 1;
                }
                let title = page.lines[i..i + span]
                    .iter()
                    .map(|l| l.text.trim())
                    .collect::<Vec<_>>()
                    .join(" ");
                markers.push(Marker {
                    line: i,
                    span,
                    level: level_of(line.size_key()),
                    title: title.chars().take(MAX_HEADING_CHARS * 2).collect(),
                });
                i += span;
            }
            markers
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(blocks: &[Block]) -> Vec<(u32, &str, Vec<&str>)> {
        blocks
            .iter()
            .map(|b| {
                (
                    b.page.unwrap(),
                    b.text.as_str(),
                    b.heading_path.iter().map(String::as_str).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn font_sizes_make_nested_headings_across_pages() {
        let pages = [
            PageLines::of(
                1,
                &[
                    (20.0, "Annual Report"),
                    (0.0, ""),
                    (11.0, "Sales grew."),
                    (15.0, "Revenue"),
                    (11.0, "Up ten percent."),
                ],
            ),
            PageLines::of(
                2,
                &[
                    (11.0, "Mostly abroad."),
                    (15.0, "Costs and"),
                    (15.0, "Savings"),
                    (11.0, "Down, as planned."),
                    (11.0, "Page 2"),
                ],
            ),
        ];
        let blocks = blocks(&pages, &[]);
        assert_eq!(
            shown(&blocks),
            [
                (1, "Annual Report", vec!["Annual Report"]),
                (1, "Sales grew.", vec!["Annual Report"]),
                (1, "Revenue", vec!["Annual Report", "Revenue"]),
                (1, "Up ten percent.", vec!["Annual Report", "Revenue"]),
                (2, "Mostly abroad.", vec!["Annual Report", "Revenue"]),
                (2, "Costs and Savings", vec!["Annual Report", "Costs and Savings"]),
                (
                    2,
                    "Down, as planned.\nPage 2",
                    vec!["Annual Report", "Costs and Savings"]
                ),
            ]
        );
    }

    #[test]
    fn one_size_or_long_large_lines_make_no_headings() {
        let uniform = [PageLines::of(1, &[(12.0, "Alpha"), (12.0, "Beta gamma.")])];
        assert_eq!(shown(&blocks(&uniform, &[])), [(1, "Alpha\nBeta gamma.", vec![])]);
        let long = "a large line that runs on and on with far more words than any heading would ever hold here";
        let large_prose = [PageLines::of(
            1,
            &[(18.0, long), (11.0, "Body text."), (11.0, "More body.")],
        )];
        assert!(blocks(&large_prose, &[]).iter().all(|b| b.heading_path.is_empty()));
    }

    #[test]
    fn outline_titles_are_found_on_their_pages() {
        let pages = [
            PageLines::of(
                1,
                &[
                    (12.0, "Preface text."),
                    (12.0, "1. Introduction"),
                    (12.0, "Why this matters."),
                ],
            ),
            PageLines::of(
                2,
                &[
                    (12.0, "More on why."),
                    (12.0, "2. A method in"),
                    (12.0, "two lines"),
                    (12.0, "How it works."),
                ],
            ),
            PageLines::of(3, &[(12.0, "Results text.")]),
        ];
        let entry = |level, title: &str, page| OutlineEntry {
            level,
            title: title.into(),
            page,
        };
        let outline = [
            entry(1, "1. Introduction", 1),
            entry(1, "2. A method in two lines", 2),
            entry(2, "Results (not drawn)", 3),
        ];
        assert_eq!(
            shown(&blocks(&pages, &outline)),
            [
                (1, "Preface text.", vec![]),
                (1, "1. Introduction", vec!["1. Introduction"]),
                (1, "Why this matters.", vec!["1. Introduction"]),
                (2, "More on why.", vec!["1. Introduction"]),
                (2, "2. A method in two lines", vec!["2. A method in two lines"]),
                (2, "How it works.", vec!["2. A method in two lines"]),
                (
                    3,
                    "Results text.",
                    vec!["2. A method in two lines", "Results (not drawn)"]
                ),
            ]
        );
    }
}
