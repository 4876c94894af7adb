//! English Snowball stemming with a cache of the words already stemmed: the same tokens as
//! tantivy's `Stemmer` filter, without running the Snowball algorithm again for a word the
//! analyzer has seen (it was over half of the keyword index build's time; a corpus's words
//! repeat heavily). The cache lives in the analyzer a tantivy writer holds, so each part
//! of a build keeps its own; it is cleared when it reaches its size bound.

use std::borrow::Cow;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Words kept before the cache is emptied (a few MB per analyzer).
const CACHE_WORDS: usize = 50_000;
/// Longer words are stemmed every time (rare, and not worth a cache slot).
const CACHE_WORD_BYTES: usize = 24;

/// The English Snowball stemming filter, cached.
#[derive(Clone)]
pub(super) struct CachedEnglishStemmer {
    capacity: usize,
}

impl CachedEnglishStemmer {
    pub(super) fn new() -> Self {
        Self { capacity: CACHE_WORDS }
    }

    /// A cache bound of `capacity` words (the tests make it small to exercise the clearing).
    #[cfg(test)]
    fn with_capacity(capacity: usize) -> Self {
        Self { capacity }
    }
}

impl TokenFilter for CachedEnglishStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemFilter<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> CachedStemFilter<T> {
        CachedStemFilter {
            inner,
            stems: FxHashMap::default(),
            capacity: self.capacity,
        }
    }
}

#[derive(Clone)]
pub(super) struct CachedStemFilter<T> {
    inner: T,
    /// Word → its stem.
    stems: FxHashMap<Box<str>, Box<str>>,
    capacity: usize,
}

impl<T: Tokenizer> Tokenizer for CachedStemFilter<T> {
    type TokenStream<'a> = CachedStemStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemStream {
            tail: self.inner.token_stream(text),
            stems: &mut self.stems,
            capacity: self.capacity,
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

pub(super) struct CachedStemStream<'a, T> {
    tail: T,
    stems: &'a mut FxHashMap<Box<str>, Box<str>>,
    capacity: usize,
    stemmer: Stemmer,
}

impl<T: TokenStream> TokenStream for CachedStemStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if let Some(stem) = self.stems.get(token.text.as_str()) {
            token.text.clear();
            token.text.push_str(stem);
            return true;
        }
        let stem = match self.stemmer.stem(&token.text) {
            Cow::Borrowed(same) if same.len() == token.text.len() => None,
            stem => Some(stem.into_owned()),
        };
        if token.text.len() <= CACHE_WORD_BYTES {
            if self.stems.len() >= self.capacity {
                self.stems.clear();
            }
            let cached = stem.as_deref().unwrap_or(&token.text);
            self.stems.insert(token.text.as_str().into(), cached.into());
        }
        if let Some(stem) = stem {
            token.text = stem;
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{Language, LowerCaser, SimpleTokenizer, TextAnalyzer};

    use super::*;

    fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            out.push((token.text.clone(), token.offset_from, token.offset_to, token.position));
        }
        out
    }

    #[test]
    fn cached_stems_are_tantivys_stems() {
        let text = "Running runners ran and runs; generously generous generalizations, relational relations \
                    Caresses ponies ties caress cats feed agreed disabled matting mating meeting milling messing \
                    meetings hopeful hopefulness connection connected connecting connections sky skies dying lying \
                    tying news innings outing canning herring earring proceed exceed succeed quickly the a is \
                    supercalifragilisticexpialidocious internationalization's 3.14 x86 café naïve";
        let mut expected = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(tantivy::tokenizer::Stemmer::new(Language::English))
            .build();
        let want = tokens(&mut expected, text);
        // A bound of 7 words clears the cache several times within the text.
        for capacity in [CACHE_WORDS, 7, 1] {
            let mut cached = TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(LowerCaser)
                .filter(CachedEnglishStemmer::with_capacity(capacity))
                .build();
            // Twice through the same analyzer: the second pass answers from the cache.
            for pass in 0..2 {
                assert_eq!(tokens(&mut cached, text), want, "capacity {capacity}, pass {pass}");
            }
        }
        assert!(want.iter().any(|(word, ..)| word == "run") && want.iter().any(|(word, ..)| word == "generous"));
        // The bound holds.
        let mut filter = CachedEnglishStemmer::with_capacity(7).transform(SimpleTokenizer::default());
        let mut stream = filter.token_stream(text);
        while stream.advance() {}
        assert!(
            (1..=7).contains(&filter.stems.len()),
            "{} words cached",
            filter.stems.len()
        );
    }

    /// The keyword analyzer against the same chain with tantivy's own stemmer, over every
    /// passage of msmarco-5k (../shared, or $QUARRY_SHARED_DIR).
    #[test]
    fn the_keyword_analyzer_tokenizes_msmarco_as_tantivys_stemmer_does() {
        let shared = std::env::var_os("QUARRY_SHARED_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
        let corpus = std::fs::read_to_string(shared.join("datasets/msmarco-5k/corpus.jsonl"))
            .expect("msmarco-5k in the shared folder");
        let mut stock = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(tantivy::tokenizer::RemoveLongFilter::limit(40))
            .filter(LowerCaser)
            .filter(tantivy::tokenizer::AsciiFoldingFilter)
            .filter(tantivy::tokenizer::StopWordFilter::new(Language::English).unwrap())
            .filter(tantivy::tokenizer::Stemmer::new(Language::English))
            .build();
        let mut ours = super::super::analysis::english_analyzer();
        let mut compared = 0;
        for line in corpus.lines() {
            let doc: serde_json::Value = serde_json::from_str(line).unwrap();
            let text = doc["text"].as_str().unwrap();
            let want = tokens(&mut stock, text);
            assert_eq!(tokens(&mut ours, text), want, "{text}");
            compared += want.len();
        }
        assert!(compared > 150_000, "{compared} tokens compared");
    }
}
