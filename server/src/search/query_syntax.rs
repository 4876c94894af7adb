//! A query's syntax, as search boxes read it: `"a quoted phrase"` must be in a result (its
//! words one after another, as the keyword lane reads words), `-word` and `-"a phrase"` must
//! not, `word*` ranks in the keyword lane by the words it begins as well and `word~` by the
//! words a few typing errors from it ([`crate::search::term_groups`]), and every other word
//! ranks as always. The constraints hold in every mode, as filters do
//! ([`QueryConstraints::allowed_rows`]); the lanes rank by the query's text without its marks
//! and excluded words ([`ParsedQuery::ranking_text`]). `"query_syntax": "plain"` reads a
//! query as plain text (quotes, dashes, stars and tildes are characters), as `quarry eval`
//! reads a benchmark's queries.
//!
//! A quote is `"`, `“`, `”` or `„` (a phrase opens with any and closes with the next); a quote
//! never closed is a character of the text, and so is a `"` between two Hebrew letters,
//! which Hebrew writes acronyms with in place of its gershayim (`צה"ל`, `ארה"ב`), as Unicode's
//! word boundaries read it (UAX #29, WB7b and WB7c). A `-` marks an exclusion only at the start of a
//! word (after a space or at the query's start) and right before a letter, digit or quote
//! (`e-mail` and `- note` are text). A `*` marks a prefix only at the end of a word that is
//! not excluded, right after a letter or digit (`*`, `C++*` and `a*b` are text); a `~`, or
//! `~0`, `~1`, `~2` (the errors allowed), likewise marks a misspelt word.

use quarry_indexer::index::{KeywordIndex, RowSet};
use serde::{Deserialize, Serialize};

use crate::error::ServerError;
use crate::search::loaded::LoadedSnapshot;

/// Phrases, excluded words, prefixes and misspelt words a query may hold together: each is a
/// lookup in every segment's keyword index before the search, so a query of thousands of
/// them is refused.
pub const MAX_QUERY_CONSTRAINTS: usize = 32;

/// How a request's query is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum QuerySyntax {
    /// Quoted phrases, `-` exclusions, `*` prefixes and `~` misspelt words (this module).
    #[default]
    Simple,
    /// Every character is text.
    Plain,
}

impl std::str::FromStr for QuerySyntax {
    type Err = ServerError;
    fn from_str(s: &str) -> Result<Self, ServerError> {
        match s {
            "simple" => Ok(Self::Simple),
            "plain" => Ok(Self::Plain),
            other => Err(ServerError::InvalidRequest(format!(
                "unknown query_syntax `{other}` (simple, plain)"
            ))),
        }
    }
}

/// A query read by its syntax.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedQuery {
    /// The words the lanes rank by: the query's words and its phrases' words, in order,
    /// without quotes and excluded words.
    pub ranking_text: String,
    /// The ranking text's words outside quoted phrases (highlights mark these wherever they
    /// stand, a phrase's words only where the phrase does).
    pub loose_text: String,
    pub constraints: QueryConstraints,
    /// Words written with a `*` after them (without it; in the ranking text too): the
    /// keyword lane also finds the words they begin.
    pub prefixes: Vec<String>,
    /// Words written with a `~` after them (without it; in the ranking text too): the
    /// keyword lane also finds the words a few typing errors from them.
    pub near: Vec<NearWord>,
    /// Words written with a `~` that allows no error (`~0`, or a word too short for one;
    /// without it, in the ranking text too): taken exactly as typed, never corrected by typo
    /// tolerance.
    pub exact: Vec<String>,
}

/// A word the keyword lane also finds misspelt.
#[derive(Debug, Clone, PartialEq)]
pub struct NearWord {
    pub word: String,
    /// Typing errors allowed: as written (`~1`), or by the word's length (`~`): one from 3
    /// characters, two from 6.
    pub edits: u8,
}

impl NearWord {
    /// `word` with a `~`, `~0`, `~1` or `~2` after it, read (None: no such mark, or not
    /// right after a letter or digit). A `~0` and a short word allow no error: no NearWord.
    fn read(word: &str) -> Option<(&str, Option<Self>)> {
        let (base, edits) = word.rsplit_once('~')?;
        if !ends_in_letter_or_digit(base) {
            return None;
        }
        let edits = match edits {
            "" => match base.chars().count() {
                0..=2 => 0,
                3..=5 => 1,
                _ => 2,
            },
            "0" => 0,
            "1" => 1,
            "2" => 2,
            _ => return None,
        };
        Some((
            base,
            (edits > 0).then(|| Self {
                word: base.to_string(),
                edits,
            }),
        ))
    }
}

/// What a result must hold and must not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryConstraints {
    /// Phrases every result holds.
    pub phrases: Vec<String>,
    /// Words and phrases no result holds.
    pub excluded: Vec<String>,
}

/// Whether `word`'s last character is a letter or digit (where a `*` or `~` after it is a mark).
fn ends_in_letter_or_digit(word: &str) -> bool {
    word.chars().next_back().is_some_and(char::is_alphanumeric)
}

fn is_quote(c: char) -> bool {
    matches!(c, '"' | '\u{201C}' | '\u{201D}' | '\u{201E}')
}

/// Unicode's `Hebrew_Letter` (UAX #29): the letters of the Hebrew block and its
/// presentation forms.
fn is_hebrew_letter(c: char) -> bool {
    matches!(c, '\u{05D0}'..='\u{05EA}' | '\u{05EF}'..='\u{05F2}' | '\u{FB1D}' | '\u{FB1F}'..='\u{FB28}' | '\u{FB2A}'..='\u{FB4F}')
}

/// Whether `chars[i]` is a quote that marks a phrase: any quote but a `"` between two Hebrew
/// letters, which is the acronym's gershayim, inside the word.
fn marks_phrase(chars: &[(usize, char)], i: usize) -> bool {
    let acronym = chars[i].1 == '"'
        && i > 0
        && is_hebrew_letter(chars[i - 1].1)
        && chars.get(i + 1).is_some_and(|&(_, next)| is_hebrew_letter(next));
    is_quote(chars[i].1) && !acronym
}

impl ParsedQuery {
    /// `query` read by `syntax`. Refused: a query whose every word is excluded (there is
    /// nothing to rank by), and one of more than [`MAX_QUERY_CONSTRAINTS`] phrases and exclusions.
    pub fn read(query: &str, syntax: QuerySyntax) -> Result<Self, ServerError> {
        let parsed = Self::read_beside_example(query, syntax)?;
        if parsed.ranking_text.trim().is_empty() && !parsed.constraints.excluded.is_empty() {
            return Err(ServerError::InvalidRequest(
                "the query has only excluded words: give a word or phrase to search for as well (\"query_syntax\": \"plain\" reads a dash as text)".into(),
            ));
        }
        if parsed.ranking_text.trim().is_empty() {
            return Err(ServerError::InvalidRequest(
                "the query has no word to search for, only quotes (\"query_syntax\": \"plain\" reads them as text)"
                    .into(),
            ));
        }
        Ok(parsed)
    }

    /// `query` read by `syntax` for a search by example ([`crate::search::similar_to`]): the
    /// example ranks, so the query may have no word to rank by (be empty, or only exclusions).
    /// Refused: more than [`MAX_QUERY_CONSTRAINTS`] phrases and exclusions.
    pub fn read_beside_example(query: &str, syntax: QuerySyntax) -> Result<Self, ServerError> {
        if syntax == QuerySyntax::Plain {
            return Ok(Self {
                ranking_text: query.to_string(),
                loose_text: query.to_string(),
                ..Self::default()
            });
        }
        let chars: Vec<(usize, char)> = query.char_indices().collect();
        let closing = |from: usize| (from..chars.len()).find(|&i| marks_phrase(&chars, i));
        let byte = |i: usize| chars.get(i).map_or(query.len(), |&(at, _)| at);
        let mut ranking: Vec<&str> = Vec::new();
        let mut loose: Vec<&str> = Vec::new();
        let mut constraints = QueryConstraints::default();
        let mut prefixes: Vec<String> = Vec::new();
        let mut near: Vec<NearWord> = Vec::new();
        let mut exact: Vec<String> = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i].1;
            if c.is_whitespace() {
                i += 1;
                continue;
            }
            let excluded = c == '-'
                && chars
                    .get(i + 1)
                    .is_some_and(|&(_, next)| next.is_alphanumeric() || is_quote(next));
            let start = i + usize::from(excluded);
            // A phrase: from an opening quote to the next quote.
            if let Some(end) = marks_phrase(&chars, start).then(|| closing(start + 1)).flatten() {
                let phrase = query[byte(start + 1)..byte(end)].trim();
                if !phrase.is_empty() {
                    match excluded {
                        true => constraints.excluded.push(phrase.to_string()),
                        false => {
                            constraints.phrases.push(phrase.to_string());
                            ranking.push(phrase);
                        }
                    }
                }
                i = end + 1;
                continue;
            }
            // A word: to the next space, or to a quote that opens a phrase.
            let mut end = start;
            while end < chars.len() && !chars[end].1.is_whitespace() {
                if end > start && marks_phrase(&chars, end) && closing(end + 1).is_some() {
                    break;
                }
                end += 1;
            }
            let word = &query[byte(start)..byte(end)];
            let word = match excluded {
                true => {
                    constraints.excluded.push(word.trim_matches(is_quote).to_string());
                    ""
                }
                false => word,
            };
            let word = word.trim_matches(is_quote);
            let word = match (word.strip_suffix('*'), NearWord::read(word)) {
                (Some(prefix), _) if ends_in_letter_or_digit(prefix) => {
                    prefixes.push(prefix.to_string());
                    prefix
                }
                (_, Some((base, misspelt))) => {
                    match misspelt {
                        Some(misspelt) => near.push(misspelt),
                        None => exact.push(base.to_string()),
                    }
                    base
                }
                _ => word,
            };
            if !word.is_empty() {
                ranking.push(word);
                loose.push(word);
            }
            i = end.max(i + 1);
        }
        let count = constraints.phrases.len() + constraints.excluded.len() + prefixes.len() + near.len();
        if count > MAX_QUERY_CONSTRAINTS {
            return Err(ServerError::InvalidRequest(format!(
                "the query has {count} quoted phrases, excluded words, prefixes and misspelt words; at most {MAX_QUERY_CONSTRAINTS} (\"query_syntax\": \"plain\" reads quotes, dashes, stars and tildes as text)"
            )));
        }
        Ok(Self {
            ranking_text: ranking.join(" "),
            loose_text: loose.join(" "),
            constraints,
            prefixes,
            near,
            exact,
        })
    }
}

impl QueryConstraints {
    pub fn is_empty(&self) -> bool {
        self.phrases.is_empty() && self.excluded.is_empty()
    }

    /// The rows of `snapshot` that hold every phrase and no excluded word, tombstoned rows
    /// included (filters take those out); None when there are no constraints. A phrase the
    /// keyword analyzer keeps no word of (stop words only) constrains nothing.
    pub fn allowed_rows(&self, snapshot: &LoadedSnapshot) -> Result<Option<RowSet>, ServerError> {
        if self.is_empty() {
            return Ok(None);
        }
        let mut allowed = RowSet::empty(snapshot.row_count());
        for segment in &snapshot.segments {
            let keyword = &segment.data.keyword;
            let mut local = RowSet::empty(segment.rows).complement();
            for phrase in &self.phrases {
                if let Some(holding) = keyword.phrase_rows(phrase)? {
                    local.retain_all(&holding);
                }
            }
            for excluded in &self.excluded {
                if let Some(holding) = keyword.phrase_rows(excluded)? {
                    local.remove_all(&holding);
                }
            }
            allowed.insert_all_at(segment.offset, &local);
        }
        Ok(Some(allowed))
    }
}

/// Rows both sets allow (None: every row).
pub fn both(a: Option<RowSet>, b: Option<RowSet>) -> Option<RowSet> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.retain_all(&b);
            Some(a)
        }
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(query: &str) -> (String, Vec<String>, Vec<String>) {
        let parsed = ParsedQuery::read(query, QuerySyntax::Simple).unwrap();
        (
            parsed.ranking_text,
            parsed.constraints.phrases,
            parsed.constraints.excluded,
        )
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn phrases_and_exclusions_are_read_and_the_rest_is_text() {
        assert_eq!(read("harbour tides"), ("harbour tides".into(), vec![], vec![]));
        assert_eq!(
            read("\"retry budget\" timeouts -grpc -\"load balancer\""),
            (
                "retry budget timeouts".into(),
                strings(&["retry budget"]),
                strings(&["grpc", "load balancer"])
            )
        );
        // Curly and low quotes; a phrase right after a word; a phrase of one word.
        assert_eq!(
            read("„Häuser am See“ und “Brücken”"),
            (
                "Häuser am See und Brücken".into(),
                strings(&["Häuser am See", "Brücken"]),
                vec![]
            )
        );
        assert_eq!(
            read("error\"disk full\""),
            ("error disk full".into(), strings(&["disk full"]), vec![])
        );
        // The words outside phrases, which highlights mark wherever they stand.
        let parsed = ParsedQuery::read("\"retry budget\" timeouts -grpc budget*", QuerySyntax::Simple).unwrap();
        assert_eq!(parsed.loose_text, "timeouts budget");
        let plain = ParsedQuery::read("\"retry budget\" -grpc", QuerySyntax::Plain).unwrap();
        assert_eq!(plain.loose_text, "\"retry budget\" -grpc");
        // Dashes inside words, alone or before a space are text; a quote never closed too.
        assert_eq!(read("e-mail - note"), ("e-mail - note".into(), vec![], vec![]));
        assert_eq!(read("-- flags"), ("-- flags".into(), vec![], vec![]));
        assert_eq!(read("6\" pipe"), ("6 pipe".into(), vec![], vec![]));
        assert_eq!(read("東京 -大阪"), ("東京".into(), vec![], strings(&["大阪"])));
        // An empty phrase is nothing.
        assert_eq!(read("\"\" tides"), ("tides".into(), vec![], vec![]));
        // A `"` between Hebrew letters is an acronym's, inside its word: two acronyms make no
        // phrase, and a phrase may hold one.
        assert_eq!(read("צה\"ל ושב\"כ"), ("צה\"ל ושב\"כ".into(), vec![], vec![]));
        assert_eq!(
            read("\"דובר צה\"ל\" -ארה\"ב"),
            ("דובר צה\"ל".into(), strings(&["דובר צה\"ל"]), strings(&["ארה\"ב"]))
        );
        // Beside a letter of another script it is a quote as before.
        assert_eq!(read("ab\"cd ef\""), ("ab cd ef".into(), strings(&["cd ef"]), vec![]));
        // Plain syntax reads every character as text.
        let plain = ParsedQuery::read("\"a\" -b", QuerySyntax::Plain).unwrap();
        assert_eq!(
            (plain.ranking_text.as_str(), plain.constraints.is_empty()),
            ("\"a\" -b", true)
        );
    }

    #[test]
    fn a_star_after_a_words_letters_makes_it_a_prefix() {
        let read = |query: &str| {
            let parsed = ParsedQuery::read(query, QuerySyntax::Simple).unwrap();
            (parsed.ranking_text, parsed.prefixes)
        };
        assert_eq!(read("hydro* power"), ("hydro power".into(), strings(&["hydro"])));
        assert_eq!(read("Kühl* 東京*"), ("Kühl 東京".into(), strings(&["Kühl", "東京"])));
        // Two stars, a star alone, after a mark or inside a word are text.
        assert_eq!(read("inter** net"), ("inter** net".into(), vec![]));
        assert_eq!(read("C++* a*b * x"), ("C++* a*b * x".into(), vec![]));
        // In quotes a star is the phrase's; an excluded word is no prefix.
        let quoted = ParsedQuery::read("\"flow*\" rate", QuerySyntax::Simple).unwrap();
        assert_eq!(
            (quoted.constraints.phrases, quoted.prefixes.len()),
            (strings(&["flow*"]), 0)
        );
        let excluded = ParsedQuery::read("rate -flow*", QuerySyntax::Simple).unwrap();
        assert_eq!((excluded.ranking_text.as_str(), excluded.prefixes.len()), ("rate", 0));
        assert_eq!(excluded.constraints.excluded, strings(&["flow*"]));
        // Plain syntax has none.
        let plain = ParsedQuery::read("hydro*", QuerySyntax::Plain).unwrap();
        assert_eq!((plain.ranking_text.as_str(), plain.prefixes.len()), ("hydro*", 0));
    }

    #[test]
    fn a_tilde_after_a_words_letters_makes_it_a_misspelt_word() {
        let read = |query: &str| {
            let parsed = ParsedQuery::read(query, QuerySyntax::Simple).unwrap();
            let near: Vec<(String, u8)> = parsed.near.into_iter().map(|n| (n.word, n.edits)).collect();
            (parsed.ranking_text, near)
        };
        let near =
            |items: &[(&str, u8)]| -> Vec<(String, u8)> { items.iter().map(|(w, e)| (w.to_string(), *e)).collect() };
        // By the word's length: none up to two characters, one to five, two from six.
        assert_eq!(
            read("hydorgen~ tnak~ ab~ buses"),
            ("hydorgen tnak ab buses".into(), near(&[("hydorgen", 2), ("tnak", 1)]))
        );
        assert_eq!(
            read("hydorgen~1 ab~2 tank~0"),
            ("hydorgen ab tank".into(), near(&[("hydorgen", 1), ("ab", 2)]))
        );
        // `~0`: the word exactly as typed.
        assert_eq!(
            ParsedQuery::read("hydorgen~0 tank", QuerySyntax::Simple).unwrap().exact,
            ["hydorgen"]
        );
        // Other counts, a tilde alone, after a mark or inside a word are text.
        assert_eq!(read("tank~3 ~ C++~ a~b"), ("tank~3 ~ C++~ a~b".into(), vec![]));
        // Beside a prefix and the rest; plain syntax has none.
        let parsed = ParsedQuery::read("hydr* tnak~ -lock \"fuel cell\"", QuerySyntax::Simple).unwrap();
        assert_eq!(parsed.ranking_text, "hydr tnak fuel cell");
        assert_eq!((parsed.prefixes.len(), parsed.near.len()), (1, 1));
        assert!(ParsedQuery::read("tnak~", QuerySyntax::Plain).unwrap().near.is_empty());
    }

    #[test]
    fn any_text_reads_without_a_panic_into_pieces_of_itself() {
        let alphabet: Vec<char> = "ab東京 -*~1\"“”„\u{301}é\t".chars().collect();
        let mut draw = quarry_datasets::synthetic::SeededRng::new(11);
        for _ in 0..20_000 {
            let query: String = (0..draw.below(14)).map(|_| *draw.pick(&alphabet)).collect();
            let Ok(parsed) = ParsedQuery::read(&query, QuerySyntax::Simple) else {
                continue;
            };
            let pieces = parsed
                .constraints
                .phrases
                .iter()
                .chain(&parsed.constraints.excluded)
                .map(String::as_str)
                .chain(parsed.ranking_text.split(' '));
            for piece in pieces {
                assert!(query.contains(piece.trim()), "{query:?}: {parsed:?}");
            }
        }
    }

    #[test]
    fn a_query_of_exclusions_alone_or_of_too_many_constraints_is_refused() {
        let refused = |query: &str| match ParsedQuery::read(query, QuerySyntax::Simple) {
            Err(ServerError::InvalidRequest(message)) => message,
            other => panic!("{query}: {other:?}"),
        };
        assert!(refused("-grpc -\"load balancer\"").contains("only excluded words"));
        assert!(refused("\"\" “ ”").contains("no word to search for, only quotes"));
        let many = (0..40).map(|i| format!("-w{i}")).collect::<Vec<_>>().join(" ") + " tides";
        assert!(refused(&many).contains("40 quoted phrases, excluded words, prefixes and misspelt words; at most 32"));
        let stars = (0..33).map(|i| format!("w{i}*")).collect::<Vec<_>>().join(" ");
        assert!(refused(&stars).contains("33 quoted phrases, excluded words, prefixes and misspelt words"));
        assert!(ParsedQuery::read(&many, QuerySyntax::Plain).is_ok());
    }
}
