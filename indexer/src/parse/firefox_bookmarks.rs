//! Firefox's bookmarks as its backups write them (`bookmarks-….jsonlz4` in a profile's
//! `bookmarkbackups/`, read through [`super::moz_lz4`]; the Library's "Backup…", a `.json`): a
//! tree from the root `placesRoot` of folders (`children`), bookmarks (`uri`) and separators.
//! Read as one document, a block for each folder that holds bookmarks, under its folders'
//! titles as headings (the four Firefox makes by their names in its menus: "Bookmarks Menu",
//! "Bookmarks Toolbar", "Other Bookmarks", "Mobile Bookmarks"), a line for each bookmark: its
//! title, its address and its tags. Dates, ids, icons and annotations are left out. The tree's
//! depth is held by the JSON reader's own (serde_json's 128 levels).

use serde_json::Value;

use super::Block;

/// Whether `value` is Firefox's bookmarks: its root folder, `placesRoot`, and its children.
pub(super) fn is_bookmarks(value: &Value) -> bool {
    value.get("root").and_then(Value::as_str) == Some("placesRoot")
        && value.get("children").is_some_and(Value::is_array)
}

/// A block for each folder of `root` that holds bookmarks, in the tree's order.
pub(super) fn bookmark_blocks(root: &Value) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut path = Vec::new();
    folder_blocks(root, &mut path, &mut blocks);
    blocks
}

fn folder_blocks(folder: &Value, path: &mut Vec<String>, blocks: &mut Vec<Block>) {
    let Some(children) = folder.get("children").and_then(Value::as_array) else {
        return;
    };
    let lines: Vec<String> = children.iter().filter_map(bookmark_line).collect();
    if !lines.is_empty() {
        blocks.push(Block::text(lines.join("\n"), path));
    }
    for child in children.iter().filter(|child| child.get("children").is_some()) {
        path.push(folder_title(child));
        folder_blocks(child, path, blocks);
        path.pop();
    }
}

/// A bookmark's line: its title (or its address alone, where it has none), its address and its tags.
fn bookmark_line(item: &Value) -> Option<String> {
    let uri = item.get("uri").and_then(Value::as_str)?;
    let text = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut line = match text("title") {
        Some(title) => format!("{title} — {uri}"),
        None => uri.to_string(),
    };
    if let Some(tags) = text("tags") {
        line.push_str(&format!(" (tags: {})", tags.replace(',', ", ")));
    }
    Some(line)
}

/// A folder's title as Firefox's menus show it: the four it makes by their names there.
fn folder_title(folder: &Value) -> String {
    let shown = match folder.get("root").and_then(Value::as_str) {
        Some("bookmarksMenuFolder") => Some("Bookmarks Menu"),
        Some("toolbarFolder") => Some("Bookmarks Toolbar"),
        Some("unfiledBookmarksFolder") => Some("Other Bookmarks"),
        Some("mobileFolder") => Some("Mobile Bookmarks"),
        _ => None,
    };
    let title = folder.get("title").and_then(Value::as_str).unwrap_or_default();
    shown.unwrap_or(title).to_string()
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, ContentType};

    /// A backup as Firefox writes it: its four folders by their internal names, a folder in a
    /// folder, a separator, a bookmark with tags and one with no title.
    const BACKUP: &str = r#"{"guid":"root________","title":"","index":0,"dateAdded":1733650000000000,"lastModified":1733650000000000,"id":1,"typeCode":2,"type":"text/x-moz-place-container","root":"placesRoot","children":[
        {"guid":"menu________","title":"menu","index":0,"id":2,"typeCode":2,"type":"text/x-moz-place-container","root":"bookmarksMenuFolder","children":[
            {"guid":"a1b2c3d4e5f6","title":"Tide tables of the harbour","index":0,"dateAdded":1733650000000000,"id":7,"typeCode":1,"type":"text/x-moz-place","uri":"https://example.org/tides","tags":"sea,boats"},
            {"guid":"sep000000001","title":"","index":1,"id":8,"typeCode":3,"type":"text/x-moz-place-separator"},
            {"guid":"travel000001","title":"Travel","index":2,"id":9,"typeCode":2,"type":"text/x-moz-place-container","children":[
                {"guid":"ferry0000001","title":"Ferry timetable to the islands","index":0,"id":10,"typeCode":1,"type":"text/x-moz-place","uri":"https://example.org/ferry","iconUri":"https://example.org/favicon.ico"},
                {"guid":"untitled0001","title":"","index":1,"id":11,"typeCode":1,"type":"text/x-moz-place","uri":"https://example.org/maps"}]}]},
        {"guid":"toolbar_____","title":"toolbar","index":1,"id":3,"typeCode":2,"type":"text/x-moz-place-container","root":"toolbarFolder","children":[
            {"guid":"radar0000001","title":"Weather radar","index":0,"id":12,"typeCode":1,"type":"text/x-moz-place","uri":"https://example.org/radar"}]},
        {"guid":"unfiled_____","title":"unfiled","index":3,"id":5,"typeCode":2,"type":"text/x-moz-place-container","root":"unfiledBookmarksFolder"}]}"#;

    #[test]
    fn bookmarks_are_lines_under_their_folders() {
        let document = document_of("bookmarks-2026-12-08.json", BACKUP);
        let blocks: Vec<(Vec<&str>, &str)> = document
            .blocks
            .iter()
            .map(|block| {
                (
                    block.heading_path.iter().map(String::as_str).collect(),
                    block.text.as_str(),
                )
            })
            .collect();
        assert_eq!(
            blocks,
            [
                (
                    vec!["Bookmarks Menu"],
                    "Tide tables of the harbour — https://example.org/tides (tags: sea, boats)"
                ),
                (
                    vec!["Bookmarks Menu", "Travel"],
                    "Ferry timetable to the islands — https://example.org/ferry\nhttps://example.org/maps"
                ),
                (vec!["Bookmarks Toolbar"], "Weather radar — https://example.org/radar"),
            ]
        );
        assert!(document.blocks.iter().all(|block| block.kind == ContentType::Text));
        // Other JSON with children is still flattened.
        let other = document_of("tree.json", r#"{"root": "elsewhere", "children": [{"uri": "x"}]}"#);
        assert_eq!(other.blocks[0].text, "children[0].uri: x\nroot: elsewhere");
    }
}
