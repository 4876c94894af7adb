//! Where an Arabic prefix (`word*`, the letters typed so far) ends its definite article. The
//! index holds stems, and Snowball's Arabic stemmer takes the article off (`المدينة`, "the
//! city", is `مدين`), but a cut word stems otherwise: its last letters are read as an ending
//! before the article is looked at (`المدين` is `المد`), so the stem of the prefix does not
//! say where the article ends. The article's written forms, as the stemmer's own prefix steps
//! take them off a noun: `ال`, `لل` ("to the"), `بال` ("in the"), `كال` ("like the"), after an
//! optional `و` ("and") or `ف` ("so"), not before an alef (`وا…` begins many words).

/// The article's forms, longest first (normalized letters, as [`super::normalize`] writes them).
const ARTICLES: [&str; 4] = ["بال", "كال", "لل", "ال"];

/// The conjunctions written before it.
const CONJUNCTIONS: [char; 2] = ['و', 'ف'];

/// The fewest letters left after the article: a root's.
const SHORTEST_REST: usize = 3;

/// `prefix` with its article (and a conjunction before it) taken off, where it has one and
/// three letters or more follow: `المدين` → `مدين`, `والمدين` → `مدين`; None otherwise
/// (`الله`, `مدين`).
pub fn after_article(prefix: &str) -> Option<&str> {
    let mut rest = prefix;
    if let Some(after) = rest.strip_prefix(CONJUNCTIONS) {
        if !after.starts_with('ا') || after.starts_with("ال") {
            rest = after;
        }
    }
    let rest = ARTICLES.iter().find_map(|article| rest.strip_prefix(article))?;
    (rest.chars().count() >= SHORTEST_REST).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_article_ends_where_its_letters_do() {
        for (prefix, want) in [
            ("المدين", Some("مدين")),
            ("والمدين", Some("مدين")),
            ("فالمدين", Some("مدين")),
            ("بالمدين", Some("مدين")),
            ("للمدين", Some("مدين")),
            ("كالمدين", Some("مدين")),
            // No article, or too little after it.
            ("مدين", None),
            ("الله", None),
            ("ال", None),
            ("", None),
            // `و` before an alef that begins no article is the word's own.
            ("وامد", None),
        ] {
            assert_eq!(after_article(prefix), want, "{prefix}");
        }
    }
}
