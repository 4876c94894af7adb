//! FictionBook e-books (`.fb2`, or any XML whose root is `<FictionBook>`; zipped as
//! `.fb2.zip`, read through the archive): the format of most e-books in Russian and the other
//! languages of the former Soviet Union, and of many libraries' exports. One document per book:
//!
//! - its title the `<book-title>`; metadata `authors` (first, middle and last names, else the
//!   nickname), `translators`, `language` (`<lang>`), `source_language` (`<src-lang>`),
//!   `date`, `genres`, `series` and `series_number` (`<sequence>`), `publisher`, `year`,
//!   `isbn`; its `<keywords>` its tags;
//! - its `<annotation>` (the blurb) first, then each `<body>`: sections nested in sections,
//!   each section's `<title>` heading what it holds; a named body (`notes`, `comments`)
//!   under its own title, else under its name; the main body's title a paragraph;
//! - paragraphs (`<p>`, `<subtitle>`, `<text-author>`, epigraphs, citations), a poem's stanza
//!   a block of its lines (`<v>`), a table's rows a table block; inline markup (`<emphasis>`,
//!   `<strong>`, a note's link `<a>`) read into its paragraph;
//! - the `<binary>` parts (the cover and the pictures, in base64), the stylesheet and the
//!   document's own history (`<document-info>`: the program that made the file) left out.
//!
//! One quick-xml pass, in memory linear in the file; XML that breaks partway keeps what was read
//! before it and says so.

use quick_xml::events::{BytesStart, Event};

use super::markup_body::table_text;
use super::ooxml::{local_attribute, local_name};
use super::text::collapse_whitespace;
use super::xml::{lenient_reader, next_event, text_of, Damage, HEADING_DEPTH, UNCLOSED_REACH};
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Elements whose text is no part of the book.
const LEFT_OUT: [&[u8]; 6] = [
    b"binary",
    b"stylesheet",
    b"document-info",
    b"src-title-info",
    b"custom-info",
    b"coverpage",
];

/// What the text being gathered becomes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Gathering {
    Paragraph,
    /// A stanza's line.
    Verse,
    /// A table row's cell.
    Cell,
    /// A description field.
    Field(Field),
}

/// A field of the description.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Field {
    Genre,
    BookTitle,
    Keywords,
    Date,
    Language,
    SourceLanguage,
    Publisher,
    Year,
    Isbn,
    /// A part of the name of the author or translator being read (whether the nickname).
    NamePart {
        nickname: bool,
    },
}

/// A person of the description being read: their name's parts, and whether a translator.
struct Person {
    parts: Vec<String>,
    nickname: String,
    translator: bool,
}

/// What the book's description says.
#[derive(Default)]
struct Description {
    title: String,
    authors: Vec<String>,
    translators: Vec<String>,
    genres: Vec<String>,
    keywords: Vec<String>,
    date: String,
    language: String,
    source_language: String,
    series: Option<(String, Option<String>)>,
    publisher: String,
    year: String,
    isbn: String,
}

/// A section (or body) open, and the title it has read.
struct Open {
    heading: Option<String>,
    /// Whether its title is a heading (a section's, a named body's) or a paragraph (the
    /// main body's).
    titles: bool,
}

/// Open elements of the names the reading depends on, counted.
#[derive(Default)]
struct Within {
    description: usize,
    title_info: usize,
    annotation: usize,
    poem: usize,
}

impl Within {
    fn count(&mut self, name: &[u8], opened: bool) {
        let count = match name {
            b"description" => &mut self.description,
            b"title-info" => &mut self.title_info,
            b"annotation" => &mut self.annotation,
            b"poem" => &mut self.poem,
            _ => return,
        };
        *count = if opened { *count + 1 } else { count.saturating_sub(1) };
    }
}

/// The book as it is read.
#[derive(Default)]
struct Reader {
    description: Description,
    blocks: Vec<Block>,
    annotation: Vec<Block>,
    /// The open sections and bodies, outermost first.
    sections: Vec<Open>,
    /// The element names open, outermost first.
    names: Vec<Vec<u8>>,
    left_out_depth: usize,
    /// How many of the elements the reading depends on are open.
    within: Within,
    /// The text being gathered, and how many elements were open outside its own.
    gathering: Option<(Gathering, String, usize)>,
    /// The title being read (its paragraphs), for the innermost open section.
    title: Option<Vec<String>>,
    stanza: Option<Vec<String>>,
    row: Option<Vec<String>>,
    table: Option<Vec<Vec<String>>>,
    person: Option<Person>,
    /// The main body's title, the document's where the description gives none.
    body_title: Option<String>,
}

pub(super) fn parse(raw: &RawDocument, text: &str) -> Result<Parsed, ParseError> {
    let mut xml = lenient_reader(text);
    let mut book = Reader::default();
    let mut damage: Option<Damage> = None;
    while let Some(event) = next_event(&mut xml, "FictionBook", book.read_any(), &mut damage)? {
        match event {
            Event::Start(start) => book.start(&start),
            Event::Empty(empty) => {
                book.start(&empty);
                book.end(local_name(empty.name().as_ref()));
            }
            Event::Text(text) if book.left_out_depth == 0 => book.text(&text_of(&text)),
            Event::CData(data) if book.left_out_depth == 0 => book.text(&String::from_utf8_lossy(&data)),
            Event::End(end) => book.end(local_name(end.name().as_ref())),
            _ => {}
        }
    }
    book.finish_open();
    let Reader {
        description,
        annotation,
        blocks,
        body_title,
        ..
    } = book;
    let mut all = annotation;
    all.extend(blocks);
    if all.iter().all(|b| b.text.trim().is_empty()) {
        return match damage {
            Some((at, error)) => Err(ParseError::Corrupt(format!("FictionBook at byte {at}: {error}"))),
            None => Err(ParseError::NoTextIn("a FictionBook with no text in its bodies".into())),
        };
    }
    let title = [description.title.clone(), body_title.unwrap_or_default()]
        .into_iter()
        .find(|t| !t.is_empty())
        .unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_raw(raw, title, all);
    description.into_metadata(&mut document);
    if let Some((at, error)) = damage {
        document.warn(format!(
            "the FictionBook's XML cannot be read on from byte {at} ({error}); the text after it was left out"
        ));
    }
    Ok(Parsed::one(document))
}

impl Reader {
    fn read_any(&self) -> bool {
        !self.blocks.is_empty() || !self.annotation.is_empty() || !self.description.title.is_empty()
    }

    fn start(&mut self, element: &BytesStart) {
        let name = local_name(element.name().as_ref()).to_vec();
        if self.left_out_depth > 0 || LEFT_OUT.contains(&name.as_slice()) {
            self.left_out_depth += 1;
        } else if self.gathering.is_none() {
            // (Inline markup inside a paragraph reads into it.)
            if self.within.description > 0 {
                self.start_described(element, &name);
            } else {
                self.start_in_body(element, &name);
            }
        }
        self.within.count(&name, true);
        self.names.push(name);
    }

    /// Starts gathering the text of the element about to open.
    fn gather(&mut self, gathering: Gathering) {
        self.gathering = Some((gathering, String::new(), self.names.len()));
    }

    fn start_described(&mut self, element: &BytesStart, name: &[u8]) {
        let in_title_info = self.within.title_info > 0;
        let field = match name {
            b"author" | b"translator" if in_title_info => {
                self.person = Some(Person {
                    parts: Vec::new(),
                    nickname: String::new(),
                    translator: name == b"translator",
                });
                None
            }
            b"first-name" | b"middle-name" | b"last-name" | b"nickname" if self.person.is_some() => {
                Some(Field::NamePart {
                    nickname: name == b"nickname",
                })
            }
            b"genre" if in_title_info => Some(Field::Genre),
            b"book-title" if in_title_info => Some(Field::BookTitle),
            b"keywords" if in_title_info => Some(Field::Keywords),
            b"date" if in_title_info => {
                self.description.date = local_attribute(element, b"value").unwrap_or_default();
                Some(Field::Date)
            }
            b"lang" if in_title_info => Some(Field::Language),
            b"src-lang" if in_title_info => Some(Field::SourceLanguage),
            b"sequence" if in_title_info && self.description.series.is_none() => {
                let series = local_attribute(element, b"name").map(|n| collapse_whitespace(&n));
                self.description.series = series
                    .filter(|n| !n.is_empty())
                    .map(|n| (n, local_attribute(element, b"number").filter(|v| !v.trim().is_empty())));
                None
            }
            b"publisher" => Some(Field::Publisher),
            b"year" => Some(Field::Year),
            b"isbn" => Some(Field::Isbn),
            b"p" | b"v" | b"subtitle" | b"text-author" if self.within.annotation > 0 => {
                self.gather(Gathering::Paragraph);
                None
            }
            _ => None,
        };
        if let Some(field) = field {
            self.gather(Gathering::Field(field));
        }
    }

    fn start_in_body(&mut self, element: &BytesStart, name: &[u8]) {
        match name {
            b"body" => {
                let named = local_attribute(element, b"name").map(|n| collapse_whitespace(&n));
                let named = named.filter(|n| !n.is_empty());
                let titles = named.is_some();
                self.sections.push(Open { heading: named, titles });
            }
            b"section" => self.sections.push(Open {
                heading: None,
                titles: true,
            }),
            b"title" if self.within.poem == 0 => self.title = Some(Vec::new()),
            b"stanza" => self.stanza = Some(Vec::new()),
            b"table" => self.table = Some(Vec::new()),
            b"tr" => self.row = Some(Vec::new()),
            b"td" | b"th" if self.row.is_some() => self.gather(Gathering::Cell),
            b"v" if self.stanza.is_some() => self.gather(Gathering::Verse),
            b"p" | b"v" | b"subtitle" | b"text-author" => self.gather(Gathering::Paragraph),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, gathered, _)) = self.gathering.as_mut() {
            gathered.push_str(text);
        }
    }

    fn end(&mut self, name: &[u8]) {
        // An end tag closes the innermost open element of its name, and those left open in it
        // (looked for among the innermost few: an end tag of nothing open is passed over).
        let reach = self.names.len().saturating_sub(UNCLOSED_REACH);
        let Some(at) = self.names[reach..].iter().rposition(|open| open == name) else {
            return;
        };
        while self.names.len() > reach + at {
            let closed = self.names.pop().unwrap_or_default();
            self.within.count(&closed, false);
            self.close(&closed);
        }
    }

    fn close(&mut self, name: &[u8]) {
        if self.left_out_depth > 0 {
            self.left_out_depth -= 1;
            return;
        }
        if let Some((gathering, text, _)) = self.gathering.take_if(|(_, _, outside)| *outside == self.names.len()) {
            self.gathered(gathering, collapse_whitespace(&text));
            return;
        }
        if self.gathering.is_some() {
            return;
        }
        match name {
            b"author" | b"translator" => {
                if let Some(person) = self.person.take() {
                    let name = match person.parts.join(" ") {
                        parts if parts.is_empty() => person.nickname,
                        parts => parts,
                    };
                    if !name.is_empty() {
                        match person.translator {
                            true => self.description.translators.push(name),
                            false => self.description.authors.push(name),
                        }
                    }
                }
            }
            b"title" => {
                if let Some(lines) = self.title.take() {
                    self.titled(title_of(&lines));
                }
            }
            b"stanza" => {
                if let Some(lines) = self.stanza.take().filter(|lines| !lines.is_empty()) {
                    self.push_block(Block::text(lines.join("\n"), &[]));
                }
            }
            b"tr" => {
                if let (Some(row), Some(table)) = (self.row.take(), self.table.as_mut()) {
                    table.push(row);
                }
            }
            b"table" => {
                if let Some(rows) = self.table.take() {
                    let text = table_text(&rows);
                    if !text.is_empty() {
                        self.push_block(Block::of_kind(text, ContentType::Table, Vec::new()));
                    }
                }
            }
            b"section" | b"body" => {
                self.sections.pop();
            }
            _ => {}
        }
    }

    fn gathered(&mut self, gathering: Gathering, text: String) {
        if text.is_empty() {
            return;
        }
        match (gathering, self.title.as_mut(), self.stanza.as_mut(), self.row.as_mut()) {
            (Gathering::Paragraph, Some(title), _, _) => title.push(text),
            (Gathering::Paragraph | Gathering::Verse, None, Some(lines), _) => lines.push(text),
            (Gathering::Paragraph | Gathering::Verse, ..) => self.push_block(Block::text(text, &[])),
            (Gathering::Cell, _, _, Some(row)) => row.push(text),
            (Gathering::Cell, ..) => {}
            (Gathering::Field(field), ..) => self.description.fill(field, text, self.person.as_mut()),
        }
    }

    /// The title just read: the innermost open section's heading, or the main body's title.
    fn titled(&mut self, title: String) {
        if title.is_empty() {
            return;
        }
        let depth = self.sections.len();
        match self.sections.last_mut() {
            Some(open) if open.titles && depth <= HEADING_DEPTH => open.heading = Some(title),
            Some(_) if depth == 1 => {
                self.body_title.get_or_insert_with(|| title.clone());
                self.push_block(Block::text(title, &[]));
            }
            _ => self.push_block(Block::text(title, &[])),
        }
    }

    /// A block under the open sections' headings (the description's annotation apart).
    fn push_block(&mut self, mut block: Block) {
        if self.within.description > 0 {
            self.annotation.push(block);
            return;
        }
        block.heading_path = self.sections.iter().filter_map(|s| s.heading.clone()).collect();
        self.blocks.push(block);
    }

    /// What was left open at the end of the file (XML broken partway), kept.
    fn finish_open(&mut self) {
        while let Some(name) = self.names.pop() {
            self.within.count(&name, false);
            self.close(&name);
        }
    }
}

/// A title's paragraphs as one line: `Part One. The Beginning`.
fn title_of(lines: &[String]) -> String {
    let mut title = String::new();
    for line in lines {
        if !title.is_empty() {
            let ends = title.ends_with(|c: char| c.is_ascii_punctuation() || "。！？…".contains(c));
            title.push_str(if ends { " " } else { ". " });
        }
        title.push_str(line);
    }
    title
}

impl Description {
    fn fill(&mut self, field: Field, text: String, person: Option<&mut Person>) {
        match field {
            Field::NamePart { nickname } => {
                // A nickname names a person only where no name does.
                if let Some(person) = person {
                    match nickname {
                        true => person.nickname = text,
                        false => person.parts.push(text),
                    }
                }
            }
            Field::Genre => self.genres.push(text),
            Field::BookTitle => self.title = text,
            Field::Keywords => self.keywords.extend(
                text.split([',', ';'])
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .map(str::to_string),
            ),
            Field::Date if self.date.is_empty() => self.date = text,
            Field::Date => {}
            Field::Language => self.language = text,
            Field::SourceLanguage => self.source_language = text,
            Field::Publisher => self.publisher = text,
            Field::Year => self.year = text,
            Field::Isbn => self.isbn = text,
        }
    }

    fn into_metadata(self, document: &mut Document) {
        let metadata = &mut document.metadata;
        let mut text = |key: &str, value: String| {
            if !value.trim().is_empty() {
                metadata.insert(key.into(), value.trim().into());
            }
        };
        text("language", self.language);
        text("source_language", self.source_language);
        text("date", self.date);
        text("publisher", self.publisher);
        text("year", self.year);
        text("isbn", self.isbn);
        if let Some((series, number)) = self.series {
            text("series", series);
            text("series_number", number.unwrap_or_default());
        }
        for (key, list) in [
            ("authors", self.authors),
            ("translators", self.translators),
            ("genres", self.genres),
        ] {
            if !list.is_empty() {
                metadata.insert(key.into(), list.into());
            }
        }
        for keyword in self.keywords {
            if !document.tags.contains(&keyword) {
                document.tags.push(keyword);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, outline_of, raw_for_test, AutoParser, ContentType, Parser};

    const BOOK: &str = r##"<?xml version="1.0" encoding="utf-8"?>
<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0" xmlns:l="http://www.w3.org/1999/xlink">
<stylesheet type="text/css">p { text-indent: 1em }</stylesheet>
<description>
 <title-info>
  <genre>sf_space</genre><genre>adventure</genre>
  <author><first-name>Иван</first-name><middle-name>Ильич</middle-name><last-name>Петров</last-name></author>
  <author><nickname>Скиталец</nickname></author>
  <book-title>Звёздный путь</book-title>
  <annotation><p>Роман о <emphasis>долгом</emphasis> полёте.</p></annotation>
  <keywords>космос, экипаж</keywords>
  <date value="2010-01-01">2010</date>
  <coverpage><image l:href="#cover.jpg"/></coverpage>
  <lang>ru</lang><src-lang>en</src-lang>
  <translator><first-name>Анна</first-name><last-name>Смирнова</last-name></translator>
  <sequence name="Дальний космос" number="2"/>
 </title-info>
 <document-info><author><nickname>scanner</nickname></author><program-used>FictionBook Editor 2.6</program-used><id>ABC-123</id></document-info>
 <publish-info><publisher>Мир</publisher><year>2011</year><isbn>978-5-00-000000-0</isbn></publish-info>
</description>
<body>
 <title><p>Иван Петров</p><p>Звёздный путь</p></title>
 <epigraph><p>Per aspera ad astra.</p><text-author>Сенека</text-author></epigraph>
 <section><title><p>Часть первая</p><p>Отлёт</p></title>
  <section><title><p>Глава 1</p></title>
   <p>Корабль летел к <strong>далёкой</strong> звезде<a l:href="#n1" type="note">[1]</a>, и экипаж спал.</p>
   <empty-line/>
   <poem><title><p>Песня</p></title><stanza><v>Звёзды горят,</v><v>корабли летят.</v></stanza></poem>
   <table><tr><th>Палуба</th><th>Отсек</th></tr><tr><td>1</td><td>рубка</td></tr></table>
  </section>
 </section>
</body>
<body name="notes">
 <title><p>Примечания</p></title>
 <section id="n1"><title><p>1</p></title><p>Звезда Альтаир.</p></section>
</body>
<binary id="cover.jpg" content-type="image/jpeg">/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/</binary>
</FictionBook>"##;

    #[test]
    fn a_books_description_is_its_title_and_metadata_and_its_sections_head_their_text() {
        let document = document_of("путь.fb2", BOOK);
        assert_eq!(document.title, "Звёздный путь");
        let meta = &document.metadata;
        assert_eq!(meta["authors"], serde_json::json!(["Иван Ильич Петров", "Скиталец"]));
        assert_eq!(meta["translators"], serde_json::json!(["Анна Смирнова"]));
        assert_eq!(meta["genres"], serde_json::json!(["sf_space", "adventure"]));
        assert_eq!(
            (&meta["language"], &meta["source_language"], &meta["date"]),
            (&"ru".into(), &"en".into(), &"2010-01-01".into())
        );
        assert_eq!(
            (&meta["series"], &meta["series_number"]),
            (&"Дальний космос".into(), &"2".into())
        );
        assert_eq!(
            (&meta["publisher"], &meta["year"], &meta["isbn"]),
            (&"Мир".into(), &"2011".into(), &"978-5-00-000000-0".into())
        );
        assert_eq!(document.tags, ["космос", "экипаж"]);
        let chapter = vec!["Часть первая. Отлёт", "Глава 1"];
        assert_eq!(
            outline_of(&document),
            [
                ("Роман о долгом полёте.", vec![], ContentType::Text),
                ("Иван Петров. Звёздный путь", vec![], ContentType::Text),
                ("Per aspera ad astra.", vec![], ContentType::Text),
                ("Сенека", vec![], ContentType::Text),
                (
                    "Корабль летел к далёкой звезде[1], и экипаж спал.",
                    chapter.clone(),
                    ContentType::Text
                ),
                ("Песня", chapter.clone(), ContentType::Text),
                ("Звёзды горят,\nкорабли летят.", chapter.clone(), ContentType::Text),
                ("Палуба | Отсек\n1 | рубка", chapter, ContentType::Table),
                ("Звезда Альтаир.", vec!["Примечания", "1"], ContentType::Text),
            ]
        );
        // Neither the cover's base64, the stylesheet nor the file's own history is text.
        let all: String = document.blocks.iter().map(|b| b.text.as_str()).collect();
        assert!(!all.contains("9j/4AAQ") && !all.contains("text-indent") && !all.contains("Editor"));
    }

    #[test]
    fn a_book_in_windows_1251_without_a_description_is_titled_by_its_body() {
        let xml = r#"<?xml version="1.0" encoding="windows-1251"?><FictionBook><body name="main"><title><p>Повесть</p></title><section><p>Текст главы.</p></section></body></FictionBook>"#;
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(xml);
        let document = document_of("old.fb2", bytes.into_owned());
        assert_eq!(document.title, "old");
        assert_eq!(
            outline_of(&document),
            [("Текст главы.", vec!["Повесть"], ContentType::Text)]
        );
        let unnamed = xml.replace(r#" name="main""#, "");
        let document = document_of("old.fb2", unnamed);
        assert_eq!(document.title, "Повесть");
        assert_eq!(document.blocks[1].text, "Текст главы.");
    }

    #[test]
    fn a_book_broken_partway_keeps_what_was_read_and_one_broken_at_once_fails() {
        let broken = BOOK.replace("<p>Звезда Альтаир.</p>", "<p>Звезда Альтаир.</p><!-- never closed");
        let parsed = AutoParser.parse(&raw_for_test("b.fb2", broken)).unwrap();
        let document = &parsed.documents[0];
        assert!(document.blocks.iter().any(|b| b.text.starts_with("Корабль летел")));
        assert_eq!(document.blocks.last().unwrap().text, "Звезда Альтаир.");
        assert!(
            document.warnings[0].starts_with("the FictionBook's XML cannot be read on from byte"),
            "{:?}",
            document.warnings
        );
        let early = "<?xml version=\"1.0\"?><FictionBook><body><section><!-- never closed <p>x</p></section>";
        let error = AutoParser.parse(&raw_for_test("e.fb2", early)).unwrap_err();
        assert!(error.detail().unwrap().starts_with("FictionBook at byte"), "{error:?}");
        let empty = "<FictionBook><description><title-info><book-title>T</book-title></title-info></description><body/></FictionBook>";
        let error = AutoParser.parse(&raw_for_test("n.fb2", empty)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no text content found: a FictionBook with no text in its bodies"
        );
    }
}
