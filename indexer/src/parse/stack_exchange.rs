//! The Stack Exchange data dump's tables (`Posts.xml`, `Comments.xml`, `Users.xml`: a root
//! element `<posts>`, `<comments>` or `<users>` holding one `<row .../>` per record, its
//! fields in attributes): one document per row, named `<file>#post=<Id>` (`#comment=`,
//! `#user=`; `#row=<n>`, its place, where it has no `Id`).
//!
//! - A question's document is its title, then the paragraphs its HTML body shows (read
//!   without an HTML parser, in time linear in it); an answer's is its question's title (the
//!   answer's topic, which its own text may not name), then its body; tag wiki posts and the
//!   rest are titled by their kind. Metadata: `post_type`, `score`, `date` (RFC 3339, UTC as the dump's
//!   dates are), `user_id`, a question's `view_count` and `answer_count`, an answer's
//!   `question_id` and whether it is the `accepted` one; the post's tags (`<a><b>` or
//!   `|a|b|`) are its tags.
//! - A comment's document is its text, titled by the post it is on (`Comment on post 12`);
//!   metadata `post_id`, `score`, `date`, `user_id`.
//! - A user's document is the profile's "about me" text, titled by the user's name;
//!   metadata `reputation`, `date`, `location`, `url`. A row with no text (a user with no
//!   profile text, an empty comment) is no document.
//!
//! The dump's other tables (votes, badges, links, tags, history) hold no text a search
//! needs: each fails as such, saying which table it is (a file that is no document, not
//! fetched again while unchanged). A row whose `Id` an earlier row has fails alone; XML
//! damaged partway keeps the rows before it. A table past the size limit, or compressed, is
//! read as a stream by `stack_exchange_stream.rs`, through this file's rows and documents.

use std::collections::{HashMap, HashSet};

use quick_xml::events::{BytesStart, Event};

use super::bibtex::{item_failure, item_uri};
use super::character_references::decode_character_references;
use super::html_text::html_blocks;
use super::text::collapse_whitespace;
use super::xml::{broken_partway, lenient_reader, next_event};
use super::{Block, Document, ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

/// Attributes read of a row at most (the dump's widest table has 22).
const ROW_ATTRIBUTES: usize = 64;

/// The table a dump file holds, told by its root element.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Table {
    Posts,
    Comments,
    Users,
}

impl Table {
    pub fn of_root(root: &str) -> Option<Self> {
        match root {
            "posts" => Some(Self::Posts),
            "comments" => Some(Self::Comments),
            "users" => Some(Self::Users),
            _ => None,
        }
    }

    /// The kind of item in a row's URI, `#post=<Id>`.
    fn kind(self) -> &'static str {
        match self {
            Self::Posts => "post",
            Self::Comments => "comment",
            Self::Users => "user",
        }
    }
}

/// A row's attributes, by name.
pub(super) type Row = HashMap<String, String>;

struct Rows {
    rows: Vec<Row>,
    damage: Option<(u64, String)>,
}

pub(super) fn row_of(start: &BytesStart) -> Row {
    start
        .attributes()
        .with_checks(false)
        .take(ROW_ATTRIBUTES)
        .flatten()
        .map(|attribute| {
            let name = String::from_utf8_lossy(attribute.key.local_name().as_ref()).into_owned();
            let value = attribute
                .unescape_value()
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| decode_character_references(&String::from_utf8_lossy(&attribute.value)));
            (name, value)
        })
        .collect()
}

/// The `<row>` elements just inside the root, in file order.
fn read_rows(xml: &str) -> Result<Rows, ParseError> {
    let mut reader = lenient_reader(xml);
    let mut read = Rows {
        rows: Vec::new(),
        damage: None,
    };
    let mut depth = 0usize;
    while let Some(event) = next_event(&mut reader, "XML", !read.rows.is_empty(), &mut read.damage)? {
        match event {
            Event::Start(start) => {
                if depth == 1 && start.local_name().as_ref() == b"row" {
                    read.rows.push(row_of(&start));
                }
                depth += 1;
            }
            Event::Empty(start) if depth == 1 && start.local_name().as_ref() == b"row" => {
                read.rows.push(row_of(&start));
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(read)
}

/// The dump's other tables, by their root element, and what they hold: nothing a search needs
/// (the revisions' text is the posts', as they stand, in `Posts.xml`).
const OTHER_TABLES: [(&str, &str); 5] = [
    ("votes", "votes on posts"),
    ("badges", "badges users earned"),
    ("postlinks", "links between posts"),
    ("posthistory", "the posts' earlier revisions"),
    ("tags", "tag names and counts"),
];

/// The root element's name where it is one of the dump's other tables'.
pub(super) fn other_table(root: &str) -> Option<&'static str> {
    OTHER_TABLES
        .iter()
        .find(|(name, _)| *name == root)
        .map(|(name, _)| *name)
}

/// What one of the dump's other tables (`root`) fails as, read whole or as a stream.
pub(super) fn other_table_failure(root: &str) -> ParseError {
    let holds = OTHER_TABLES
        .iter()
        .find(|(name, _)| *name == root)
        .map_or("no text", |(_, holds)| *holds);
    ParseError::NoTextIn(format!(
        "a Stack Exchange {root} table holds {holds}, which is not indexed (the dump's Posts.xml, Comments.xml and Users.xml are)"
    ))
}

/// Whether the root's first child element is a `<row>`, as in a dump's table (`xml` may be
/// its first bytes only).
pub(super) fn first_child_is_a_row(xml: &str) -> bool {
    let mut reader = lenient_reader(xml);
    let mut depth = 0usize;
    loop {
        match reader.read_event() {
            Ok(Event::Start(start)) | Ok(Event::Empty(start)) if depth == 1 => {
                return start.local_name().as_ref() == b"row";
            }
            Ok(Event::Start(_)) => depth += 1,
            Ok(Event::Empty(_)) => {}
            Ok(Event::End(_)) => depth = depth.saturating_sub(1),
            Ok(Event::Eof) | Err(_) => return false,
            Ok(_) => {}
        }
    }
}

/// A dump table's documents, or `None` where the XML holds no `<row>` under its root (other
/// XML whose root has one of the tables' names).
pub(super) fn parse(raw: &RawDocument, xml: &str, root: &str) -> Result<Option<Parsed>, ParseError> {
    let Some(table) = Table::of_root(root) else {
        return match other_table(root) {
            Some(table) if first_child_is_a_row(xml) => Err(other_table_failure(table)),
            _ => Ok(None),
        };
    };
    let read = read_rows(xml)?;
    if read.rows.is_empty() && read.damage.is_none() {
        return Ok(None);
    }
    let questions = Questions::of(table, &read.rows);
    let mut parsed = Parsed::default();
    let mut ids = HashSet::new();
    for (place, row) in read.rows.iter().enumerate() {
        match row_uri(raw, table, row, place, &mut ids) {
            Ok(uri) => parsed.documents.extend(row_document(raw, table, row, uri, &questions)),
            Err(failure) => parsed.failures.push(failure),
        }
    }
    if let Some(damage) = read.damage {
        parsed.failures.push(broken_partway(raw, damage, "the XML", "rows"));
    }
    Ok(Some(parsed))
}

/// A row's URI (`#post=<Id>`, `#row=<place + 1>` without an `Id`), or its failure where an
/// earlier row (its `Id` in `ids`) has its `Id`.
pub(super) fn row_uri(
    raw: &RawDocument,
    table: Table,
    row: &Row,
    place: usize,
    ids: &mut HashSet<String>,
) -> Result<String, ItemFailure> {
    match row.get("Id").map(|id| id.trim()).filter(|id| !id.is_empty()) {
        Some(id) if !ids.insert(id.to_string()) => {
            let reason = "an earlier row of the table has this Id too; the first is kept";
            Err(item_failure(raw, table.kind(), id, reason))
        }
        Some(id) => Ok(item_uri(raw, table.kind(), id)),
        None => Ok(format!("{}#row={}", raw.uri, place + 1)),
    }
}

/// A row's document, where it holds text.
pub(super) fn row_document(
    raw: &RawDocument,
    table: Table,
    row: &Row,
    uri: String,
    questions: &Questions,
) -> Option<Document> {
    match table {
        Table::Posts => post_document(raw, row, uri, questions),
        Table::Comments => comment_document(raw, row, uri),
        Table::Users => user_document(raw, row, uri),
    }
}

/// What an answer takes from its question: its title and which answer it accepted.
#[derive(Default)]
pub(super) struct Questions {
    by_id: HashMap<String, (String, Option<String>)>,
}

impl Questions {
    fn of(table: Table, rows: &[Row]) -> Self {
        let mut questions = Self::default();
        if table == Table::Posts {
            rows.iter().for_each(|row| questions.add(row));
        }
        questions
    }

    /// Keeps `row`'s title and accepted answer where it is a question (the first row of an
    /// `Id` kept).
    pub fn add(&mut self, row: &Row) {
        if field(row, "PostTypeId") != Some("1") {
            return;
        }
        if let (Some(id), Some(title)) = (field(row, "Id"), field(row, "Title")) {
            let accepted = field(row, "AcceptedAnswerId").map(str::to_string);
            self.by_id
                .entry(id.to_string())
                .or_insert_with(|| (title.to_string(), accepted));
        }
    }
}

/// A row's attribute, trimmed, if it is there and not empty.
fn field<'a>(row: &'a Row, name: &str) -> Option<&'a str> {
    row.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// What a post is, by its `PostTypeId`.
fn post_type(id: &str) -> String {
    match id {
        "1" => "question",
        "2" => "answer",
        "3" => "orphaned tag wiki",
        "4" => "tag wiki excerpt",
        "5" => "tag wiki",
        "6" => "moderator nomination",
        "7" => "wiki placeholder",
        "8" => "privilege wiki",
        other => return format!("post type {other}"),
    }
    .to_string()
}

/// A post's tags, written `<a><b>` (older dumps) or `|a|b|`.
fn tags_of(tags: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in tags.split(['<', '>', '|']).map(str::trim).filter(|t| !t.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// The dump's dates (UTC, written without a zone) as RFC 3339, or as written.
fn dump_date(date: &str) -> String {
    chrono::NaiveDateTime::parse_from_str(date, "%Y-%m-%dT%H:%M:%S%.f")
        .map(|d| d.and_utc().to_rfc3339())
        .unwrap_or_else(|_| date.to_string())
}

/// A field read as a number where it is one, else as written.
fn number_or_text(value: &str) -> serde_json::Value {
    value
        .parse::<i64>()
        .map(serde_json::Value::from)
        .unwrap_or_else(|_| value.into())
}

/// Puts the row's fields named in `names` into `document`'s metadata under their keys: the
/// dates as RFC 3339, numbers as numbers.
fn copy_fields(row: &Row, document: &mut Document, names: &[(&str, &str)]) {
    for (name, key) in names {
        if let Some(value) = field(row, name) {
            let value = match *key {
                "date" => dump_date(value).into(),
                "location" | "url" => value.into(),
                _ => number_or_text(value),
            };
            document.metadata.insert((*key).into(), value);
        }
    }
}

/// A document of `title` (its first block where `title_block`) and the text the HTML `body`
/// shows after it; `None` where neither holds text.
fn titled_document(raw: &RawDocument, uri: String, title: String, title_block: bool, body: &str) -> Option<Document> {
    // Read without an HTML parser, in time and memory linear in it, as a row's HTML may be
    // anything: html5ever runs in the worker processes, where it takes time growing with the
    // square of a page's depth and reopens a paragraph's unclosed formatting elements in every
    // paragraph after it.
    let body_blocks = html_blocks(body);
    if body_blocks.is_empty() && !title_block {
        return None;
    }
    let mut blocks = Vec::with_capacity(body_blocks.len() + 1);
    if title_block {
        blocks.push(Block::text(title.clone(), &[]));
    }
    blocks.extend(body_blocks);
    let content = format!("{title}\n{body}");
    Some(Document::from_part(raw, uri, content.as_bytes(), title, blocks))
}

fn post_document(raw: &RawDocument, row: &Row, uri: String, questions: &Questions) -> Option<Document> {
    let id = field(row, "Id").unwrap_or_default();
    let type_id = field(row, "PostTypeId").unwrap_or_default();
    let kind = post_type(type_id);
    let parent = field(row, "ParentId");
    let question = parent.and_then(|p| questions.by_id.get(p));
    // Its own title, else its question's: the text's first block.
    let named = field(row, "Title").or(question.map(|(title, _)| title.as_str()));
    let title = match (named, parent) {
        (Some(title), _) => collapse_whitespace(title),
        (None, Some(parent)) => format!("Answer to post {parent}"),
        (None, None) => {
            let mut kind = kind.clone();
            kind[..1].make_ascii_uppercase();
            format!("{kind} {id}").trim_end().to_string()
        }
    };
    let body = row.get("Body").map(String::as_str).unwrap_or_default();
    let mut document = titled_document(raw, uri, title, named.is_some(), body)?;
    document.tags = tags_of(field(row, "Tags").unwrap_or_default());
    document.metadata.insert("post_type".into(), kind.into());
    copy_fields(
        row,
        &mut document,
        &[
            ("Score", "score"),
            ("CreationDate", "date"),
            ("OwnerUserId", "user_id"),
            ("ViewCount", "view_count"),
            ("AnswerCount", "answer_count"),
            ("ParentId", "question_id"),
        ],
    );
    if let Some((_, accepted)) = question {
        document
            .metadata
            .insert("accepted".into(), (accepted.as_deref() == Some(id)).into());
    }
    Some(document)
}

fn comment_document(raw: &RawDocument, row: &Row, uri: String) -> Option<Document> {
    let text = field(row, "Text")?;
    let title = match field(row, "PostId") {
        Some(post) => format!("Comment on post {post}"),
        None => Document::stem_of(raw),
    };
    let blocks = vec![Block::text(text.to_string(), &[])];
    let content = format!("{title}\n{text}");
    let mut document = Document::from_part(raw, uri, content.as_bytes(), title, blocks);
    copy_fields(
        row,
        &mut document,
        &[
            ("PostId", "post_id"),
            ("Score", "score"),
            ("CreationDate", "date"),
            ("UserId", "user_id"),
        ],
    );
    Some(document)
}

fn user_document(raw: &RawDocument, row: &Row, uri: String) -> Option<Document> {
    let about = field(row, "AboutMe")?;
    let title = field(row, "DisplayName")
        .map(str::to_string)
        .unwrap_or_else(|| Document::stem_of(raw));
    let mut document = titled_document(raw, uri, title, true, about)?;
    if document.blocks.len() < 2 {
        // A name and no text the profile shows.
        return None;
    }
    copy_fields(
        row,
        &mut document,
        &[
            ("Reputation", "reputation"),
            ("CreationDate", "date"),
            ("Location", "location"),
            ("WebsiteUrl", "url"),
        ],
    );
    Some(document)
}

#[cfg(test)]
mod tests {
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    const POSTS: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<posts>
  <row Id="1" PostTypeId="1" AcceptedAnswerId="3" CreationDate="2015-01-27T20:09:32.720" Score="20" ViewCount="130" Body="&lt;p&gt;I just got a pound of &lt;em&gt;local&lt;/em&gt; coffee.&lt;/p&gt;&#xA;&lt;h2&gt;Details&lt;/h2&gt;&#xA;&lt;pre&gt;&lt;code&gt;temp = 4&lt;/code&gt;&lt;/pre&gt;&#xA;" OwnerUserId="4" Title="How should I store   whole bean coffee?" Tags="&lt;storage&gt;&lt;whole-bean&gt;" AnswerCount="2" />
  <row Id="2" PostTypeId="2" ParentId="1" CreationDate="2015-01-27T20:20:05.700" Score="2" Body="&lt;p&gt;In the freezer.&lt;/p&gt;" OwnerUserId="8" />
  <row Id="3" PostTypeId="2" ParentId="1" CreationDate="2015-01-27T21:00:00.000" Score="11" Body="&lt;p&gt;In an airtight jar, &lt;strong&gt;away&lt;/strong&gt; from light.&lt;/p&gt;" />
  <row Id="4" PostTypeId="4" Body="For questions about storing coffee." Tags="|storage|" />
  <row Id="3" PostTypeId="2" ParentId="1" Body="&lt;p&gt;A copy.&lt;/p&gt;" />
  <row Id="5" PostTypeId="2" ParentId="99" Body="&lt;p&gt;Its question is not in this file.&lt;/p&gt;" />
  <row Id="6" PostTypeId="2" ParentId="1" Body="" />
  <row PostTypeId="1" Title="No id" Body="&lt;p&gt;Still read.&lt;/p&gt;" />
</posts>"#;

    #[test]
    fn posts_are_documents_and_answers_carry_their_questions_title() {
        let parsed = AutoParser.parse(&raw_for_test("Posts.xml", POSTS)).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/Posts.xml#post=1",
                "memory://test/Posts.xml#post=2",
                "memory://test/Posts.xml#post=3",
                "memory://test/Posts.xml#post=4",
                "memory://test/Posts.xml#post=5",
                "memory://test/Posts.xml#post=6",
                "memory://test/Posts.xml#row=8",
            ]
        );
        let question = &parsed.documents[0];
        assert_eq!(question.title, "How should I store whole bean coffee?");
        let texts: Vec<&str> = question.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "How should I store whole bean coffee?",
                "I just got a pound of local coffee.",
                "Details",
                "temp = 4"
            ]
        );
        // The body's headings head what follows them.
        assert_eq!(question.blocks[3].heading_path, ["Details"]);
        assert!(question.blocks[1].heading_path.is_empty());
        assert_eq!(question.tags, ["storage", "whole-bean"]);
        let metadata = &question.metadata;
        assert_eq!(metadata["post_type"], "question");
        assert_eq!(metadata["score"], 20);
        assert_eq!(metadata["view_count"], 130);
        assert_eq!(metadata["answer_count"], 2);
        assert_eq!(metadata["user_id"], 4);
        assert_eq!(metadata["date"], "2015-01-27T20:09:32.720+00:00");

        let freezer = &parsed.documents[1];
        assert_eq!(freezer.title, "How should I store whole bean coffee?");
        let texts: Vec<&str> = freezer.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["How should I store whole bean coffee?", "In the freezer."]);
        assert_eq!(freezer.metadata["post_type"], "answer");
        assert_eq!(freezer.metadata["question_id"], 1);
        assert_eq!(freezer.metadata["accepted"], false);
        assert_eq!(parsed.documents[2].metadata["accepted"], true);
        assert_eq!(
            parsed.documents[2].blocks[1].text,
            "In an airtight jar, away from light."
        );

        let excerpt = &parsed.documents[3];
        assert_eq!(excerpt.title, "Tag wiki excerpt 4");
        assert_eq!(excerpt.blocks.len(), 1);
        assert_eq!(excerpt.tags, ["storage"]);
        assert_eq!(parsed.documents[4].title, "Answer to post 99");
        // An empty answer still names its question: the title is its text.
        assert_eq!(parsed.documents[5].blocks.len(), 1);
        assert_eq!(parsed.documents[6].title, "No id");
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/Posts.xml#post=3",
                "post 3: an earlier row of the table has this Id too; the first is kept"
            )]
        );
    }

    #[test]
    fn comments_and_profiles_are_documents_and_rows_without_text_are_not() {
        let comments = r#"<?xml version="1.0" encoding="utf-8"?>
<comments>
  <row Id="7" PostId="1" Score="3" Text="Does the roast date matter here?" CreationDate="2015-01-27T20:31:00.000" UserId="19" />
  <row Id="8" PostId="1" Text="  " />
</comments>"#;
        let parsed = AutoParser.parse(&raw_for_test("Comments.xml", comments)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        let comment = &parsed.documents[0];
        assert_eq!(comment.uri, "memory://test/Comments.xml#comment=7");
        assert_eq!(comment.title, "Comment on post 1");
        assert_eq!(comment.blocks[0].text, "Does the roast date matter here?");
        assert_eq!(comment.metadata["post_id"], 1);
        assert_eq!(comment.metadata["score"], 3);

        let users = r#"<?xml version="1.0" encoding="utf-8"?>
<users>
  <row Id="4" Reputation="1234" DisplayName="Ada" Location="London, UK" AboutMe="&lt;p&gt;I roast my own beans.&lt;/p&gt;" WebsiteUrl="https://ada.example" />
  <row Id="5" DisplayName="Quiet" AboutMe="" />
  <row Id="6" DisplayName="Markup only" AboutMe="&lt;p&gt;&lt;/p&gt;" />
</users>"#;
        let parsed = AutoParser.parse(&raw_for_test("Users.xml", users)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        let user = &parsed.documents[0];
        assert_eq!(user.uri, "memory://test/Users.xml#user=4");
        assert_eq!(user.title, "Ada");
        assert_eq!(user.blocks[1].text, "I roast my own beans.");
        assert_eq!(user.metadata["reputation"], 1234);
        assert_eq!(user.metadata["location"], "London, UK");
        assert_eq!(user.metadata["url"], "https://ada.example");
        assert!(failures_of(&parsed).is_empty());
    }

    #[test]
    fn the_dumps_other_tables_fail_saying_which_they_are() {
        let votes = r#"<?xml version="1.0" encoding="utf-8"?>
<votes>
  <row Id="1" PostId="1" VoteTypeId="2" CreationDate="2010-07-28T00:00:00.000" />
</votes>"#;
        let error = AutoParser.parse(&raw_for_test("Votes.xml", votes)).unwrap_err();
        assert!(error.is_no_document());
        assert_eq!(
            error.to_string(),
            "no text content found: a Stack Exchange votes table holds votes on posts, which is not indexed (the dump's Posts.xml, Comments.xml and Users.xml are)"
        );
        let history = r#"<posthistory><row Id="1" PostId="1" Text="How should I elicit priors?" /></posthistory>"#;
        let error = AutoParser.parse(&raw_for_test("PostHistory.xml", history)).unwrap_err();
        assert!(error.to_string().contains("the posts' earlier revisions"), "{error}");
        // A root named `tags` holding other elements is other XML.
        let tags = "<tags><tag><name>rust</name><about>A systems language.</about></tag></tags>";
        let parsed = AutoParser.parse(&raw_for_test("tags.xml", tags)).unwrap();
        assert!(parsed.documents[0]
            .blocks
            .iter()
            .any(|b| b.text.contains("A systems language.")));
    }

    #[test]
    fn other_xml_named_like_a_table_and_damaged_tables_read_as_they_can() {
        // A root named `posts` with no rows is other XML.
        let blog = "<posts><post><title>Spring</title><p>The tides come early.</p></post></posts>";
        let parsed = AutoParser.parse(&raw_for_test("blog.xml", blog)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        assert_eq!(parsed.documents[0].title, "Spring");
        let cut =
            "<posts><row Id=\"1\" PostTypeId=\"1\" Title=\"Kept\" Body=\"Read.\" />\n<row Id=\"2\" Title=\"unclosed";
        let parsed = AutoParser.parse(&raw_for_test("Posts.xml", cut)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        let failures = failures_of(&parsed);
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].0.starts_with("memory://test/Posts.xml#byte="),
            "{failures:?}"
        );
        assert!(
            failures[0].1.contains("the rows after it were not read"),
            "{failures:?}"
        );
        let broken = "<posts><row Id=\"1\" Title=\"unclosed";
        assert!(AutoParser.parse(&raw_for_test("Posts.xml", broken)).is_err());
    }

    #[test]
    fn hostile_rows_read_in_linear_time() {
        let started = std::time::Instant::now();
        let mut xml = String::from("<posts>");
        // Rows with hundreds of attributes, rows with children, nested rows.
        let attributes: String = (0..500).map(|i| format!(" A{i}=\"v\"")).collect();
        for i in 0..2_000 {
            xml.push_str(&format!(
                "<row Id=\"{i}\" PostTypeId=\"1\" Title=\"T{i}\"{attributes} Body=\"x\"/>"
            ));
        }
        // A body 100,000 elements deep, and one whose unclosed formatting elements an HTML
        // parser would reopen in each of its 50,000 paragraphs, read in time linear in them.
        let deep = format!("{}deep", "&lt;blockquote&gt;&lt;b&gt;".repeat(50_000));
        let formatting: String = (0..100).map(|i| format!("&lt;b id={i}&gt;")).collect();
        let reopened = format!(
            "&lt;p&gt;{formatting}&lt;/p&gt;{}",
            "&lt;p&gt;x&lt;/p&gt;".repeat(50_000)
        );
        xml.push_str(&format!(
            "<row Id=\"r\" PostTypeId=\"1\" Title=\"Reopened\" Body=\"{reopened}\"/>"
        ));
        xml.push_str(&format!(
            "<row Id=\"d\" PostTypeId=\"1\" Title=\"Deep\" Body=\"{deep}\"/>"
        ));
        xml.push_str(&"<row Id=\"n\"><row><row>".repeat(20_000));
        xml.push_str("</posts>");
        let parsed = AutoParser.parse(&raw_for_test("Posts.xml", xml)).unwrap();
        // The 500 attributes before `Body` leave it unread: the title is the text; the row
        // with children has no text.
        assert_eq!(parsed.documents.len(), 2_002);
        assert_eq!(parsed.documents[0].blocks.len(), 1);
        assert_eq!(parsed.documents[2_000].blocks.len(), 50_001);
        let texts: Vec<&str> = parsed.documents[2_001].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Deep", "deep"]);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
