//! The page tree's `Parent` links checked before the PDF reader follows them. A page inherits
//! its media box and resources from its ancestors, and pdf-extract looks them up by following
//! `Parent` until one holds the key, with no end where the links loop (a page its own parent,
//! two pages each other's): the reader then runs until the worker's deadline, or, where the
//! compiler keeps its recursion, overflows its stack. Each chain is cut where it comes back to
//! a dictionary already on it, and the document says so in a warning. And a page with no
//! media box on its chain (the reader stops on it, and the page's text is lost) gets US
//! Letter's, as viewers assume.

use std::collections::{HashMap, HashSet};

use lopdf::{Document as PdfDocument, Object, ObjectId};

/// Removes the `Parent` link that closes each loop of the parent chains of `pages` (`pdf`'s
/// page dictionaries: the chains the reader follows); a warning naming how many were cut, if
/// any. Other dictionaries' `Parent` links (outline items, form fields) are left as they
/// are: nothing here follows them. Every dictionary is walked once (a chain stops at one
/// already known to end), so a chain of any length costs its length.
pub fn cut_parent_loops(pdf: &mut PdfDocument, pages: impl IntoIterator<Item = ObjectId>) -> Option<String> {
    let mut ending: HashSet<ObjectId> = HashSet::new();
    let mut cut = 0;
    for start in pages {
        let mut on_chain: HashSet<ObjectId> = HashSet::from([start]);
        let mut at = start;
        let mut closes_loop = None;
        while !ending.contains(&at) {
            let Some(parent) = parent_of(pdf, at) else { break };
            if !on_chain.insert(parent) {
                closes_loop = Some(at);
                break;
            }
            at = parent;
        }
        if let Some(dict) = closes_loop.and_then(|id| pdf.get_dictionary_mut(id).ok()) {
            dict.remove(b"Parent");
            cut += 1;
        }
        // Whatever was on the chain now ends: at a root, at a known end, or at the cut.
        ending.extend(on_chain);
    }
    match cut {
        0 => None,
        1 => Some("the page tree's parent links looped once; the loop was cut".to_string()),
        n => Some(format!(
            "the page tree's parent links looped {n} times; each loop was cut"
        )),
    }
}

/// The dictionary `id`'s parent, as the PDF reader follows it (a reference in `Parent`).
fn parent_of(pdf: &PdfDocument, id: ObjectId) -> Option<ObjectId> {
    pdf.get_dictionary(id).ok()?.get(b"Parent").ok()?.as_reference().ok()
}

/// US Letter in points: the media box a page with none is read with.
const LETTER: [i64; 4] = [0, 0, 612, 792];

/// Gives each of `pages` (`pdf`'s page dictionaries) with no `MediaBox` on itself or its
/// ancestors US Letter's; how many pages got it. Run after [`cut_parent_loops`]; each
/// dictionary's answer is kept, so a chain of any length is walked once.
pub fn give_pages_a_media_box(pdf: &mut PdfDocument, pages: impl IntoIterator<Item = ObjectId>) -> usize {
    let mut has_box: HashMap<ObjectId, bool> = HashMap::new();
    let mut lacking = Vec::new();
    for page in pages {
        let mut chain = Vec::new();
        let mut at = Some(page);
        let found = loop {
            let Some(id) = at else { break false };
            if let Some(&known) = has_box.get(&id) {
                break known;
            }
            let Ok(dict) = pdf.get_dictionary(id) else { break false };
            chain.push(id);
            if dict.has(b"MediaBox") {
                break true;
            }
            at = parent_of(pdf, id);
            // A chain longer than the document's objects loops (cut_parent_loops ran first).
            if chain.len() > pdf.objects.len() {
                break false;
            }
        };
        has_box.extend(chain.into_iter().map(|id| (id, found)));
        if !found {
            lacking.push(page);
        }
    }
    for &page in &lacking {
        if let Ok(dict) = pdf.get_dictionary_mut(page) {
            dict.set(
                "MediaBox",
                LETTER.iter().map(|&n| Object::Integer(n)).collect::<Vec<_>>(),
            );
        }
    }
    lacking.len()
}

#[cfg(test)]
mod tests {
    use lopdf::{dictionary, Document, Object};

    use super::*;

    #[test]
    fn parent_loops_are_cut_once_each_and_chains_kept() {
        let mut doc = Document::with_version("1.5");
        let root = doc.add_object(dictionary! { "Type" => "Pages" });
        let page = doc.add_object(dictionary! { "Type" => "Page", "Parent" => root });
        // A page its own parent; two nodes each other's.
        let own = doc.new_object_id();
        doc.objects.insert(
            own,
            Object::Dictionary(dictionary! { "Type" => "Page", "Parent" => own }),
        );
        let (a, b) = (doc.new_object_id(), doc.new_object_id());
        doc.objects
            .insert(a, Object::Dictionary(dictionary! { "Type" => "Pages", "Parent" => b }));
        doc.objects
            .insert(b, Object::Dictionary(dictionary! { "Type" => "Pages", "Parent" => a }));
        let under_loop = doc.add_object(dictionary! { "Type" => "Page", "Parent" => a });
        // Two outline items each other's parent: no page's chain, left alone.
        let (first, second) = (doc.new_object_id(), doc.new_object_id());
        doc.objects.insert(
            first,
            Object::Dictionary(dictionary! { "Title" => "One", "Parent" => second }),
        );
        doc.objects.insert(
            second,
            Object::Dictionary(dictionary! { "Title" => "Two", "Parent" => first }),
        );
        let pages = [page, own, under_loop];
        let warning = cut_parent_loops(&mut doc, pages).unwrap();
        assert_eq!(
            warning,
            "the page tree's parent links looped 2 times; each loop was cut"
        );
        let parent = |id| doc.get_dictionary(id).unwrap().get(b"Parent").ok().cloned();
        assert_eq!(parent(page), Some(Object::Reference(root)));
        assert_eq!(parent(own), None);
        assert!(
            parent(a).is_none() != parent(b).is_none(),
            "one link of the pair is cut"
        );
        assert_eq!(parent(under_loop), Some(Object::Reference(a)));
        assert_eq!(parent(first), Some(Object::Reference(second)));
        assert_eq!(parent(second), Some(Object::Reference(first)));
        assert_eq!(cut_parent_loops(&mut doc, pages), None);
    }

    #[test]
    fn a_long_chain_is_walked_once() {
        // 100,000 nodes, each the parent of the next, and the first the last's: one loop (a
        // walk of the chain from each node would be 10^10 steps), reached from a page.
        let mut doc = Document::with_version("1.5");
        let ids: Vec<ObjectId> = (0..100_000).map(|_| doc.new_object_id()).collect();
        for (i, &id) in ids.iter().enumerate() {
            let parent = ids[(i + 1) % ids.len()];
            doc.objects.insert(
                id,
                Object::Dictionary(dictionary! { "Type" => "Pages", "Parent" => parent }),
            );
        }
        assert_eq!(
            cut_parent_loops(&mut doc, [ids[0]]).as_deref(),
            Some("the page tree's parent links looped once; the loop was cut")
        );
        let cut: Vec<_> = ids
            .iter()
            .filter(|&&id| !doc.get_dictionary(id).unwrap().has(b"Parent"))
            .collect();
        assert_eq!(cut.len(), 1);
    }
}
