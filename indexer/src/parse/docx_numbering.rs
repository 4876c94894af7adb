//! A Word document's list numbers, from its numbering part (`word/numbering.xml`): Word does not
//! write a numbered paragraph's number (`2.1`, `(b)`, `IV.`) into the text but counts it as it
//! lays the document out, so a clause's or a numbered heading's number ("section 2.1") would be
//! lost. A paragraph is numbered by its own `w:numPr` (`w:numId`, `w:ilvl`) or by its style's;
//! `w:numId` 0 takes its style's numbering away. Each `w:num` uses an abstract list's levels
//! (`w:abstractNum`: start, number format, level text such as `%1.%2`), with a level's start
//! overridden (`w:startOverride`) or the level replaced (`w:lvlOverride/w:lvl`). As in Word,
//! the lists using one abstract list count together, a list whose start is overridden starts
//! again where it is first used, and a level starts again after any level above it. Bullets
//! give no number; formats quarry does not write count in decimal. An abstract list that takes
//! its levels from a list style (`w:numStyleLink`, as Word writes a list using a multilevel list
//! style) uses the abstract list defining that style (`w:styleLink`), and counts with it.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use super::list_number::Format;
use super::ooxml::{local_attribute, local_name, Package, PartReader, Relationship};
use super::ParseError;

/// Word's nine list levels (`w:ilvl` 0-8).
const LEVELS: usize = 9;
/// Abstract lists and lists kept (a long contract has a few hundred; each holds nine levels),
/// so a hostile part's memory stays in tens of megabytes.
const MAX_LISTS: usize = 1 << 16;
/// A level text longer than this (Word's own are a few characters) gives no number, so a
/// hostile one cannot be repeated into every paragraph.
const MAX_LEVEL_TEXT_CHARS: usize = 64;

/// One level of a list.
#[derive(Default)]
struct Level {
    start: Option<u32>,
    format: Format,
    /// `%1.%2.`: the counters of levels 1 and 2 and the dots between.
    text: Option<String>,
    /// Every counter written in decimal (`w:isLgl`, "legal" numbering: `2.1` under `II`).
    legal: bool,
    /// The paragraph style this level is linked to (`w:pStyle`).
    style: Option<String>,
    /// After which level this one starts again (`w:lvlRestart`, 1-9; 0 never): by default after
    /// any level above it.
    restart: Option<u32>,
}

type Levels = [Level; LEVELS];

/// An abstract list (`w:abstractNum`).
#[derive(Default)]
struct AbstractList {
    levels: Levels,
    /// The list style this list defines (`w:styleLink`).
    defines_style: Option<String>,
    /// The list style whose definition this list uses instead of levels of its own
    /// (`w:numStyleLink`).
    uses_style: Option<String>,
}

/// A list (`w:num`): the abstract list it uses and what it overrides.
#[derive(Default)]
struct List {
    abstract_id: String,
    starts: [Option<u32>; LEVELS],
    levels: [Option<Level>; LEVELS],
}

/// The counters of the lists using one abstract list.
#[derive(Default)]
struct Counters {
    /// The last number given at each level; none where the level starts again.
    given: [Option<u32>; LEVELS],
    /// Where each level starts again (its start, or an override of the last list that set one).
    starts: [Option<u32>; LEVELS],
}

/// The numbering of one document, counted as its paragraphs are read in order.
#[derive(Default)]
pub(super) struct Numbering {
    abstracts: HashMap<String, AbstractList>,
    /// The abstract list defining each list style.
    style_definitions: HashMap<String, String>,
    lists: HashMap<String, List>,
    counters: HashMap<String, Counters>,
    /// The lists already used (an override starts a list again where it is first used only).
    used: std::collections::HashSet<String>,
}

/// What numbers a paragraph: its list, and its level where it says (else the level linked to
/// its style, else the first).
#[derive(Clone, Default, PartialEq, Debug)]
pub(super) struct NumberingProperties {
    pub list: Option<String>,
    pub level: Option<u32>,
}

impl NumberingProperties {
    /// Reads `w:numId` or `w:ilvl` into these properties; false for any other element.
    pub fn read(&mut self, element: &BytesStart) -> bool {
        let value = local_attribute(element, b"val");
        match local_name(element.name().as_ref()) {
            b"numId" => self.list = value,
            b"ilvl" => self.level = value.and_then(|v| v.parse().ok()),
            _ => return false,
        }
        true
    }

    /// These properties over `under` (a style's): what these say wins.
    pub fn over(&self, under: &Self) -> Self {
        Self {
            list: self.list.clone().or_else(|| under.list.clone()),
            level: self.level.or(under.level),
        }
    }
}

impl Numbering {
    /// The numbering of the part among `relationships` (the document part's) that holds it.
    pub fn read(package: &mut Package, relationships: &[Relationship]) -> Result<Self, ParseError> {
        let Some((part, xml)) = package.related_part(relationships, "/numbering")? else {
            return Ok(Self::default());
        };
        let mut reader = PartReader::new(&xml, package.format(), &part);
        let mut numbering = Self::default();
        // The abstract list or list being read, and the level inside it.
        let mut abstract_list: Option<(String, AbstractList)> = None;
        let mut list: Option<(String, List)> = None;
        // The level being read (of an abstract list, or replacing one in a list's override),
        // and the level of the list's override being read.
        let (mut level, mut override_level): (Option<(usize, Level)>, Option<usize>) = (None, None);
        loop {
            let (element, empty) = match reader.next()? {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(e) => {
                    match local_name(e.name().as_ref()) {
                        b"lvl" => {
                            let Some((i, read)) = level.take() else { continue };
                            if let Some((_, abstract_list)) = abstract_list.as_mut() {
                                abstract_list.levels[i] = read;
                            } else if let Some((_, list)) = list.as_mut() {
                                list.levels[i] = Some(read);
                            }
                        }
                        b"lvlOverride" => override_level = None,
                        b"abstractNum" => {
                            if let Some((id, read)) = abstract_list.take() {
                                if numbering.abstracts.len() < MAX_LISTS {
                                    if let (Some(style), None) = (&read.defines_style, &read.uses_style) {
                                        numbering.style_definitions.insert(style.clone(), id.clone());
                                    }
                                    numbering.abstracts.insert(id, read);
                                }
                            }
                        }
                        b"num" => {
                            if let Some((id, read)) = list.take() {
                                if numbering.lists.len() < MAX_LISTS {
                                    numbering.lists.insert(id, read);
                                }
                            }
                        }
                        _ => {}
                    }
                    continue;
                }
                Event::Eof => return Ok(numbering),
                _ => continue,
            };
            let value = local_attribute(&element, b"val");
            match local_name(element.name().as_ref()) {
                b"abstractNum" if !empty => {
                    abstract_list = local_attribute(&element, b"abstractNumId").map(|id| (id, AbstractList::default()))
                }
                b"num" if !empty => list = local_attribute(&element, b"numId").map(|id| (id, List::default())),
                b"lvl" if !empty => level = level_index(&element).map(|i| (i, Level::default())),
                b"lvlOverride" if !empty => override_level = level_index(&element),
                b"abstractNumId" => {
                    if let (Some((_, list)), Some(id)) = (list.as_mut(), value) {
                        list.abstract_id = id;
                    }
                }
                b"startOverride" => {
                    if let (Some((_, list)), Some(i)) = (list.as_mut(), override_level) {
                        list.starts[i] = value.and_then(|v| v.parse().ok());
                    }
                }
                name => match (level.as_mut(), abstract_list.as_mut()) {
                    (Some((_, level)), _) => read_level_property(level, name, value),
                    (None, Some((_, abstract_list))) if name == b"styleLink" => abstract_list.defines_style = value,
                    (None, Some((_, abstract_list))) if name == b"numStyleLink" => abstract_list.uses_style = value,
                    _ => {}
                },
            }
        }
    }

    /// The number of a paragraph numbered by `properties` (its own over its style's, the style
    /// being `style`), counting it; none where it is not numbered or its level writes none.
    pub fn number(&mut self, properties: &NumberingProperties, style: Option<&str>) -> Option<String> {
        let list_id = properties.list.as_deref().filter(|id| *id != "0")?;
        let list = self.lists.get(list_id)?;
        // A list style's users count with the list defining it.
        let abstract_id = match &self.abstracts.get(&list.abstract_id)?.uses_style {
            Some(style) => self.style_definitions.get(style)?,
            None => &list.abstract_id,
        };
        let abstract_levels = &self.abstracts.get(abstract_id)?.levels;
        // The list's own levels where it replaces them, else its abstract list's.
        let levels: [&Level; LEVELS] = std::array::from_fn(|i| list.levels[i].as_ref().unwrap_or(&abstract_levels[i]));
        let at = match properties.level {
            Some(level) => level as usize,
            None => style
                .and_then(|style| levels.iter().position(|l| l.style.as_deref() == Some(style)))
                .unwrap_or(0),
        };
        let level = *levels.get(at)?;
        let counters = self.counters.entry(abstract_id.clone()).or_default();
        if self.used.insert(list_id.to_string()) {
            for (i, start) in list.starts.iter().enumerate() {
                if start.is_some() {
                    counters.starts[i] = *start;
                    counters.given[i] = None;
                }
            }
        }
        let start_of = |i: usize, counters: &Counters| counters.starts[i].or(levels[i].start).unwrap_or(0);
        let next = match counters.given[at] {
            Some(given) => given.saturating_add(1),
            None => start_of(at, counters),
        };
        counters.given[at] = Some(next);
        for (below, given) in counters.given.iter_mut().enumerate().skip(at + 1) {
            let starts_again = match levels[below].restart {
                None => true,
                Some(0) => false,
                Some(after) => at < after as usize,
            };
            if starts_again {
                *given = None;
            }
        }
        if level.format == Format::Bullet {
            return None;
        }
        let text = level
            .text
            .as_deref()
            .filter(|t| t.chars().count() <= MAX_LEVEL_TEXT_CHARS)?;
        let mut written = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let placeholder = chars
                .peek()
                .and_then(|d| d.to_digit(10))
                .filter(|d| (1..=9).contains(d));
            match placeholder {
                Some(d) if c == '%' => {
                    chars.next();
                    let i = d as usize - 1;
                    let n = counters.given[i].unwrap_or_else(|| start_of(i, counters));
                    let format = if level.legal && levels[i].format != Format::Nothing {
                        Format::Decimal
                    } else {
                        levels[i].format
                    };
                    written.push_str(&format.write(n));
                }
                // Symbol fonts' private-use characters draw a mark, not text.
                _ if ('\u{E000}'..='\u{F8FF}').contains(&c) => {}
                _ => written.push(c),
            }
        }
        let written = written.trim();
        (!written.is_empty()).then(|| written.to_string())
    }
}

/// A Word number format (`w:numFmt`) as quarry writes it.
fn word_format(name: &str) -> Format {
    match name {
        "decimalZero" => Format::DecimalZero,
        "decimalFullWidth" | "decimalFullWidth2" => Format::DecimalFullWidth,
        "decimalEnclosedCircle" | "decimalEnclosedCircleChinese" => Format::EnclosedCircle,
        "lowerLetter" => Format::LowerLetter,
        "upperLetter" => Format::UpperLetter,
        "lowerRoman" => Format::LowerRoman,
        "upperRoman" => Format::UpperRoman,
        "bullet" => Format::Bullet,
        "none" => Format::Nothing,
        _ => Format::Decimal,
    }
}

/// A `w:lvl`'s or `w:lvlOverride`'s level (`w:ilvl`, 0-8).
fn level_index(element: &BytesStart) -> Option<usize> {
    local_attribute(element, b"ilvl")
        .and_then(|v| v.parse().ok())
        .filter(|i: &usize| *i < LEVELS)
}

fn read_level_property(level: &mut Level, name: &[u8], value: Option<String>) {
    match name {
        b"start" => level.start = value.and_then(|v| v.parse().ok()),
        b"numFmt" => level.format = value.as_deref().map(word_format).unwrap_or_default(),
        b"lvlText" => level.text = value,
        b"isLgl" => level.legal = value.is_none_or(|v| v != "0" && v != "false"),
        b"pStyle" => level.style = value,
        b"lvlRestart" => level.restart = value.and_then(|v| v.parse().ok()),
        _ => {}
    }
}
