//! News feeds (RSS 2.0, RSS 1.0 and Atom; told by their root element whatever their name,
//! `.rss`, `.atom`, `.xml`): one document per item, named `<file>#item=<its guid or id, else
//! its link>` so that an item keeps its name as the feed moves on (`#item=<n>`, its place,
//! where it has none of them). Its title is its first block, then its text: the content
//! (`content:encoded`, Atom's `content`) where it has one, else its description or summary,
//! read for the text its HTML shows. Metadata: `url` (its link), `date` (when it was published,
//! else when it was updated; RFC 3339), `authors`, `feed` (the feed's title); its categories are its tags.
//! An item whose id an earlier item has fails alone; XML damaged partway keeps the items
//! before it.

use std::collections::HashSet;

use quick_xml::events::{BytesStart, Event};

use super::bibtex::{item_failure, item_uri};
use super::html_text::{html_blocks, html_text};
use super::text::collapse_whitespace;
use super::xml::{broken_partway, lenient_reader, next_event, text_of};
use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Whether an XML root element's local name begins a feed.
pub(super) fn is_feed_root(name: &str) -> bool {
    matches!(name, "rss" | "feed" | "RDF")
}

/// The field of an item a text element fills.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Field {
    Title,
    Link,
    Id,
    Date,
    /// Atom's `updated`, `dcterms:modified`: the date where no other is stated.
    Updated,
    Author,
    Category,
    Summary,
    Content,
    FeedTitle,
}

/// An item as read.
#[derive(Default)]
struct Item {
    title: String,
    link: String,
    id: String,
    date: String,
    updated: String,
    authors: Vec<String>,
    categories: Vec<String>,
    summary: String,
    content: String,
}

fn field_of(parent: &[u8], name: &[u8], in_item: bool) -> Option<Field> {
    if !in_item {
        return (name == b"title" && matches!(parent, b"channel" | b"feed")).then_some(Field::FeedTitle);
    }
    Some(match name {
        b"title" if matches!(parent, b"item" | b"entry") => Field::Title,
        b"link" if matches!(parent, b"item" | b"entry") => Field::Link,
        b"guid" | b"id" if matches!(parent, b"item" | b"entry") => Field::Id,
        // RSS's, Atom's, Dublin Core's and its terms' dates.
        b"pubDate" | b"published" | b"date" | b"issued" | b"created" if matches!(parent, b"item" | b"entry") => {
            Field::Date
        }
        b"updated" | b"modified" if matches!(parent, b"item" | b"entry") => Field::Updated,
        b"creator" | b"name" if matches!(parent, b"item" | b"entry" | b"author") => Field::Author,
        b"author" if parent == b"item" => Field::Author,
        b"category" | b"subject" => Field::Category,
        // RSS's `content:encoded`, Atom's `content` (not Media RSS's `media:content`).
        b"encoded" if parent == b"item" => Field::Content,
        b"content" if parent == b"entry" => Field::Content,
        b"description" | b"summary" if matches!(parent, b"item" | b"entry") => Field::Summary,
        _ => return None,
    })
}

impl Item {
    fn fill(&mut self, field: Field, text: String) {
        let line = || collapse_whitespace(&text);
        match field {
            Field::Title if self.title.is_empty() => self.title = line(),
            Field::Link if self.link.is_empty() => self.link = line(),
            Field::Id if self.id.is_empty() => self.id = line(),
            Field::Date if self.date.is_empty() => self.date = line(),
            Field::Updated if self.updated.is_empty() => self.updated = line(),
            Field::Author => {
                let name = line();
                if !name.is_empty() && !self.authors.contains(&name) {
                    self.authors.push(name);
                }
            }
            Field::Category => {
                let name = line();
                if !name.is_empty() && !self.categories.contains(&name) {
                    self.categories.push(name);
                }
            }
            Field::Summary if self.summary.is_empty() => self.summary = text,
            Field::Content if self.content.is_empty() => self.content = text,
            _ => {}
        }
    }
}

/// An Atom link's address: `rel="alternate"` or no `rel`.
fn atom_link(start: &BytesStart) -> Option<String> {
    let attribute = |key: &str| {
        start
            .try_get_attribute(key)
            .ok()
            .flatten()
            .map(|a| String::from_utf8_lossy(&a.value).into_owned())
    };
    let rel = attribute("rel").unwrap_or_default();
    (rel.is_empty() || rel == "alternate")
        .then(|| attribute("href"))
        .flatten()
}

/// Attributes that carry an item's fields: an Atom category's `term`, RSS 1.0's `rdf:about`.
fn attribute_field(start: &BytesStart, key: &str) -> Option<String> {
    start
        .try_get_attribute(key)
        .ok()
        .flatten()
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
        .filter(|v| !v.trim().is_empty())
}

struct Feed {
    title: String,
    items: Vec<Item>,
    damage: Option<(u64, String)>,
}

fn read_feed(xml: &str) -> Result<Feed, ParseError> {
    let mut reader = lenient_reader(xml);
    let mut feed = Feed {
        title: String::new(),
        items: Vec::new(),
        damage: None,
    };
    let mut path: Vec<Vec<u8>> = Vec::new();
    let mut item: Option<(usize, Item)> = None;
    let mut reading: Option<(Field, usize, String)> = None;
    while let Some(event) = next_event(&mut reader, "feed XML", !feed.items.is_empty(), &mut feed.damage)? {
        let (start, empty) = match &event {
            Event::Start(start) => (Some(start), false),
            Event::Empty(start) => (Some(start), true),
            _ => (None, false),
        };
        if let Some(start) = start {
            let name = start.local_name().as_ref().to_vec();
            let parent = path.last().cloned().unwrap_or_default();
            if item.is_none() && matches!(name.as_slice(), b"item" | b"entry") {
                let mut new = Item::default();
                if let Some(about) = attribute_field(start, "rdf:about") {
                    new.id = about;
                }
                item = Some((path.len() + 1, new));
            }
            if let Some((_, open)) = item
                .as_mut()
                .filter(|_| matches!(parent.as_slice(), b"item" | b"entry"))
            {
                match name.as_slice() {
                    b"link" => {
                        if let Some(href) = atom_link(start) {
                            open.fill(Field::Link, href);
                        }
                    }
                    b"category" => {
                        if let Some(term) = attribute_field(start, "term") {
                            open.fill(Field::Category, term);
                        }
                    }
                    _ => {}
                }
            }
            // Atom's XHTML content: its elements written again as tags, for the HTML reader.
            if let Some((_, _, read)) = reading.as_mut() {
                let slash = if empty { "/" } else { "" };
                read.push_str(&format!("<{}{slash}>", String::from_utf8_lossy(&name)));
            }
            if !empty {
                path.push(name.clone());
                if reading.is_none() {
                    if let Some(field) = field_of(&parent, &name, item.is_some()) {
                        reading = Some((field, path.len(), String::new()));
                    }
                }
            }
            continue;
        }
        match event {
            Event::End(_) => {
                let depth = path.len();
                let name = path.pop().unwrap_or_default();
                if let Some((_, _, read)) = reading.as_mut().filter(|(_, at, _)| *at < depth) {
                    read.push_str(&format!("</{}>", String::from_utf8_lossy(&name)));
                }
                if reading.as_ref().is_some_and(|(_, at, _)| *at == depth) {
                    if let Some((field, _, text)) = reading.take() {
                        match (field, item.as_mut()) {
                            (Field::FeedTitle, _) if feed.title.is_empty() => feed.title = collapse_whitespace(&text),
                            (_, Some((_, open))) => open.fill(field, text),
                            _ => {}
                        }
                    }
                }
                if item.as_ref().is_some_and(|(at, _)| *at == depth) {
                    feed.items.extend(item.take().map(|(_, read)| read));
                }
            }
            Event::Text(text) => {
                if let Some((_, _, read)) = reading.as_mut() {
                    read.push_str(&text_of(&text));
                }
            }
            Event::CData(data) => {
                if let Some((_, _, read)) = reading.as_mut() {
                    read.push_str(&String::from_utf8_lossy(&data));
                }
            }
            _ => {}
        }
    }
    Ok(feed)
}

/// A date as RFC 3339 (RSS's RFC 822 dates and Atom's own), or as written.
fn normalized_date(date: &str) -> String {
    chrono::DateTime::parse_from_rfc2822(date)
        .or_else(|_| chrono::DateTime::parse_from_rfc3339(date))
        .map(|d| d.to_rfc3339())
        .unwrap_or_else(|_| date.to_string())
}

pub(super) fn parse(raw: &RawDocument, xml: &str) -> Result<Parsed, ParseError> {
    let feed = read_feed(xml)?;
    let mut parsed = Parsed::default();
    let mut ids = HashSet::new();
    for (place, item) in feed.items.into_iter().enumerate() {
        let key = [&item.id, &item.link]
            .into_iter()
            .find(|k| !k.trim().is_empty())
            .cloned();
        let uri = match &key {
            Some(key) => {
                if !ids.insert(key.clone()) {
                    let reason = "an earlier item of the feed has this id too; the first is kept";
                    parsed.failures.push(item_failure(raw, "item", key, reason));
                    continue;
                }
                item_uri(raw, "item", key)
            }
            None => format!("{}#item={}", raw.uri, place + 1),
        };
        parsed.documents.extend(item_document(raw, &feed.title, item, uri));
    }
    if let Some(damage) = feed.damage {
        parsed
            .failures
            .push(broken_partway(raw, damage, "the feed's XML", "items"));
    }
    Ok(parsed)
}

/// An item's document: its title, then the text its content (else its summary) shows.
fn item_document(raw: &RawDocument, feed_title: &str, item: Item, uri: String) -> Option<Document> {
    let body = match item.content.trim().is_empty() {
        true => &item.summary,
        false => &item.content,
    };
    let mut blocks: Vec<Block> = Vec::new();
    if !item.title.is_empty() {
        blocks.push(Block::text(html_text(&item.title), &[]));
    }
    blocks.extend(html_blocks(body));
    if blocks.is_empty() {
        return None;
    }
    let content = format!("{}\n{}\n{}\n{}", item.title, item.link, item.date, body);
    let title = match blocks[0].text.as_str() {
        _ if !item.title.is_empty() => blocks[0].text.clone(),
        _ => Document::stem_of(raw),
    };
    let mut document = Document::from_part(raw, uri, content.as_bytes(), title, blocks);
    document.tags = item.categories;
    let metadata = &mut document.metadata;
    if !item.link.is_empty() {
        metadata.insert("url".into(), item.link.into());
    }
    // When it was published; when it was last updated where it does not say.
    let date = [&item.date, &item.updated].into_iter().find(|d| !d.is_empty());
    if let Some(date) = date {
        metadata.insert("date".into(), normalized_date(date).into());
    }
    if !item.authors.is_empty() {
        metadata.insert("authors".into(), item.authors.into());
    }
    if !feed_title.is_empty() {
        metadata.insert("feed".into(), feed_title.into());
    }
    Some(document)
}

#[cfg(test)]
mod tests {
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    #[test]
    fn rss_items_are_documents_named_by_their_guid() {
        let rss = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel><title>Harbour News</title><link>https://harbour.example/</link><description>What the harbour did.</description>
<item><title>Tide tables for &lt;b&gt;May&lt;/b&gt;</title><link>https://harbour.example/tides-may</link>
<guid isPermaLink="false">harbour-2026-05</guid><pubDate>Fri, 01 May 2026 09:30:00 +0200</pubDate>
<dc:creator>Ada Lovelace</dc:creator><category>tides</category><category>tables</category>
<description>Short &lt;em&gt;summary&lt;/em&gt;.</description>
<content:encoded><![CDATA[<p>The spring tides come early.</p><h3>Times</h3><p>Low water at <b>06:10</b> &amp; 18:40.</p><script>track()</script>]]></content:encoded></item>
<item><title>Quay closed</title><link>https://harbour.example/quay</link><description>The north quay is closed.</description>
<media:group xmlns:media="http://search.yahoo.com/mrss/"><media:content url="https://harbour.example/q.jpg"><media:description>A photo.</media:description></media:content></media:group></item>
<item><title>Again</title><guid>harbour-2026-05</guid><description>A copy.</description></item>
<item><description>No title, no link, no id.</description></item>
</channel></rss>"#;
        let parsed = AutoParser.parse(&raw_for_test("news.rss", rss)).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/news.rss#item=harbour-2026-05",
                "memory://test/news.rss#item=https://harbour.example/quay",
                "memory://test/news.rss#item=4",
            ]
        );
        let first = &parsed.documents[0];
        assert_eq!(first.title, "Tide tables for May");
        let texts: Vec<&str> = first.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Tide tables for May",
                "The spring tides come early.",
                "Times",
                "Low water at 06:10 & 18:40."
            ]
        );
        assert_eq!(first.blocks[3].heading_path, ["Times"]);
        assert_eq!(first.tags, ["tides", "tables"]);
        assert_eq!(first.metadata["url"], "https://harbour.example/tides-may");
        assert_eq!(first.metadata["date"], "2026-05-01T09:30:00+02:00");
        assert_eq!(first.metadata["authors"][0], "Ada Lovelace");
        assert_eq!(first.metadata["feed"], "Harbour News");
        // Media RSS's description of a picture is not the item's.
        let quay: Vec<&str> = parsed.documents[1].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(quay, ["Quay closed", "The north quay is closed."]);
        assert_eq!(parsed.documents[2].title, "news");
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/news.rss#item=harbour-2026-05",
                "item harbour-2026-05: an earlier item of the feed has this id too; the first is kept"
            )]
        );
    }

    #[test]
    fn atom_entries_and_rss_1_items_are_documents() {
        let atom = r#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Quarry releases</title><id>urn:uuid:feed</id>
<entry><source><title>Elsewhere</title><link href="https://elsewhere.example/"/><id>urn:elsewhere</id></source>
<title type="html">Release 1.2 &amp;amp; notes</title><link rel="self" href="https://q.example/self"/><link href="https://q.example/1.2"/>
<id>urn:uuid:1225c695</id><updated>2026-12-01T18:30:02Z</updated><published>2026-11-30T10:00:00Z</published>
<author><name>Grace Hopper</name></author><category term="release"/>
<summary>Short.</summary><content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><h2>Changes</h2><p>Faster <b>search</b>.</p><p>Smaller<br/>files.</p></div></content></entry>
</feed>"#;
        let parsed = AutoParser.parse(&raw_for_test("releases.atom", atom)).unwrap();
        let entry = &parsed.documents[0];
        assert_eq!(entry.uri, "memory://test/releases.atom#item=urn:uuid:1225c695");
        assert_eq!(entry.title, "Release 1.2 & notes");
        let texts: Vec<&str> = entry.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            ["Release 1.2 & notes", "Changes", "Faster search.", "Smaller", "files."]
        );
        assert_eq!(
            entry.blocks[3].heading_path,
            ["Changes"],
            "XHTML's headings head what follows"
        );
        assert_eq!(entry.metadata["url"], "https://q.example/1.2");
        assert_eq!(entry.metadata["date"], "2026-11-30T10:00:00+00:00");
        assert_eq!(entry.metadata["authors"][0], "Grace Hopper");
        assert_eq!(entry.tags, ["release"]);
        let rdf = r#"<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://n.example/"><title>Notes</title></channel>
<item rdf:about="https://n.example/1"><title>One</title><link>https://n.example/1</link><dc:date>2026-12-02T08:00:00+01:00</dc:date><description>First note.</description></item>
</rdf:RDF>"#;
        let parsed = AutoParser.parse(&raw_for_test("notes.rdf", rdf)).unwrap();
        assert_eq!(
            parsed.documents[0].uri,
            "memory://test/notes.rdf#item=https://n.example/1"
        );
        assert_eq!(parsed.documents[0].metadata["feed"], "Notes");
        assert_eq!(parsed.documents[0].blocks[1].text, "First note.");
    }
}
