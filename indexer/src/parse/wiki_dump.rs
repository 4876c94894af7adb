//! MediaWiki XML dumps (a wiki's `Special:Export`, Wikipedia's `pages-articles.xml.bz2`,
//! `dumpBackup.php`): one document per page, named `<file>#page=<page id>` (a page keeps its id
//! when it is renamed, so the next night's dump names it alike), titled by the page's title
//! (its first block), its latest revision's wikitext read by [`super::wikitext`]; its
//! categories are its tags, and its metadata the revision's time (`date`), the page's address
//! on the wiki (`url`, from the dump's `base`) and, outside the main namespace, its
//! `namespace`. Redirects, pages of other content models (CSS, JavaScript, Lua modules) and
//! the namespaces that hold a wiki's machinery rather than its text (Template, Module,
//! MediaWiki, Gadget, and their talk pages) are left out. The XML is read in one pass
//! (quick-xml, no recursion); the pages are read in parallel, each alone: one that cannot be
//! read fails as the dump's failed item. XML damaged partway keeps the pages before it.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};
use rayon::prelude::*;

use super::wikitext::read_wikitext;
use super::wikitext_markup::LinkNames;
use super::xml::{broken_partway, decode_xml_text, next_event, text_of};
use super::{Block, Document, ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

/// Namespaces left out: MediaWiki (8, 9), Template (10, 11), Module (828, 829), Gadget and
/// Gadget definition (2300-2303).
const MACHINERY_NAMESPACES: [i64; 10] = [8, 9, 10, 11, 828, 829, 2300, 2301, 2302, 2303];
/// Elements deeper than this are not told apart (no field of a dump is that deep).
const MAX_TRACKED_DEPTH: usize = 8;

/// Whether a file's first bytes (lower case, white space off) begin a MediaWiki dump.
pub(super) fn looks_like_a_dump(head: &str) -> bool {
    let head = head.trim_start_matches('\u{feff}');
    head.starts_with("<mediawiki") || (head.starts_with("<?xml") && head.contains("<mediawiki"))
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_xml_text(raw)?;
    let dump = read_dump(&text)?;
    drop(text); // the pages hold what is read of it
    let names = dump.site.link_names();
    let read: Vec<Parsed> = dump
        .pages
        .into_par_iter()
        .map(|page| page_document(raw, &dump.site, &names, page))
        .collect();
    let mut parsed: Parsed = read.into_iter().collect();
    if let Some(damage) = dump.damage {
        parsed
            .failures
            .push(broken_partway(raw, damage, "the dump's XML", "pages"));
    }
    Ok(parsed)
}

/// What the dump says of its wiki.
#[derive(Default)]
pub(super) struct Site {
    /// The address of the wiki's main page (`https://en.wikipedia.org/wiki/Main_Page`).
    base: String,
    namespaces: HashMap<i64, String>,
}

impl Site {
    pub fn link_names(&self) -> LinkNames {
        let mut names = LinkNames::default();
        let add = |list: &mut Vec<String>, key| {
            if let Some(name) = self.namespaces.get(&key).map(|n| n.to_lowercase()) {
                if !name.is_empty() && !list.contains(&name) {
                    list.push(name);
                }
            }
        };
        add(&mut names.files, 6);
        add(&mut names.files, -2);
        add(&mut names.categories, 14);
        names
    }

    /// A page's address on the wiki: the base's page name replaced by the title.
    fn page_url(&self, title: &str) -> Option<String> {
        let name: String = title
            .chars()
            .map(|c| match c {
                ' ' => "_".to_string(),
                '?' | '&' | '"' | '%' | '+' => format!("%{:02X}", c as u32),
                c => c.to_string(),
            })
            .collect();
        let prefix_end = match self.base.find("title=") {
            Some(p) => p + "title=".len(),
            None => self.base.rfind('/')? + 1,
        };
        self.base
            .starts_with("http")
            .then(|| format!("{}{name}", &self.base[..prefix_end]))
    }
}

/// A page as the dump holds it (its latest revision).
#[derive(Default)]
pub(super) struct Page {
    id: String,
    title: String,
    namespace: String,
    redirect: bool,
    timestamp: String,
    model: String,
    pub text: String,
}

impl Page {
    fn namespace_key(&self) -> i64 {
        self.namespace.trim().parse().unwrap_or(0)
    }

    /// Whether the page holds text a reader of the wiki reads.
    fn is_read(&self) -> bool {
        let model = self.model.trim();
        !self.redirect
            && (model.is_empty() || model == "wikitext")
            && !MACHINERY_NAMESPACES.contains(&self.namespace_key())
            && !self.text.trim().is_empty()
    }
}

struct Dump {
    site: Site,
    pages: Vec<Page>,
    /// Where the XML could not be read on, and why, once a page had been read.
    damage: Option<(u64, String)>,
}

/// The field a text node fills, by the elements it is in.
#[derive(Clone, Copy)]
enum Field {
    Base,
    Namespace,
    Title,
    NamespaceKey,
    Id,
    Timestamp,
    Model,
    Text,
}

fn field_of(path: &[Vec<u8>]) -> Option<Field> {
    let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
    Some(match names.as_slice() {
        [b"mediawiki", b"siteinfo", b"base"] => Field::Base,
        [b"mediawiki", b"siteinfo", b"namespaces", b"namespace"] => Field::Namespace,
        [b"mediawiki", b"page", b"title"] => Field::Title,
        [b"mediawiki", b"page", b"ns"] => Field::NamespaceKey,
        [b"mediawiki", b"page", b"id"] => Field::Id,
        [b"mediawiki", b"page", b"revision", b"timestamp"] => Field::Timestamp,
        [b"mediawiki", b"page", b"revision", b"model"] => Field::Model,
        [b"mediawiki", b"page", b"revision", b"text"] => Field::Text,
        _ => return None,
    })
}

fn read_dump(xml: &str) -> Result<Dump, ParseError> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut reading = DumpReading::default();
    let (mut pages, mut damage) = (Vec::new(), None);
    while let Some(event) = next_event(&mut reader, "MediaWiki dump: XML", reading.pages_seen > 0, &mut damage)? {
        pages.extend(reading.take(event));
    }
    if reading.pages_seen == 0 {
        return Err(no_page());
    }
    Ok(Dump {
        site: reading.site,
        pages,
        damage,
    })
}

/// The failure of a dump with no page.
pub(super) fn no_page() -> ParseError {
    ParseError::Corrupt(
        "MediaWiki dump: no <page> element found (a dump holds each page as <page> in <mediawiki>)".into(),
    )
}

/// A dump's XML read an event at a time: what it says of its wiki, and its pages as each ends.
#[derive(Default)]
pub(super) struct DumpReading {
    pub site: Site,
    path: Vec<Vec<u8>>,
    field: Option<Field>,
    page: Page,
    namespace: (i64, String),
    /// Pages ended so far, read or not.
    pub pages_seen: usize,
}

impl DumpReading {
    /// Takes the next event: the page it ends, where it ends one that is read.
    pub fn take(&mut self, event: Event) -> Option<Page> {
        let Self {
            site,
            path,
            field,
            page,
            namespace,
            pages_seen,
        } = self;
        match event {
            Event::Start(start) => {
                let name = local_name(&start);
                match name.as_slice() {
                    b"page" => *page = Page::default(),
                    b"revision" => (page.text, page.timestamp, page.model) = Default::default(),
                    b"redirect" => page.redirect = true,
                    b"namespace" => *namespace = (key_of(&start), String::new()),
                    _ => {}
                }
                path.push(if path.len() < MAX_TRACKED_DEPTH {
                    name
                } else {
                    Vec::new()
                });
                *field = field_of(path);
            }
            Event::Empty(start) if local_name(&start) == b"redirect" => page.redirect = true,
            Event::End(_) => {
                *field = None;
                match path.pop().as_deref() {
                    Some(b"page") if path.len() == 1 => {
                        *pages_seen += 1;
                        let page = std::mem::take(page);
                        return page.is_read().then_some(page);
                    }
                    Some(b"namespace") => {
                        let (key, name) = std::mem::take(namespace);
                        site.namespaces.insert(key, name);
                    }
                    _ => {}
                }
            }
            Event::Text(text) => {
                if let Some(field) = *field {
                    fill(field, &text_of(&text), site, page, &mut namespace.1);
                }
            }
            Event::CData(data) => {
                if let Some(field) = *field {
                    fill(field, &String::from_utf8_lossy(&data), site, page, &mut namespace.1);
                }
            }
            _ => {}
        }
        None
    }
}

fn fill(field: Field, text: &str, site: &mut Site, page: &mut Page, namespace: &mut String) {
    let target = match field {
        Field::Base => &mut site.base,
        Field::Namespace => namespace,
        Field::Title => &mut page.title,
        Field::NamespaceKey => &mut page.namespace,
        Field::Id => &mut page.id,
        Field::Timestamp => &mut page.timestamp,
        Field::Model => &mut page.model,
        Field::Text => &mut page.text,
    };
    target.push_str(text);
}

fn local_name(start: &BytesStart) -> Vec<u8> {
    start.local_name().as_ref().to_vec()
}

/// A `<namespace key="14">`'s key.
fn key_of(start: &BytesStart) -> i64 {
    start
        .try_get_attribute("key")
        .ok()
        .flatten()
        .and_then(|a| std::str::from_utf8(&a.value).ok()?.trim().parse().ok())
        .unwrap_or(0)
}

/// A page's document: its title, then what its wikitext shows. A page the reader cannot read
/// fails alone; one that shows no text (templates only) is left out.
pub(super) fn page_document(raw: &RawDocument, site: &Site, names: &LinkNames, page: Page) -> Parsed {
    let title = page.title.trim().to_string();
    let name = match page.id.trim() {
        "" => title.replace(' ', "_"),
        id => id.to_string(),
    };
    let uri = format!("{}#page={name}", raw.uri);
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_wikitext(&page.text, names)));
    let Ok(read) = read else {
        return Parsed::failed(ItemFailure {
            uri,
            reason: format!("page {name}: the wikitext reader could not read \"{title}\""),
        });
    };
    if read.blocks.iter().all(|b| b.text.trim().is_empty()) {
        return Parsed::default();
    }
    let mut blocks = vec![Block::text(title.clone(), &[])];
    blocks.extend(read.blocks);
    let content = format!("{title}\n{}\n{}", page.timestamp, page.text);
    let mut document = Document::from_part(raw, uri, content.as_bytes(), title.clone(), blocks);
    document.tags = read.categories;
    let metadata = &mut document.metadata;
    if !page.timestamp.trim().is_empty() {
        metadata.insert("date".into(), page.timestamp.trim().into());
    }
    if let Some(url) = site.page_url(&title) {
        metadata.insert("url".into(), url.into());
    }
    let key = page.namespace_key();
    if key != 0 {
        let namespace = site.namespaces.get(&key).cloned().unwrap_or_else(|| key.to_string());
        metadata.insert("namespace".into(), namespace.into());
    }
    Parsed::one(document)
}

#[cfg(test)]
pub(super) mod tests {
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    pub fn page(id: u32, title: &str, ns: u32, extra: &str, text: &str) -> String {
        format!(
            "<page><title>{title}</title><ns>{ns}</ns><id>{id}</id>{extra}<revision><id>{}</id>\
             <timestamp>2026-11-0{}T10:00:00Z</timestamp><contributor><username>Ada</username></contributor>\
             <model>wikitext</model><format>text/x-wiki</format><text bytes=\"1\" xml:space=\"preserve\">{text}</text>\
             </revision></page>\n",
            id * 10,
            id % 9 + 1
        )
    }

    pub fn dump(pages: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.11/\" \
             version=\"0.11\" xml:lang=\"de\"><siteinfo><sitename>Wikipedia</sitename>\
             <base>https://de.wikipedia.org/wiki/Wikipedia:Hauptseite</base><namespaces>\
             <namespace key=\"0\" case=\"first-letter\" /><namespace key=\"4\" case=\"first-letter\">Wikipedia</namespace>\
             <namespace key=\"6\" case=\"first-letter\">Datei</namespace>\
             <namespace key=\"14\" case=\"first-letter\">Kategorie</namespace></namespaces></siteinfo>\n{pages}</mediawiki>"
        )
    }

    #[test]
    fn each_page_is_a_document_and_the_machinery_is_left_out() {
        let pages = [
            page(
                7,
                "Steinbruch (Bergbau)",
                0,
                "",
                "'''Ein Steinbruch''' ist ein [[Tagebau]].&lt;ref&gt;Quelle&lt;/ref&gt;\n\
                 == Geschichte ==\n[[Datei:Bruch.jpg|mini|Ein alter Bruch]]\n\
                 [[Kategorie:Bergbau]][[Category:Geologie]]",
            ),
            page(
                8,
                "Alter Bruch",
                0,
                "<redirect title=\"Steinbruch (Bergbau)\" />",
                "#WEITERLEITUNG [[Steinbruch]]",
            ),
            page(9, "Vorlage:Infobox", 10, "", "{{{name}}} is a template"),
            page(10, "Wikipedia:Hilfe", 4, "", "Hilfe &amp; Rat"),
            page(11, "Leer", 0, "", "{{Begriffsklärung}}"),
        ]
        .concat();
        let parsed = AutoParser.parse(&raw_for_test("dewiki.xml", dump(&pages))).unwrap();
        assert!(parsed.failures.is_empty(), "{:?}", parsed.failures);
        let [article, help] = parsed.documents.as_slice() else {
            panic!("{:?}", parsed.documents)
        };
        assert_eq!(article.uri, "memory://test/dewiki.xml#page=7");
        assert_eq!(article.title, "Steinbruch (Bergbau)");
        let texts: Vec<&str> = article.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Steinbruch (Bergbau)",
                "Ein Steinbruch ist ein Tagebau.",
                "Geschichte",
                "Ein alter Bruch"
            ]
        );
        assert_eq!(article.blocks[3].heading_path, ["Geschichte"]);
        assert_eq!(article.tags, ["Bergbau", "Geologie"]);
        assert_eq!(article.metadata["date"], "2026-11-08T10:00:00Z");
        assert_eq!(
            article.metadata["url"],
            "https://de.wikipedia.org/wiki/Steinbruch_(Bergbau)"
        );
        assert!(!article.metadata.contains_key("namespace"));
        assert_eq!(help.metadata["namespace"], "Wikipedia");
        assert_eq!(help.blocks[1].text, "Hilfe & Rat");
        assert_ne!(article.content_hash, help.content_hash);
    }

    #[test]
    fn damage_partway_keeps_the_pages_before_it() {
        let xml = dump(&(page(1, "Eins", 0, "", "Der erste Text.") + "<page><title>Zwei</title></mismatch>"));
        let parsed = AutoParser.parse(&raw_for_test("cut.xml", xml)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        let failures = failures_of(&parsed);
        assert!(failures[0].0.starts_with("memory://test/cut.xml#byte="), "{failures:?}");
        assert!(
            failures[0].1.contains("the pages after it were not read"),
            "{failures:?}"
        );
        let error = AutoParser
            .parse(&raw_for_test(
                "none.xml",
                "<mediawiki><siteinfo></siteinfo></mediawiki>",
            ))
            .unwrap_err();
        assert!(
            error.detail().unwrap_or_default().contains("no <page> element"),
            "{error:?}"
        );
    }
}
