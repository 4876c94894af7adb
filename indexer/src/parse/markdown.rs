//! Markdown (pulldown-cmark): one block per paragraph, list item, code block or table,
//! each with its heading path; front matter `title:` and `tags:` are honoured.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser as MdParser, Tag, TagEnd};

use super::text::decode_raw_text;
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Splits `---\n...\n---` front matter off the top; returns (key/values, body).
fn split_front_matter(text: &str) -> (Vec<(String, String)>, &str) {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (Vec::new(), text);
    };
    let Some(end) = rest.find("\n---") else {
        return (Vec::new(), text);
    };
    let fields = rest[..end]
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect();
    let body = rest[end + 4..].trim_start_matches(['-', '\r', '\n']);
    (fields, body)
}

fn parse_tag_list(value: &str) -> Vec<String> {
    value
        .trim_matches(['[', ']'])
        .split(',')
        .map(|t| t.trim().trim_matches(['"', '\'']).to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn level_index(level: HeadingLevel) -> usize {
    level as usize - 1
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let (front_matter, body) = split_front_matter(&text);
    let mut headings: Vec<(usize, String)> = Vec::new();
    let mut blocks: Vec<Block> = Vec::new();
    let mut current = String::new();
    let mut in_heading: Option<usize> = None;
    let mut in_table = false;
    let mut first_h1: Option<String> = None;
    let path_of = |headings: &[(usize, String)]| headings.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>();

    let flush = |current: &mut String, blocks: &mut Vec<Block>, headings: &[(usize, String)], kind: ContentType| {
        let text = current.trim();
        if !text.is_empty() {
            blocks.push(Block {
                text: text.to_string(),
                heading_path: path_of(headings),
                kind,
                ..Default::default()
            });
        }
        current.clear();
    };

    for event in MdParser::new_ext(body, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                flush(&mut current, &mut blocks, &headings, ContentType::Text);
                in_heading = Some(level_index(level));
            }
            Event::End(TagEnd::Heading(_)) => {
                let level = in_heading.take().unwrap_or(0);
                let title = current.trim().to_string();
                current.clear();
                if level == 0 && first_h1.is_none() {
                    first_h1 = Some(title.clone());
                }
                headings.retain(|(l, _)| *l < level);
                headings.push((level, title.clone()));
                if !title.is_empty() {
                    blocks.push(Block::text(title, &path_of(&headings)));
                }
            }
            Event::Start(Tag::Table(_)) => {
                flush(&mut current, &mut blocks, &headings, ContentType::Text);
                in_table = true;
            }
            Event::End(TagEnd::Table) => {
                flush(&mut current, &mut blocks, &headings, ContentType::Table);
                in_table = false;
            }
            Event::End(TagEnd::TableCell) => current.push_str(" | "),
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => {
                let trimmed = current.trim_end_matches([' ', '|']).len();
                current.truncate(trimmed);
                current.push('\n');
            }
            Event::End(TagEnd::Paragraph | TagEnd::Item | TagEnd::CodeBlock | TagEnd::BlockQuote(_)) if !in_table => {
                flush(&mut current, &mut blocks, &headings, ContentType::Text)
            }
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) | Event::Html(t) => current.push_str(&t),
            Event::SoftBreak | Event::HardBreak => current.push('\n'),
            _ => {}
        }
    }
    flush(&mut current, &mut blocks, &headings, ContentType::Text);

    let field = |name: &str| {
        front_matter
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let title = field("title").or(first_h1).unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_raw(raw, title, blocks);
    document.tags = field("tags").map(|v| parse_tag_list(&v)).unwrap_or_default();
    for (key, value) in front_matter
        .into_iter()
        .filter(|(k, _)| !matches!(k.as_str(), "title" | "tags"))
    {
        document.metadata.insert(key, serde_json::Value::String(value));
    }
    Ok(Parsed::one(document))
}

#[cfg(test)]
mod tests {
    use crate::parse::{raw_for_test, AutoParser, ContentType, Parser};

    const DOC: &str = "---\ntitle: Guide\ntags: [gpu, search]\nowner: ops\n---\n# Intro\n\nFirst para.\n\n## Setup\n\nInstall it.\n\n- item one\n- item two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n# Usage\n\nRun it.\n";

    #[test]
    fn heading_paths_front_matter_and_tables() {
        let doc = AutoParser
            .parse(&raw_for_test("guide.md", DOC))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(doc.title, "Guide");
        assert_eq!(doc.tags, ["gpu", "search"]);
        assert_eq!(doc.metadata["owner"], "ops");
        let find = |t: &str| {
            doc.blocks
                .iter()
                .find(|b| b.text.contains(t))
                .unwrap_or_else(|| panic!("{t} in {:?}", doc.blocks))
        };
        assert_eq!(find("First para").heading_path, ["Intro"]);
        assert_eq!(find("Install").heading_path, ["Intro", "Setup"]);
        assert_eq!(find("item two").heading_path, ["Intro", "Setup"]);
        assert_eq!(find("Run it").heading_path, ["Usage"]);
        let table = find("1 | 2");
        assert_eq!(table.kind, ContentType::Table);
        assert_eq!(table.text, "a | b\n1 | 2");
    }

    #[test]
    fn title_falls_back_to_first_h1_then_file_stem() {
        let doc = AutoParser
            .parse(&raw_for_test("x/notes.md", "# Hello\n\ntext"))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(doc.title, "Hello");
        let doc = AutoParser
            .parse(&raw_for_test("x/notes.md", "just text"))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(doc.title, "notes");
    }
}
