//! The WordPiece fast path (printable-ASCII runs tokenized by quarry, everything else by
//! the general tokenizer) against the general tokenizer alone: same spans, same ids, same
//! counts, same truncated model input, on msmarco-5k and on seeded random texts built from
//! the cases where the two could part (punctuation, case, control characters, accents,
//! combining marks, CJK, added tokens written in the text, words at the length limit).

use crate::common;

use common::Rng;
use quarry_indexer::embed::{ModelTokenizer, TokenizerPath};

fn tokenizers(window: usize) -> (ModelTokenizer, ModelTokenizer) {
    let path = common::model_dir().join("tokenizer.json");
    let fast = ModelTokenizer::from_file_with(&path, window, TokenizerPath::Fast).unwrap();
    let general = ModelTokenizer::from_file_with(&path, window, TokenizerPath::Off).unwrap();
    assert!(
        fast.uses_fast_path(),
        "the default model's tokenizer should take the fast path"
    );
    assert!(!general.uses_fast_path());
    (fast, general)
}

/// Every answer of the two tokenizers on `text`, compared.
fn assert_same(fast: &ModelTokenizer, general: &ModelTokenizer, text: &str) {
    assert_eq!(
        fast.spans_and_ids(text).unwrap(),
        general.spans_and_ids(text).unwrap(),
        "spans and ids of {text:?}"
    );
    assert_eq!(
        fast.count(text).unwrap(),
        general.count(text).unwrap(),
        "count of {text:?}"
    );
    assert_eq!(
        fast.encode_for_model(&[text]).unwrap(),
        general.encode_for_model(&[text]).unwrap(),
        "model input of {text:?}"
    );
}

#[test]
fn msmarco_texts_tokenize_as_the_general_tokenizer_does() {
    // A 64-token window, so that many passages are truncated for the model too.
    let (fast, general) = tokenizers(64);
    let corpus = std::fs::read_to_string(common::shared_dir().join("datasets/msmarco-5k/corpus.jsonl")).unwrap();
    let mut texts = Vec::new();
    for line in corpus.lines() {
        let doc: serde_json::Value = serde_json::from_str(line).unwrap();
        for field in ["title", "text"] {
            if let Some(text) = doc.get(field).and_then(|v| v.as_str()) {
                texts.push(text.to_string());
            }
        }
    }
    assert!(texts.len() >= 5000);
    let (mut truncated, mut non_ascii) = (0, 0);
    for text in &texts {
        assert_same(&fast, &general, text);
        truncated += usize::from(general.count(text).unwrap() + general.special_tokens() > 64);
        non_ascii += usize::from(!text.is_ascii());
    }
    // The corpus exercises both halves of the fast path and the truncation.
    assert!(
        truncated > 100 && non_ascii > 100,
        "{truncated} truncated, {non_ascii} non-ASCII texts"
    );
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    assert_eq!(
        fast.encode_for_model(&refs).unwrap(),
        general.encode_for_model(&refs).unwrap(),
        "batch model input"
    );
}

const FRAGMENTS: &[&str] = &[
    "the",
    "Search",
    "VECTOR",
    "tokenization",
    "unaffable",
    "qzxqvbnm",
    "x86_64",
    "3.14159",
    "e.g.",
    "U.S.A.",
    "don't",
    "o'clock",
    "(x+y)^2",
    "a-b",
    "C++",
    "#hashtag",
    "@user",
    "<b>",
    "{ok}",
    "|",
    "\\",
    "`code`",
    "~",
    "$100",
    "50%",
    "&amp;",
    "*",
    " ",
    " ",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\n\n",
    "\u{0}",
    "\u{1}",
    "\u{b}",
    "\u{c}",
    "\u{1f}",
    "\u{7f}",
    "naïve",
    "café",
    "’",
    "“quoted”",
    "—",
    "東京",
    "日本語",
    "\u{a0}",
    "e\u{301}",
    "\u{301}",
    "🚀",
    "\u{fffd}",
    "\u{200b}",
    "Ünïcödé",
    "[MASK",
    "[PAD",
    "]",
    "[x]",
];

/// Added tokens written in the text, which send the whole text to the general tokenizer:
/// rare, so that most texts take the fast path.
const ADDED_TOKENS: &[&str] = &["[SEP]", "[sep]", "[CLS]x", "x[UNK]"];

fn random_text(rng: &mut Rng) -> String {
    let mut text = String::new();
    for _ in 0..rng.below(40) {
        match rng.below(30) {
            // Words at WordPiece's 100-character limit, and unknown runs of letters.
            0 => text.push_str(
                &"ab"
                    .repeat(49 + rng.below(3))
                    .chars()
                    .take(99 + rng.below(3))
                    .collect::<String>(),
            ),
            1 => text.push_str(&"Zq".repeat(1 + rng.below(8))),
            2 if rng.below(20) == 0 => text.push_str(ADDED_TOKENS[rng.below(ADDED_TOKENS.len())]),
            _ => text.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]),
        }
        if rng.below(3) > 0 {
            text.push(' ');
        }
    }
    text
}

#[test]
fn random_texts_tokenize_as_the_general_tokenizer_does() {
    let (fast, general) = tokenizers(24);
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for _ in 0..3000 {
        assert_same(&fast, &general, &random_text(&mut rng));
    }
    for text in [
        "",
        " ",
        "\n\t",
        "a",
        "A.",
        "[SEP]",
        "x\u{b}y",
        &"a".repeat(100),
        &"a".repeat(101),
        &"é".repeat(101),
    ] {
        assert_same(&fast, &general, text);
    }
}
