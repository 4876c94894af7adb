//! The text an HTML fragment shows (a feed item's description), read without an HTML parser so
//! that it runs in the indexing process in time linear in the fragment: tags taken off,
//! `script` and `style` elements and comments with their content; block elements part
//! paragraphs (`\n\n` between them); character references decoded last, so `&lt;b&gt;` reads
//! `<b>` as the page shows it.

use super::character_references::decode_character_references;

/// Elements that part paragraphs.
pub(super) const BLOCKS: [&str; 24] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "blockquote",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "dd",
    "dt",
    "hr",
    "figure",
];

/// The text `html` shows, its paragraphs apart by a blank line.
pub(super) fn html_text(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut at = 0;
    // Once a `<` has no `>` after it, none after it has: the rest is text.
    let mut closed_tags = true;
    while let Some(offset) = html[at..].find('<') {
        let open = at + offset;
        out.push_str(&html[at..open]);
        let rest = &lower[open..];
        if rest.starts_with("<!--") {
            at = rest.find("-->").map_or(html.len(), |end| open + end + 3);
            continue;
        }
        let is_tag = rest[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!' || c == '?');
        let end = match is_tag && closed_tags {
            true => rest.find('>'),
            false => None,
        };
        let Some(end) = end else {
            closed_tags &= !is_tag;
            out.push('<');
            at = open + 1;
            continue;
        };
        let tag = &rest[1..end];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        at = open + end + 1;
        if (name == "script" || name == "style") && !tag.starts_with('/') {
            // Its content up to its end tag goes with it.
            let closing = format!("</{name}");
            at = lower[at..].find(&closing).map_or(html.len(), |close| {
                let after = at + close;
                lower[after..].find('>').map_or(html.len(), |gt| after + gt + 1)
            });
            continue;
        }
        if BLOCKS.contains(&name.as_str()) {
            out.push_str("\n\n");
        } else if matches!(name.as_str(), "td" | "th") {
            out.push(' ');
        }
    }
    out.push_str(&html[at..]);
    decode_character_references(&out)
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::html_text;

    #[test]
    fn tags_off_paragraphs_apart_references_decoded() {
        assert_eq!(
            html_text("<p>Low water at <b>06:10</b> &amp; 18:40.</p><script>if (a<b) x()</script><p>Next<br/>line</p><!-- note -->"),
            "Low water at 06:10 & 18:40.\n\nNext\n\nline"
        );
        assert_eq!(html_text("a < b and &lt;b&gt; shown"), "a < b and <b> shown");
        assert_eq!(html_text("plain words"), "plain words");
        assert_eq!(html_text("<style>p{}</style>"), "");
    }

    #[test]
    fn hostile_fragments_read_in_linear_time() {
        let started = std::time::Instant::now();
        let n = 300_000;
        assert_eq!(html_text(&"<a".repeat(n)).len(), 2 * n);
        assert_eq!(html_text(&"<script>".repeat(n)), "");
        assert_eq!(html_text(&format!("{}x", "<!--".repeat(n))), "");
        assert_eq!(html_text(&"<b>x</b>".repeat(n)).len(), n);
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }
}
