//! An ODT's list and heading numbers: like Word, OpenDocument does not write a numbered list
//! item's number (`2.`, `(b)`, `1.3`) into the text, and a heading's chapter number only where
//! the outline style numbers headings; both are counted here as the body is read. A list's
//! levels are a list style's (`text:list-style`, in `styles.xml` or the content's automatic
//! styles: `style:num-format` 1, a, A, i, I or none, `style:num-prefix` / `-suffix`,
//! `text:start-value`, `text:display-levels` for `1.3`); a list inside a list item is the next
//! level of the same list. A list starts counting again unless it continues another
//! (`text:continue-numbering`: the last list of its style; `text:continue-list`: the list with
//! that `xml:id`); an item may set its own value (`text:start-value`), a header item
//! (`text:list-header`) has none. Headings are numbered by the outline style
//! (`text:outline-style`). Where the file carries an item's or heading's number itself
//! (`text:number`, written for readers that do not count), that is the number given.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use super::list_number::Format;
use super::ooxml::{local_attribute, local_name, Package, PartReader};
use super::opendocument::count_attribute;
use super::ParseError;

/// OpenDocument's ten list and outline levels.
const LEVELS: usize = 10;
/// List styles, and lists kept for a later list to continue, at most (a hostile file's many
/// definitions stay in megabytes).
const MAX_KEPT: usize = 1 << 14;
/// A prefix or suffix longer than this gives no number.
const MAX_AFFIX_CHARS: usize = 32;

/// One level of a list style, as far as its number goes.
#[derive(Clone, Default)]
struct LevelStyle {
    format: Format,
    prefix: String,
    suffix: String,
    start: u32,
    /// How many levels' numbers the label shows, this one and those above it (`1.3`).
    display_levels: usize,
}

type StyleLevels = [Option<LevelStyle>; LEVELS];

/// The counters of one list (and of the lists continuing it).
type Counters = [Option<u32>; LEVELS];

/// A `text:list` open around the reader.
struct OpenList {
    /// Its style (its own `text:style-name`, else the enclosing list's).
    style: Option<String>,
    /// Its `xml:id`, for a later list to continue.
    id: Option<String>,
}

/// The list and outline numbering of one ODT, counted as its body is read.
#[derive(Default)]
pub(super) struct OdtNumbering {
    styles: HashMap<String, StyleLevels>,
    outline: StyleLevels,
    outline_counters: Counters,
    open: Vec<OpenList>,
    /// The counters of the outermost list being read.
    counters: Counters,
    /// The last list's counters, the last list's of each style, and each identified list's.
    last: Option<Counters>,
    last_of_style: HashMap<String, Counters>,
    /// With the style the list had (a list continuing it without naming one takes it).
    by_id: HashMap<String, (Option<String>, Counters)>,
    /// The number of the list item being read, for its first paragraph.
    item_number: Option<String>,
    /// The number the file itself carries for the paragraph being read (`text:number`), and
    /// whether the reader is inside it.
    carried: Option<String>,
    in_carried: bool,
}

impl OdtNumbering {
    /// The list styles and outline style of `styles.xml` and of `content` (its automatic
    /// styles, read up to the body). Numbers are labels, not the document's text: where a part
    /// is damaged, the styles read before the damage are kept, the document is read on, and
    /// `warnings` says so (the content's damage is the document's own failure, not told here).
    pub fn read(package: &mut Package, content: &str, warnings: &mut Vec<String>) -> Self {
        let mut numbering = Self::default();
        let styles = package.part("styles.xml").and_then(|styles| match styles {
            Some(styles) => numbering.read_styles(&styles, package.format(), "styles.xml"),
            None => Ok(()),
        });
        if let Err(e) = styles {
            warnings.push(format!(
                "{}; list and heading numbers its styles define were left out",
                e.as_item_reason()
            ));
        }
        let _ = numbering.read_styles(content, package.format(), "content.xml");
        numbering
    }

    fn read_styles(&mut self, xml: &str, format: &'static str, part: &str) -> Result<(), ParseError> {
        let mut reader = PartReader::new(xml, format, part);
        // The list style being read (none for the outline style), while inside one.
        let mut style: Option<(Option<String>, StyleLevels)> = None;
        loop {
            match reader.next()? {
                Event::Start(e) => match local_name(e.name().as_ref()) {
                    b"body" => return Ok(()),
                    b"list-style" => style = Some((local_attribute(&e, b"name"), StyleLevels::default())),
                    b"outline-style" => style = Some((None, StyleLevels::default())),
                    _ => read_level(&e, &mut style),
                },
                Event::Empty(e) => read_level(&e, &mut style),
                Event::End(e) if matches!(local_name(e.name().as_ref()), b"list-style" | b"outline-style") => {
                    match style.take() {
                        Some((Some(name), levels)) if self.styles.len() < MAX_KEPT => {
                            self.styles.insert(name, levels);
                        }
                        Some((None, levels)) => self.outline = levels,
                        _ => {}
                    }
                }
                Event::Eof => return Ok(()),
                _ => {}
            }
        }
    }

    /// A `text:list` starts.
    pub fn open_list(&mut self, element: &BytesStart) {
        let mut style =
            local_attribute(element, b"style-name").or_else(|| self.open.last().and_then(|l| l.style.clone()));
        if self.open.is_empty() {
            let continued = match local_attribute(element, b"continue-list") {
                Some(id) => self.by_id.get(&id).map(|(continued_style, counters)| {
                    style = style.take().or_else(|| continued_style.clone());
                    *counters
                }),
                None if local_attribute(element, b"continue-numbering").as_deref() == Some("true") => style
                    .as_ref()
                    .and_then(|s| self.last_of_style.get(s))
                    .copied()
                    .or(self.last),
                None => None,
            };
            self.counters = continued.unwrap_or_default();
        }
        let id = local_attribute(element, b"id");
        self.open.push(OpenList { style, id });
    }

    /// A `text:list` ends.
    pub fn close_list(&mut self) {
        let Some(list) = self.open.pop() else { return };
        self.item_number = None;
        if !self.open.is_empty() {
            return;
        }
        self.last = Some(self.counters);
        if let Some(id) = list.id {
            if self.by_id.len() < MAX_KEPT {
                self.by_id.insert(id, (list.style.clone(), self.counters));
            }
        }
        if let Some(style) = list.style {
            if self.last_of_style.len() < MAX_KEPT || self.last_of_style.contains_key(&style) {
                self.last_of_style.insert(style, self.counters);
            }
        }
    }

    /// A `text:list-item` (counted) or `text:list-header` (not numbered) starts.
    pub fn open_item(&mut self, element: &BytesStart) {
        self.item_number = None;
        let depth = self.open.len();
        if local_name(element.name().as_ref()) != b"list-item" || depth == 0 || depth > LEVELS {
            return;
        }
        let levels = self.open[depth - 1].style.as_ref().and_then(|s| self.styles.get(s));
        let Some(levels) = levels else { return };
        self.item_number = count(levels, &mut self.counters, depth - 1, element, false);
    }

    /// A heading of outline `level` (`text:h`, `element`) starts: numbered by the outline style
    /// unless it is inside a list item (the item numbers it) or a header (`text:is-list-header`).
    pub fn open_heading(&mut self, element: &BytesStart, level: usize) {
        if self.item_number.is_some() || !(1..=LEVELS).contains(&level) {
            return;
        }
        let at = level - 1;
        let numbered = self.outline[at]
            .as_ref()
            .is_some_and(|l| !matches!(l.format, Format::Bullet | Format::Nothing));
        let header = local_attribute(element, b"is-list-header").as_deref() == Some("true");
        if !numbered || header {
            return;
        }
        let restart = local_attribute(element, b"restart-numbering").as_deref() == Some("true");
        self.item_number = count(&self.outline, &mut self.outline_counters, at, element, restart);
    }

    /// Reads a `text:number` start (true) or end (false) in a paragraph.
    pub fn carried_number(&mut self, starts: bool) {
        self.in_carried = starts;
        if starts {
            self.carried = Some(String::new());
        }
    }

    /// Takes text inside a `text:number` (true), or leaves it to the paragraph (false).
    pub fn take_text(&mut self, text: &str) -> bool {
        if let (true, Some(carried)) = (self.in_carried, self.carried.as_mut()) {
            carried.push_str(text);
        }
        self.in_carried
    }

    /// A paragraph or heading ends: its number, if it has one (an item's first paragraph's;
    /// the file's own `text:number` first).
    pub fn end_paragraph(&mut self) -> Option<String> {
        let item = self.item_number.take();
        let carried = self.carried.take().map(|n| n.trim().to_string());
        carried.filter(|n| !n.is_empty()).or(item)
    }
}

/// Counts an item or a heading (`element`) at level `at` of `levels` in `counters`: its own
/// value (`text:start-value`), else one past the level's last (unless it `restart`s), else the
/// level's start; the levels below it start again. Its label: the levels it displays, each in
/// its format, joined by dots, between the level's prefix and suffix; none for a bullet or an
/// image.
fn count(
    levels: &StyleLevels,
    counters: &mut Counters,
    at: usize,
    element: &BytesStart,
    restart: bool,
) -> Option<String> {
    let start = |i: usize| levels[i].as_ref().map_or(1, |l| l.start);
    let value = match (count_attribute(element, b"start-value"), counters[at]) {
        (Some(value), _) => value.min(u32::MAX as usize) as u32,
        (None, Some(given)) if !restart => given.saturating_add(1),
        _ => start(at),
    };
    counters[at] = Some(value);
    counters[at + 1..].iter_mut().for_each(|c| *c = None);
    let level = levels[at].as_ref()?;
    if level.format == Format::Bullet {
        return None;
    }
    let first = (at + 1).saturating_sub(level.display_levels.max(1));
    let numbers: Vec<String> = (first..=at)
        .map(|i| {
            let format = levels[i].as_ref().map_or(Format::Decimal, |l| l.format);
            format.write(counters[i].unwrap_or_else(|| start(i)))
        })
        .filter(|n| !n.is_empty())
        .collect();
    let written = format!("{}{}{}", level.prefix, numbers.join("."), level.suffix);
    let written = written.trim();
    (!written.is_empty()).then(|| written.to_string())
}

/// Reads a list style's level (`text:list-level-style-number` / `-bullet` / `-image`, or an
/// outline style's `text:outline-level-style`) into the style being read.
fn read_level(element: &BytesStart, style: &mut Option<(Option<String>, StyleLevels)>) {
    let Some((_, levels)) = style.as_mut() else { return };
    let name = element.name();
    let kind = local_name(name.as_ref());
    if !matches!(
        kind,
        b"list-level-style-number" | b"list-level-style-bullet" | b"list-level-style-image" | b"outline-level-style"
    ) {
        return;
    }
    let Some(at) = count_attribute(element, b"level")
        .and_then(|l| l.checked_sub(1))
        .filter(|l| *l < LEVELS)
    else {
        return;
    };
    let affix = |name: &[u8]| {
        local_attribute(element, name)
            .filter(|a| a.chars().count() <= MAX_AFFIX_CHARS)
            .unwrap_or_default()
    };
    let format = match kind {
        b"list-level-style-bullet" | b"list-level-style-image" => Format::Bullet,
        _ => odf_format(
            local_attribute(element, b"num-format").as_deref().unwrap_or(""),
            local_attribute(element, b"num-letter-sync").as_deref() == Some("true"),
        ),
    };
    levels[at] = Some(LevelStyle {
        format,
        prefix: affix(b"num-prefix"),
        suffix: affix(b"num-suffix"),
        start: count_attribute(element, b"start-value").map_or(1, |s| s.min(u32::MAX as usize) as u32),
        display_levels: count_attribute(element, b"display-levels").unwrap_or(1).min(LEVELS),
    });
}

/// An OpenDocument number format (`style:num-format`) as quarry writes it.
fn odf_format(name: &str, letter_sync: bool) -> Format {
    match (name, letter_sync) {
        ("", _) => Format::Nothing,
        ("a", false) => Format::LowerAlphabetic,
        ("A", false) => Format::UpperAlphabetic,
        ("a", true) => Format::LowerLetter,
        ("A", true) => Format::UpperLetter,
        ("i", _) => Format::LowerRoman,
        ("I", _) => Format::UpperRoman,
        ("１", _) => Format::DecimalFullWidth,
        ("①", _) => Format::EnclosedCircle,
        _ => Format::Decimal,
    }
}
