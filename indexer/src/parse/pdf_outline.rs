//! A PDF's outline (its bookmarks) as headings: each entry's title, level and page, in the
//! outline's order. Read with bounds, because a hostile file's outline may loop (a `Next` back
//! to an earlier entry), nest without end or name destinations through a name tree that loops:
//! every object is visited once, at most [`MAX_ENTRIES`] entries and [`MAX_LEVEL`] levels are
//! read, and an entry whose destination does not resolve to a page of the file is left out
//! (its children are kept).

use std::collections::{HashMap, HashSet};

use lopdf::{Dictionary, Document as PdfDocument, Object, ObjectId};

/// Most outline entries read.
pub const MAX_ENTRIES: usize = 10_000;
/// Deepest level read (1 is the outline's top).
pub const MAX_LEVEL: usize = 16;
/// Longest title kept, in characters.
const MAX_TITLE_CHARS: usize = 300;
/// Most name-tree nodes visited to resolve named destinations.
const MAX_NAME_NODES: usize = 100_000;

/// One outline entry.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineEntry {
    /// 1 for the outline's top level.
    pub level: usize,
    pub title: String,
    /// 1-based page number.
    pub page: u32,
}

/// The outline's entries that point at a page of the file, in order (none when it has none).
pub fn outline(pdf: &PdfDocument) -> Vec<OutlineEntry> {
    let Ok(catalog) = pdf.catalog() else {
        return Vec::new();
    };
    let Some(root) = catalog.get(b"Outlines").ok().and_then(|o| dictionary(pdf, o)) else {
        return Vec::new();
    };
    let pages: HashMap<ObjectId, u32> = pdf.get_pages().into_iter().map(|(n, id)| (id, n)).collect();
    let mut resolver = Destinations {
        pdf,
        pages: &pages,
        named: None,
    };
    let mut entries = Vec::new();
    let mut visited = HashSet::new();
    // Entries to visit, the next one last: an entry's children come before its next sibling.
    let mut stack: Vec<(ObjectId, usize)> = reference(root.get(b"First")).map(|id| (id, 1)).into_iter().collect();
    while let Some((id, level)) = stack.pop() {
        if entries.len() >= MAX_ENTRIES || visited.len() >= MAX_ENTRIES * 4 {
            break;
        }
        if !visited.insert(id) {
            continue;
        }
        let Ok(node) = pdf.get_dictionary(id) else { continue };
        if let Some(next) = reference(node.get(b"Next")) {
            stack.push((next, level));
        }
        if level < MAX_LEVEL {
            if let Some(first) = reference(node.get(b"First")) {
                stack.push((first, level + 1));
            }
        }
        let title = node.get(b"Title").ok().and_then(|t| title_of(pdf, t));
        if let (Some(title), Some(page)) = (title, resolver.page_of_entry(node)) {
            entries.push(OutlineEntry { level, title, page });
        }
    }
    entries
}

fn reference(object: lopdf::Result<&Object>) -> Option<ObjectId> {
    object.ok().and_then(|o| o.as_reference().ok())
}

fn dictionary<'a>(pdf: &'a PdfDocument, object: &'a Object) -> Option<&'a Dictionary> {
    pdf.dereference(object).ok().and_then(|(_, o)| o.as_dict().ok())
}

/// A title with its blanks collapsed, cut to [`MAX_TITLE_CHARS`]; none when empty.
fn title_of(pdf: &PdfDocument, object: &Object) -> Option<String> {
    let (_, object) = pdf.dereference(object).ok()?;
    let text = lopdf::decode_text_string(object).ok()?;
    let title: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_TITLE_CHARS)
        .collect();
    (!title.is_empty()).then_some(title)
}

/// Resolves destinations to page numbers.
struct Destinations<'a> {
    pdf: &'a PdfDocument,
    pages: &'a HashMap<ObjectId, u32>,
    /// Named destinations (the catalog's `Dests` and the `Names` tree), read at first use.
    named: Option<HashMap<Vec<u8>, u32>>,
}

impl Destinations<'_> {
    /// The page of an entry's `Dest`, or of its `GoTo` action's `D`.
    fn page_of_entry(&mut self, entry: &Dictionary) -> Option<u32> {
        if let Ok(destination) = entry.get(b"Dest") {
            return self.page_of(destination);
        }
        let action = dictionary(self.pdf, entry.get(b"A").ok()?)?;
        if action.get(b"S").and_then(Object::as_name).ok()? != b"GoTo" {
            return None;
        }
        self.page_of(action.get(b"D").ok()?)
    }

    /// A destination (an array whose first item is the page, or a name or string naming one).
    fn page_of(&mut self, destination: &Object) -> Option<u32> {
        let (_, destination) = self.pdf.dereference(destination).ok()?;
        match destination {
            Object::Array(items) => self.pages.get(&items.first()?.as_reference().ok()?).copied(),
            Object::Name(name) | Object::String(name, _) => self.named().get(name.as_slice()).copied(),
            // A named destination's value may be a dictionary with the array under `D`.
            Object::Dictionary(d) => match d.get(b"D").ok()? {
                Object::Array(items) => self.pages.get(&items.first()?.as_reference().ok()?).copied(),
                _ => None,
            },
            _ => None,
        }
    }

    fn named(&mut self) -> &HashMap<Vec<u8>, u32> {
        if self.named.is_none() {
            let named = self.read_named();
            self.named = Some(named);
        }
        self.named.as_ref().expect("just read")
    }

    fn read_named(&self) -> HashMap<Vec<u8>, u32> {
        let mut named = HashMap::new();
        let Ok(catalog) = self.pdf.catalog() else {
            return named;
        };
        let page_in = |value: &Object| -> Option<u32> {
            let (_, value) = self.pdf.dereference(value).ok()?;
            let array = match value {
                Object::Array(items) => items,
                Object::Dictionary(d) => d.get(b"D").ok()?.as_array().ok()?,
                _ => return None,
            };
            self.pages.get(&array.first()?.as_reference().ok()?).copied()
        };
        // PDF 1.1: the catalog's `Dests` dictionary, name -> destination.
        if let Some(dests) = catalog.get(b"Dests").ok().and_then(|d| dictionary(self.pdf, d)) {
            for (name, value) in dests.iter() {
                if let Some(page) = page_in(value) {
                    named.insert(name.clone(), page);
                }
            }
        }
        // PDF 1.2 on: the `Names` dictionary's `Dests` name tree.
        let tree = catalog
            .get(b"Names")
            .ok()
            .and_then(|n| dictionary(self.pdf, n))
            .and_then(|names| names.get(b"Dests").ok());
        let mut visited = HashSet::new();
        let mut nodes: Vec<&Object> = tree.into_iter().collect();
        while let Some(node) = nodes.pop() {
            if visited.len() >= MAX_NAME_NODES {
                break;
            }
            if let Ok(id) = node.as_reference() {
                if !visited.insert(id) {
                    continue;
                }
            }
            let Some(node) = dictionary(self.pdf, node) else {
                continue;
            };
            if let Ok(kids) = node.get(b"Kids").and_then(Object::as_array) {
                nodes.extend(kids.iter());
            }
            if let Ok(pairs) = node.get(b"Names").and_then(Object::as_array) {
                for pair in pairs.chunks(2) {
                    if let [key, value] = pair {
                        if let (Ok(key), Some(page)) = (key.as_str(), page_in(value)) {
                            named.insert(key.to_vec(), page);
                        }
                    }
                }
            }
        }
        named
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::pdf::fixtures::{pdf_with_pages, with_outline};

    #[test]
    fn entries_come_in_order_with_levels_and_pages() {
        let pdf = with_outline(
            pdf_with_pages(&["one", "two", "three"]),
            &[
                (1, "Introduction", 1),
                (2, "Background", 1),
                (2, "Scope", 2),
                (1, "Méthodes", 3),
            ],
        );
        let entries = outline(&pdf);
        let shown: Vec<(usize, &str, u32)> = entries.iter().map(|e| (e.level, e.title.as_str(), e.page)).collect();
        assert_eq!(
            shown,
            [
                (1, "Introduction", 1),
                (2, "Background", 1),
                (2, "Scope", 2),
                (1, "Méthodes", 3)
            ]
        );
    }

    #[test]
    fn a_looping_outline_is_read_once() {
        let mut pdf = with_outline(pdf_with_pages(&["one", "two"]), &[(1, "First", 1), (1, "Second", 2)]);
        // The last entry's Next points back at the first, and the first is its own child.
        let root = pdf.catalog().unwrap().get(b"Outlines").unwrap().as_reference().unwrap();
        let outlines = pdf.get_dictionary(root).unwrap().clone();
        let first = outlines.get(b"First").unwrap().as_reference().unwrap();
        let last = outlines.get(b"Last").unwrap().as_reference().unwrap();
        pdf.get_dictionary_mut(last).unwrap().set("Next", first);
        pdf.get_dictionary_mut(first).unwrap().set("First", first);
        let entries = outline(&pdf);
        let titles: Vec<&str> = entries.iter().map(|e| e.title.as_str()).collect();
        assert_eq!(titles, ["First", "Second"]);
    }

    #[test]
    fn no_outline_is_no_entries() {
        assert!(outline(&pdf_with_pages(&["one"])).is_empty());
    }
}
