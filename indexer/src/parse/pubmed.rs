//! PubMed's XML (`<PubmedArticleSet>`: the annual baseline and daily update files,
//! `pubmed25n0001.xml.gz`, and what E-utilities' `efetch` returns): one document per article,
//! named `<file>#pmid=<PMID>`, read into the fields of a BibTeX entry and made a document by
//! [`super::bibtex_entry`] (the same title, byline, venue, abstract and metadata as a `.bib`
//! entry's). A structured abstract's parts keep their labels (`METHODS: ...`); the article's
//! keywords and MeSH headings are its tags; its `url` is its PubMed page. Book chapters and
//! books (`<PubmedBookArticle>`) are read alike. An article held more than once (an update
//! file's revisions, a versioned citation's versions) is read in its highest version, the
//! later of equal ones. An article without a PMID fails alone; XML damaged partway keeps the
//! articles before it.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use super::bibtex::{item_uri, Entry};
use super::bibtex_entry::entry_document;
use super::text::collapse_whitespace;
use super::xml::{broken_partway, next_event, text_of};
use super::{ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

/// Element names kept this deep at most (no field of an article is deeper).
const TRACKED_DEPTH: usize = 12;

/// The field a text element fills, by its name and the names of the elements it is in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Field {
    Pmid,
    Title,
    BookTitle,
    Abstract,
    LastName,
    ForeName,
    Initials,
    CollectiveName,
    Journal,
    Volume,
    Issue,
    Year,
    Month,
    MedlineDate,
    Pages,
    Doi,
    Keyword,
    Mesh,
    Publisher,
}

fn field_of(path: &[Vec<u8>], start: &BytesStart) -> Option<Field> {
    let named = |i: usize| path.len().checked_sub(i + 1).map(|at| path[at].as_slice());
    let (name, parent, grandparent) = (named(0)?, named(1).unwrap_or_default(), named(2).unwrap_or_default());
    let in_references = path
        .iter()
        .any(|p| p == b"ReferenceList" || p == b"CommentsCorrectionsList");
    if in_references {
        return None;
    }
    let attribute_is = |key: &str, value: &str| {
        start
            .try_get_attribute(key)
            .ok()
            .flatten()
            .is_some_and(|a| a.value.as_ref().eq_ignore_ascii_case(value.as_bytes()))
    };
    Some(match (grandparent, parent, name) {
        (_, b"MedlineCitation" | b"BookDocument", b"PMID") => Field::Pmid,
        (_, b"Article" | b"BookDocument", b"ArticleTitle") => Field::Title,
        (_, b"Book", b"BookTitle") => Field::BookTitle,
        (_, b"Abstract", b"AbstractText") => Field::Abstract,
        (_, b"Author", b"LastName") => Field::LastName,
        (_, b"Author", b"ForeName") => Field::ForeName,
        (_, b"Author", b"Initials") => Field::Initials,
        (_, b"Author", b"CollectiveName") => Field::CollectiveName,
        (_, b"Journal", b"Title") => Field::Journal,
        (_, b"JournalIssue", b"Volume") | (_, b"Book", b"Volume") => Field::Volume,
        (_, b"JournalIssue", b"Issue") => Field::Issue,
        (_, b"PubDate", b"Year") => Field::Year,
        (_, b"PubDate", b"Month") => Field::Month,
        (_, b"PubDate", b"MedlineDate") => Field::MedlineDate,
        (_, b"Pagination", b"MedlinePgn") => Field::Pages,
        (_, b"Article" | b"BookDocument", b"ELocationID") if attribute_is("EIdType", "doi") => Field::Doi,
        (b"PubmedData" | b"BookDocument", b"ArticleIdList", b"ArticleId") if attribute_is("IdType", "doi") => {
            Field::Doi
        }
        (_, b"KeywordList", b"Keyword") => Field::Keyword,
        (_, b"MeshHeading", b"DescriptorName") => Field::Mesh,
        (_, b"Publisher", b"PublisherName") => Field::Publisher,
        _ => return None,
    })
}

/// An article as read.
#[derive(Default)]
struct Article {
    kind: &'static str,
    pmid: String,
    /// The PMID's version (a versioned citation's; 1 for most).
    version: u32,
    title: String,
    book_title: String,
    abstract_parts: Vec<String>,
    authors: Vec<String>,
    editors: Vec<String>,
    /// The author being read: last name, fore name, initials, collective name.
    author: [String; 4],
    journal: String,
    volume: String,
    issue: String,
    year: String,
    month: String,
    medline_date: String,
    pages: String,
    doi: String,
    keywords: Vec<String>,
    publisher: String,
}

impl Article {
    fn fill(&mut self, field: Field, label: Option<String>, text: String) {
        let text = collapse_whitespace(&text);
        let set = |slot: &mut String| {
            if slot.is_empty() {
                *slot = text.clone();
            }
        };
        match field {
            Field::Pmid if self.pmid.is_empty() => {
                self.version = label.and_then(|v| v.trim().parse().ok()).unwrap_or(1);
                self.pmid = text;
            }
            Field::Pmid => {}
            Field::Title => set(&mut self.title),
            Field::BookTitle => set(&mut self.book_title),
            Field::Abstract => self.abstract_parts.push(match label.filter(|l| !l.trim().is_empty()) {
                Some(label) => format!("{}: {text}", label.trim()),
                None => text,
            }),
            Field::LastName => self.author[0] = text,
            Field::ForeName => self.author[1] = text,
            Field::Initials => self.author[2] = text,
            Field::CollectiveName => self.author[3] = text,
            Field::Journal => set(&mut self.journal),
            Field::Volume => set(&mut self.volume),
            Field::Issue => set(&mut self.issue),
            Field::Year => set(&mut self.year),
            Field::Month => set(&mut self.month),
            Field::MedlineDate => set(&mut self.medline_date),
            Field::Pages => set(&mut self.pages),
            Field::Doi => set(&mut self.doi),
            Field::Keyword | Field::Mesh => {
                if !text.is_empty() && !self.keywords.contains(&text) {
                    self.keywords.push(text);
                }
            }
            Field::Publisher => set(&mut self.publisher),
        }
    }

    /// The author read ends: `Last, Fore` (initials where no fore name), or a group's name.
    fn end_author(&mut self, editors: bool) {
        let [last, fore, initials, collective] = std::mem::take(&mut self.author);
        let first = if fore.is_empty() { initials } else { fore };
        let name = match (last.is_empty(), first.is_empty()) {
            (false, false) => format!("{last}, {first}"),
            (false, true) => last,
            _ => collective,
        };
        if !name.is_empty() {
            match editors {
                true => self.editors.push(name),
                false => self.authors.push(name),
            }
        }
    }

    /// The article as a BibTeX entry of plain values.
    fn entry(self, key: String) -> Entry {
        let year = match self.year.is_empty() {
            // `2023 Jan-Feb`, `1998 Spring`: the year is its first four digits.
            true => self
                .medline_date
                .split(|c: char| !c.is_ascii_digit())
                .find(|part| part.len() == 4)
                .unwrap_or_default()
                .to_string(),
            false => self.year,
        };
        // A chapter of a book in PubMed's bookshelf; a book alone is titled by its book title.
        let kind = match self.kind == "book" && !self.title.is_empty() && !self.book_title.is_empty() {
            true => "incollection",
            false => self.kind,
        };
        let mut fields = vec![
            ("title".to_string(), self.title),
            ("author".to_string(), self.authors.join("\n")),
            ("editor".to_string(), self.editors.join("\n")),
            ("journal".to_string(), self.journal),
            ("volume".to_string(), self.volume),
            ("number".to_string(), self.issue),
            ("pages".to_string(), self.pages),
            ("year".to_string(), year),
            ("month".to_string(), self.month),
            ("publisher".to_string(), self.publisher),
            ("abstract".to_string(), self.abstract_parts.join("\n")),
            ("keywords".to_string(), self.keywords.join("\n")),
            ("doi".to_string(), self.doi),
        ];
        if !self.book_title.is_empty() {
            fields.push(("booktitle".to_string(), self.book_title));
        }
        if !self.pmid.is_empty() {
            fields.push((
                "url".to_string(),
                format!("https://pubmed.ncbi.nlm.nih.gov/{}/", self.pmid),
            ));
        }
        fields.retain(|(_, value)| !value.trim().is_empty());
        Entry {
            kind: kind.to_string(),
            key,
            fields,
            plain: true,
        }
    }
}

/// The articles of an article set, and where its XML could not be read on.
struct ArticleSet {
    articles: Vec<Article>,
    damage: Option<(u64, String)>,
}

fn read_articles(xml: &str) -> Result<ArticleSet, ParseError> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut set = ArticleSet {
        articles: Vec::new(),
        damage: None,
    };
    let mut path: Vec<Vec<u8>> = Vec::new();
    let mut article: Option<Article> = None;
    // The field being read, its depth and its label; its text, inner elements' included.
    let mut reading: Option<(Field, usize, Option<String>, String)> = None;
    let mut editors = false;
    while let Some(event) = next_event(&mut reader, "PubMed XML", !set.articles.is_empty(), &mut set.damage)? {
        match event {
            Event::Start(start) => {
                let name = start.local_name().as_ref().to_vec();
                match name.as_slice() {
                    b"PubmedArticle" => article = Some(Article::default().of_kind("article")),
                    b"PubmedBookArticle" => article = Some(Article::default().of_kind("book")),
                    b"AuthorList" => {
                        editors = start
                            .try_get_attribute("Type")
                            .ok()
                            .flatten()
                            .is_some_and(|a| a.value.as_ref() == b"editors")
                    }
                    _ => {}
                }
                path.push(if path.len() < TRACKED_DEPTH { name } else { Vec::new() });
                if reading.is_none() && article.is_some() {
                    if let Some(field) = field_of(&path, &start) {
                        // A structured abstract's part's label; a PMID's version.
                        let label = start
                            .try_get_attribute(if field == Field::Pmid { "Version" } else { "Label" })
                            .ok()
                            .flatten()
                            .map(|a| String::from_utf8_lossy(&a.value).into_owned());
                        reading = Some((field, path.len(), label, String::new()));
                    }
                }
            }
            Event::End(_) => {
                let depth = path.len();
                let name = path.pop().unwrap_or_default();
                if reading.as_ref().is_some_and(|(_, at, _, _)| *at == depth) {
                    if let (Some((field, _, label, text)), Some(article)) = (reading.take(), article.as_mut()) {
                        article.fill(field, label, text);
                    }
                }
                match name.as_slice() {
                    b"Author" => {
                        if let Some(article) = article.as_mut() {
                            article.end_author(editors);
                        }
                    }
                    b"PubmedArticle" | b"PubmedBookArticle" => set.articles.extend(article.take()),
                    _ => {}
                }
            }
            Event::Text(text) => {
                if let Some((_, _, _, read)) = reading.as_mut() {
                    read.push_str(&text_of(&text));
                }
            }
            Event::CData(data) => {
                if let Some((_, _, _, read)) = reading.as_mut() {
                    read.push_str(&String::from_utf8_lossy(&data));
                }
            }
            _ => {}
        }
    }
    Ok(set)
}

impl Article {
    fn of_kind(mut self, kind: &'static str) -> Self {
        self.kind = kind;
        self
    }
}

pub(super) fn parse(raw: &RawDocument, xml: &str) -> Result<Parsed, ParseError> {
    let set = read_articles(xml)?;
    if set.articles.is_empty() && set.damage.is_none() {
        return Err(ParseError::Corrupt(
            "PubMed XML: no <PubmedArticle> found in the <PubmedArticleSet>".into(),
        ));
    }
    let mut parsed = Parsed::default();
    // An update file may hold an article more than once (a versioned citation's versions, a
    // revision after the first): the highest version is kept, the later of equal ones.
    let mut kept: HashMap<String, usize> = HashMap::new();
    let mut articles: Vec<Article> = Vec::new();
    for (place, article) in set.articles.into_iter().enumerate() {
        let pmid = article.pmid.trim().to_string();
        if pmid.is_empty() {
            parsed.failures.push(ItemFailure {
                uri: format!("{}#article={}", raw.uri, place + 1),
                reason: format!("article {}: the article has no PMID", place + 1),
            });
            continue;
        }
        match kept.get(&pmid).copied() {
            Some(at) if articles[at].version > article.version => {}
            Some(at) => articles[at] = article,
            None => {
                kept.insert(pmid, articles.len());
                articles.push(article);
            }
        }
    }
    for article in articles {
        let pmid = article.pmid.trim().to_string();
        let uri = item_uri(raw, "pmid", &pmid);
        let entry = article.entry(pmid.clone());
        if let Some(mut document) = entry_document(raw, &entry, uri) {
            document.metadata.insert("pmid".into(), pmid.into());
            parsed.documents.push(document);
        }
    }
    if let Some(damage) = set.damage {
        parsed.failures.push(broken_partway(raw, damage, "the XML", "articles"));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    const SET: &str = r#"<?xml version="1.0" ?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">
<PubmedArticleSet>
<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">38147649</PMID>
<Article PubModel="Print-Electronic"><Journal><ISSN IssnType="Electronic">1091-6490</ISSN>
<JournalIssue CitedMedium="Internet"><Volume>121</Volume><Issue>1</Issue><PubDate><Year>2024</Year><Month>Jan</Month><Day>02</Day></PubDate></JournalIssue>
<Title>Proceedings of the National Academy of Sciences of the United States of America</Title></Journal>
<ArticleTitle>Social anxiety disorder-associated gut microbiota increases <i>social</i> fear.</ArticleTitle>
<Pagination><MedlinePgn>e2308706120</MedlinePgn></Pagination>
<ELocationID EIdType="pii" ValidYN="Y">e2308706120</ELocationID><ELocationID EIdType="doi" ValidYN="Y">10.1073/pnas.2308706120</ELocationID>
<Abstract><AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Social anxiety disorder (SAD) is a crippling disorder.</AbstractText>
<AbstractText Label="RESULTS">Mice &amp; microbiota.</AbstractText></Abstract>
<AuthorList CompleteYN="Y"><Author ValidYN="Y"><LastName>Ritz</LastName><ForeName>Nathaniel L</ForeName><Initials>NL</Initials></Author>
<Author><LastName>Cryan</LastName><Initials>JF</Initials></Author><Author><CollectiveName>SAD Study Group</CollectiveName></Author></AuthorList>
</Article>
<MeshHeadingList><MeshHeading><DescriptorName UI="D000818" MajorTopicYN="N">Animals</DescriptorName></MeshHeading>
<MeshHeading><DescriptorName UI="D000069196">Gastrointestinal Microbiome</DescriptorName></MeshHeading></MeshHeadingList>
<KeywordList Owner="NOTNLM"><Keyword MajorTopicYN="N">microbiome</Keyword></KeywordList>
<CommentsCorrectionsList><CommentsCorrections RefType="Cites"><RefSource>Cell. 2019</RefSource><PMID Version="1">1111</PMID></CommentsCorrections></CommentsCorrectionsList>
</MedlineCitation>
<PubmedData><ArticleIdList><ArticleId IdType="pubmed">38147649</ArticleId></ArticleIdList>
<ReferenceList><Reference><Citation>Someone else.</Citation><ArticleIdList><ArticleId IdType="doi">10.1/other</ArticleId></ArticleIdList></Reference></ReferenceList></PubmedData>
</PubmedArticle>
<PubmedArticle><MedlineCitation><PMID Version="1">1000</PMID><Article><Journal><JournalIssue><PubDate><MedlineDate>1975 Jan-Feb</MedlineDate></PubDate></JournalIssue><Title>Old Journal</Title></Journal>
<ArticleTitle>[An old title].</ArticleTitle></Article></MedlineCitation>
<PubmedData><ArticleIdList><ArticleId IdType="doi">10.1000/old</ArticleId></ArticleIdList></PubmedData></PubmedArticle>
<PubmedArticle><MedlineCitation><PMID Version="2">1000</PMID><Article><Journal><JournalIssue><PubDate><MedlineDate>1975 Jan-Feb</MedlineDate></PubDate></JournalIssue></Journal><ArticleTitle>[An old title, version 2].</ArticleTitle></Article></MedlineCitation>
<PubmedData><ArticleIdList><ArticleId IdType="doi">10.1000/old</ArticleId></ArticleIdList></PubmedData></PubmedArticle>
<PubmedArticle><MedlineCitation><PMID Version="1">1000</PMID><Article><ArticleTitle>[An old title, version 1 again].</ArticleTitle></Article></MedlineCitation></PubmedArticle>
<PubmedArticle><MedlineCitation><Article><ArticleTitle>No PMID.</ArticleTitle></Article></MedlineCitation></PubmedArticle>
<PubmedBookArticle><BookDocument><PMID Version="1">20301546</PMID><ArticleIdList><ArticleId IdType="bookaccession">NBK1116</ArticleId></ArticleIdList>
<Book><Publisher><PublisherName>University of Washington, Seattle</PublisherName></Publisher><BookTitle book="gene">GeneReviews</BookTitle><PubDate><Year>1993</Year></PubDate>
<AuthorList Type="editors"><Author><LastName>Adam</LastName><ForeName>Margaret P</ForeName></Author></AuthorList></Book>
<ArticleTitle>Fragile X Syndrome</ArticleTitle><AuthorList Type="authors"><Author><LastName>Hunter</LastName><ForeName>Jessica Ezzell</ForeName></Author></AuthorList>
<Abstract><AbstractText Label="CLINICAL CHARACTERISTICS">FXS occurs in males.</AbstractText></Abstract></BookDocument></PubmedBookArticle>
</PubmedArticleSet>
"#;

    #[test]
    fn articles_are_documents_read_as_bibliography_entries() {
        let parsed = AutoParser.parse(&raw_for_test("pubmed25n0001.xml", SET)).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/pubmed25n0001.xml#pmid=38147649",
                "memory://test/pubmed25n0001.xml#pmid=1000",
                "memory://test/pubmed25n0001.xml#pmid=20301546",
            ]
        );
        let first = &parsed.documents[0];
        assert_eq!(
            first.title,
            "Social anxiety disorder-associated gut microbiota increases social fear."
        );
        let texts: Vec<&str> = first.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts[0], first.title);
        assert_eq!(texts[1], "Nathaniel L Ritz, JF Cryan, SAD Study Group (2024)");
        assert!(
            texts[2].starts_with("Proceedings of the National Academy of Sciences of the United States of America")
                && texts[2].contains("121")
                && texts[2].contains("e2308706120"),
            "{texts:?}"
        );
        assert_eq!(
            texts[3],
            "BACKGROUND: Social anxiety disorder (SAD) is a crippling disorder. RESULTS: Mice & microbiota."
        );
        assert_eq!(texts[4], "Keywords: Animals, Gastrointestinal Microbiome, microbiome");
        assert_eq!(first.tags, ["Animals", "Gastrointestinal Microbiome", "microbiome"]);
        let metadata = &first.metadata;
        assert_eq!(metadata["pmid"], "38147649");
        assert_eq!(metadata["year"], 2024);
        assert_eq!(metadata["date"], "2024-01");
        assert_eq!(metadata["doi"], "10.1073/pnas.2308706120");
        assert_eq!(metadata["url"], "https://pubmed.ncbi.nlm.nih.gov/38147649/");
        assert_eq!(metadata["authors"][2], "SAD Study Group");
        // A MedlineDate's year; the DOI from the article ids, not from a reference's; of an
        // article held three times, its highest version.
        let old = &parsed.documents[1];
        assert_eq!(old.title, "[An old title, version 2].");
        assert_eq!(old.metadata["year"], 1975);
        assert_eq!(old.metadata["doi"], "10.1000/old");
        // A chapter of a book: its editors, its book, its publisher.
        let chapter = &parsed.documents[2];
        assert_eq!(chapter.metadata["entry_type"], "incollection");
        let text = chapter
            .blocks
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(text.contains("Jessica Ezzell Hunter (1993)"), "{text}");
        assert!(text.contains("In GeneReviews"), "{text}");
        assert!(text.contains("Margaret P Adam"), "{text}");
        assert!(text.contains("University of Washington, Seattle"), "{text}");
        assert!(
            text.contains("CLINICAL CHARACTERISTICS: FXS occurs in males."),
            "{text}"
        );
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/pubmed25n0001.xml#article=5",
                "article 5: the article has no PMID"
            )]
        );
    }

    #[test]
    fn xml_damaged_partway_keeps_the_articles_before_it() {
        let cut = SET.replace(
            "<PubmedArticle><MedlineCitation><PMID Version=\"2\">",
            "<PubmedArticle></Broken>",
        );
        let parsed = AutoParser.parse(&raw_for_test("set.xml", cut)).unwrap();
        assert_eq!(parsed.documents.len(), 2);
        let failures = failures_of(&parsed);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].0.starts_with("memory://test/set.xml#byte="), "{failures:?}");
        assert!(
            failures[0].1.contains("the articles after it were not read"),
            "{failures:?}"
        );
        let empty = "<?xml version=\"1.0\"?><PubmedArticleSet></PubmedArticleSet>";
        let error = AutoParser.parse(&raw_for_test("set.xml", empty)).unwrap_err();
        assert!(
            error.detail().unwrap_or_default().contains("no <PubmedArticle>"),
            "{error:?}"
        );
    }

    #[test]
    fn hostile_sets_read_in_linear_time() {
        let started = std::time::Instant::now();
        let n = 200_000;
        let deep = format!(
            "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>{}t{}</ArticleTitle>\
             <AuthorList>{}</AuthorList></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>",
            "<i>".repeat(n),
            "</i>".repeat(n),
            "<Author></Author>".repeat(n)
        );
        let parsed = AutoParser.parse(&raw_for_test("deep.xml", deep)).unwrap();
        assert_eq!(parsed.documents[0].title, "t");
        let many = format!(
            "<PubmedArticleSet>{}</PubmedArticleSet>",
            "<PubmedArticle><MedlineCitation><PMID Version=\"1\">7</PMID></MedlineCitation></PubmedArticle>"
                .repeat(n / 4)
        );
        let parsed = AutoParser.parse(&raw_for_test("many.xml", many));
        // One article held 50,000 times, with no field to read: no document, no failure.
        assert!(parsed.is_err(), "{parsed:?}");
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
