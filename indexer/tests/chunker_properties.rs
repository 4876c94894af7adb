//! Chunker properties on seeded random documents (English, CJK, emoji, giant words),
//! measured with the real model tokenizer: deterministic, UTF-8 safe (every chunk is a
//! verbatim piece of its section), token bound, overlap honoured, nothing lost, no empties.

use crate::common;

use std::sync::Arc;

use quarry_indexer::chunk::{Chunk, Chunker, ChunkerConfig, TokenChunker};
use quarry_indexer::embed::ModelTokenizer;
use quarry_indexer::parse::{Block, Document, TimeMark};

use common::Rng;

fn tokenizer() -> Arc<ModelTokenizer> {
    Arc::new(ModelTokenizer::from_file(&common::model_dir().join("tokenizer.json"), 256).unwrap())
}

const WORDS: &[&str] = &[
    "vector",
    "search",
    "index",
    "quarry",
    "embedding",
    "latency",
    "throughput",
    "GPU",
    "shard",
    "manifest",
    "snapshot",
    "recall",
    "cosine",
    "the",
    "of",
    "and",
    "向量",
    "检索",
    "東京",
    "日本語のテキスト",
    "🚀",
    "🔥👍",
    "naïve",
    "café",
    "Ünïcödé",
    "x86_64",
    "3.14159",
    "supercalifragilisticexpialidocious",
    "антидизестаблишментарианизм",
];

fn random_text(rng: &mut Rng, words: usize) -> String {
    let mut text = String::new();
    for i in 0..words {
        let word = match rng.below(40) {
            0 => "a".repeat(300 + rng.below(200)), // a word longer than the whole window
            1 => {
                // CJK with no spaces at all; random characters so every piece is unique.
                const CJK: &[char] = &[
                    '漢', '字', '検', '索', '向', '量', '東', '京', '語', '文', '書', '速', '度', '高', '低', '图',
                ];
                (0..300 + rng.below(200)).map(|_| CJK[rng.below(CJK.len())]).collect()
            }
            _ => WORDS[rng.below(WORDS.len())].to_string(),
        };
        text.push_str(&word);
        text.push_str(match rng.below(30) {
            0 => ".\n\n",
            1 | 2 => ". ",
            3 => "\n",
            4 => "。",
            _ => " ",
        });
        if i % 97 == 96 {
            text.push_str(&format!("{} ", rng.next()));
        }
    }
    text
}

fn document(text: &str, blocks: Vec<Block>) -> Document {
    Document {
        doc_id: "doc".into(),
        uri: "memory://t/doc.txt".into(),
        file_name: "doc.txt".into(),
        title: "doc".into(),
        source: "memory".into(),
        tags: vec![],
        metadata: Default::default(),
        content_hash: String::new(),
        size: text.len() as u64,
        etag: None,
        blocks,
        warnings: Vec::new(),
    }
}

/// Byte ranges of the chunks inside `section`, found in order. With overlap a chunk starts
/// inside the previous one; without, at or after its end.
fn locate(section: &str, chunks: &[Chunk], overlap: bool) -> Vec<(usize, usize)> {
    let mut from = 0;
    chunks
        .iter()
        .map(|chunk| {
            let start = from
                + section[from..]
                    .find(&chunk.text)
                    .unwrap_or_else(|| panic!("chunk {} is not verbatim text of its section", chunk.index));
            from = if overlap {
                start + chunk.text.chars().next().map_or(1, char::len_utf8)
            } else {
                start + chunk.text.len()
            };
            (start, start + chunk.text.len())
        })
        .collect()
}

#[test]
fn random_documents_keep_every_property() {
    let tokenizer = tokenizer();
    let specials = tokenizer.special_tokens();
    assert_eq!(specials, 2);
    for (seed, config) in [
        (1u64, ChunkerConfig::default()),
        (
            2,
            ChunkerConfig {
                max_tokens: 64,
                overlap_tokens: 8,
            },
        ),
        (
            3,
            ChunkerConfig {
                max_tokens: 128,
                overlap_tokens: 0,
            },
        ),
    ] {
        let chunker = TokenChunker::new(config, tokenizer.clone(), "test").unwrap();
        let mut rng = Rng(seed * 0x9E37_79B9_7F4A_7C15);
        for round in 0..6 {
            let words = 200 + rng.below(1500);
            let text = random_text(&mut rng, words);
            let doc = document(&text, vec![Block::text(text.clone(), &[])]);
            let chunks = chunker.chunk(&doc).unwrap();
            assert_eq!(
                chunks,
                chunker.chunk(&doc).unwrap(),
                "deterministic (seed {seed} round {round})"
            );
            assert_model_ids_are_the_embedders(&chunker, &doc);
            assert!(!chunks.is_empty());
            let section = text.trim();
            let ranges = locate(section, &chunks, config.overlap_tokens > 0);
            for (i, chunk) in chunks.iter().enumerate() {
                assert!(!chunk.text.trim().is_empty(), "empty chunk");
                assert_eq!(chunk.index as usize, i);
                assert_eq!(chunk.chunk_id, format!("doc-{i}"));
                let tokens = tokenizer.count(&chunk.text).unwrap();
                assert_eq!(chunk.token_count as usize, tokens);
                assert!(
                    tokens + specials <= config.max_tokens,
                    "chunk {i} has {tokens} tokens (seed {seed} round {round})"
                );
            }
            assert_eq!(ranges[0].0, 0, "text before the first chunk was lost");
            assert_eq!(
                ranges.last().unwrap().1,
                section.len(),
                "text after the last chunk was lost"
            );
            for pair in ranges.windows(2) {
                let ((_, end), (next_start, _)) = (pair[0], pair[1]);
                if config.overlap_tokens == 0 {
                    assert!(
                        next_start >= end && section[end..next_start].trim().is_empty(),
                        "gap or overlap without overlap configured: {end} {next_start} {:?} / {:?}",
                        section[..end].chars().rev().take(20).collect::<String>(),
                        section[next_start..].chars().take(20).collect::<String>()
                    );
                } else {
                    assert!(
                        next_start < end,
                        "consecutive chunks do not overlap (seed {seed} round {round}): {:?} / {:?}",
                        &section[end.saturating_sub(60)..end],
                        &section[next_start..(next_start + 60).min(section.len())]
                    );
                    let shared = tokenizer.count(&section[next_start..end]).unwrap();
                    assert!(
                        (1..=config.overlap_tokens + 1).contains(&shared),
                        "overlap of {shared} tokens (max {})",
                        config.overlap_tokens
                    );
                }
            }
        }
    }
}

/// Every chunk comes with model ids, and they are exactly what the embedder's own
/// tokenization of the chunk text gives (specials added, window applied).
fn assert_model_ids_are_the_embedders(chunker: &TokenChunker, doc: &Document) {
    let measured = chunker.chunk_for_model(doc).unwrap();
    assert_eq!(measured.chunks, chunker.chunk(doc).unwrap());
    assert_eq!(measured.model_ids.len(), measured.chunks.len());
    let texts: Vec<&str> = measured.chunks.iter().map(|c| c.text.as_str()).collect();
    let expected = chunker.tokenizer().encode_for_model(&texts).unwrap();
    for ((chunk, ids), expected) in measured.chunks.iter().zip(measured.model_ids).zip(expected) {
        assert_eq!(ids.as_ref(), Some(&expected), "chunk {} {:?}", chunk.index, chunk.text);
        assert_eq!(chunk.token_count as usize + 2, expected.len());
    }
}

#[test]
fn model_ids_of_headers_specials_and_untrimmed_sections() {
    let tokenizer = tokenizer();
    let chunker = TokenChunker::new(
        ChunkerConfig {
            max_tokens: 64,
            overlap_tokens: 8,
        },
        tokenizer.clone(),
        "test",
    )
    .unwrap();
    let rows: Vec<Block> = (0..40)
        .map(|i| Block {
            text: format!("row {i}, vector {}, [SEP] literal [CLS]", i * 7),
            kind: quarry_indexer::parse::ContentType::Table,
            header: Some("id, name, note".into()),
            ..Default::default()
        })
        .collect();
    let mut blocks = vec![
        Block::text("  leading and trailing blanks [SEP]  \n", &[]),
        Block::text("[CLS]", &["h".into()]),
    ];
    blocks.extend(rows);
    blocks.push(Block::text(random_text(&mut Rng(7), 300), &[]));
    let doc = document("", blocks);
    assert!(chunker.chunk(&doc).unwrap().len() > 5);
    assert_model_ids_are_the_embedders(&chunker, &doc);
}

/// A table header too long to repeat (thousands of columns) is read once, as the table's
/// first line, instead of failing the document.
#[test]
fn a_header_over_half_a_chunk_is_read_once() {
    let tokenizer = tokenizer();
    let chunker = TokenChunker::new(
        ChunkerConfig {
            max_tokens: 64,
            overlap_tokens: 8,
        },
        tokenizer.clone(),
        "test",
    )
    .unwrap();
    let header = (0..200).map(|i| format!("column{i}")).collect::<Vec<_>>().join(", ");
    let rows: Vec<Block> = (0..10)
        .map(|i| Block {
            text: format!("row {i}, value {}", i * 7),
            kind: quarry_indexer::parse::ContentType::Table,
            header: Some(header.clone()),
            ..Default::default()
        })
        .collect();
    let doc = document("", rows);
    let chunks = chunker.chunk(&doc).unwrap();
    assert!(chunks[0].text.starts_with("column0, column1"), "{:?}", chunks[0].text);
    assert!(
        chunks.iter().filter(|c| c.text.contains("column0,")).count() == 1,
        "the header is not repeated"
    );
    assert!(chunks.iter().any(|c| c.text.contains("row 9, value 63")));
    assert!(chunks.iter().all(|c| tokenizer.count(&c.text).unwrap() <= 62));
    assert_model_ids_are_the_embedders(&chunker, &doc);
}

#[test]
fn a_transcripts_chunks_start_where_their_first_words_are_said() {
    let chunker = TokenChunker::new(
        ChunkerConfig {
            max_tokens: 64,
            overlap_tokens: 8,
        },
        tokenizer(),
        "test",
    )
    .unwrap();
    // Two paragraphs of cues, the second's text with white space before it (trimmed by the
    // chunker); cue n is said 7 n seconds in. The section's text and each cue's byte range in
    // it, for the check.
    let (mut blocks, mut section, mut cues) = (Vec::new(), String::new(), Vec::new());
    for (paragraph, lead) in [(0..30, ""), (30..50, "  \n")] {
        let mut text = lead.to_string();
        let mut times = Vec::new();
        if !section.is_empty() {
            section.push_str("\n\n");
        }
        for n in paragraph {
            let cue = format!("Cue {n} tells of the tide, the quay and the harbour lights. ");
            times.push(TimeMark {
                at: text.len() as u32,
                seconds: 7 * n,
            });
            let start = section.len() + text.len() - lead.len();
            cues.push((start..start + cue.len(), 7 * n));
            text.push_str(&cue);
        }
        section.push_str(text.trim());
        blocks.push(Block {
            times,
            ..Block::text(text, &[])
        });
    }
    let chunks = chunker.chunk(&document("", blocks)).unwrap();
    assert!(chunks.len() > 10, "{} chunks", chunks.len());
    for (chunk, (start, _)) in chunks.iter().zip(locate(&section, &chunks, true)) {
        let said = cues.iter().find(|(range, _)| range.contains(&start)).map(|(_, s)| *s);
        assert_eq!(chunk.start_seconds, said, "chunk {}: {:?}", chunk.index, chunk.text);
    }
    assert_eq!(chunks[0].start_seconds, Some(0));
    assert!(chunks.last().unwrap().start_seconds > Some(7 * 40));
    // A text without times has none.
    let plain = chunker
        .chunk(&document("", vec![Block::text("No recording here.", &[])]))
        .unwrap();
    assert_eq!(plain[0].start_seconds, None);
}

#[test]
fn paragraph_boundaries_win_and_heading_paths_are_carried() {
    let tokenizer = tokenizer();
    let chunker = TokenChunker::new(
        ChunkerConfig {
            max_tokens: 256,
            overlap_tokens: 0,
        },
        tokenizer.clone(),
        "test",
    )
    .unwrap();
    let sentence = "Graphics processors multiply large matrices quickly. ";
    let para1 = sentence.repeat(18).trim().to_string();
    let para2 = "Keyword search ranks by term frequency. ".repeat(18).trim().to_string();
    assert!(tokenizer.count(&para1).unwrap() < 254 && tokenizer.count(&format!("{para1}\n\n{para2}")).unwrap() > 254);
    let heading = vec!["Guide".to_string(), "Speed".to_string()];
    let doc = document(
        "",
        vec![
            Block::text(para1.clone(), &heading),
            Block::text(para2.clone(), &heading),
            Block::text("Other section.", &["Guide".into()]),
        ],
    );
    let chunks = chunker.chunk(&doc).unwrap();
    assert_eq!(chunks[0].text, para1, "the cut falls on the paragraph boundary");
    assert_eq!(chunks[1].text, para2);
    assert_eq!(chunks[0].heading_path, heading);
    assert_eq!(chunks[2].text, "Other section.");
    assert_eq!(chunks[2].heading_path, ["Guide"]);
}

#[test]
fn signature_changes_with_the_config() {
    let tokenizer = tokenizer();
    let a = TokenChunker::new(ChunkerConfig::default(), tokenizer.clone(), "model-a").unwrap();
    let b = TokenChunker::new(
        ChunkerConfig {
            max_tokens: 200,
            overlap_tokens: 32,
        },
        tokenizer.clone(),
        "model-a",
    )
    .unwrap();
    let c = TokenChunker::new(ChunkerConfig::default(), tokenizer.clone(), "model-b").unwrap();
    assert_eq!(
        a.signature(),
        TokenChunker::new(ChunkerConfig::default(), tokenizer, "model-a")
            .unwrap()
            .signature()
    );
    assert_ne!(a.signature(), b.signature());
    assert_ne!(a.signature(), c.signature());
}

/// A window too small for any text is refused with the smallest one that is accepted, and
/// that one is.
#[test]
fn a_window_too_small_is_refused_naming_the_smallest() {
    let tokenizer = tokenizer();
    let window = |max_tokens| {
        TokenChunker::new(
            ChunkerConfig {
                max_tokens,
                overlap_tokens: 0,
            },
            tokenizer.clone(),
            "model-a",
        )
    };
    let Err(refused) = window(8) else {
        panic!("a window of 8 tokens was accepted")
    };
    let message = refused.to_string();
    let smallest: usize = message
        .split("the smallest is ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no smallest window in `{message}`"));
    assert!(message.contains("chunk window of 8 tokens is too small"), "{message}");
    assert!(
        window(smallest).is_ok(),
        "the smallest window named, {smallest}, is refused"
    );
    assert!(window(smallest - 1).is_err(), "{} tokens accepted", smallest - 1);
}

/// The run skips counting a document's tokens when its text has no more bytes than the
/// limit: no text may have more tokens than bytes.
#[test]
fn no_text_has_more_tokens_than_bytes() {
    let tokenizer = tokenizer();
    let tricky = [
        "a",
        "İİİ",
        "ǖǖǖ",
        "a\u{0308}\u{0304}a\u{0308}\u{0304}",
        "가나다라마바사",
        "한국어 텍스트",
        "\u{FDFA}",
        "ﬁﬂ",
        "東京東京",
        "。。。",
        "🚀🔥👍",
        "x,y;z.!?",
        "\u{00AD}\u{200B}\u{FEFF}",
        "ℌℍℎ",
        "①②③",
        "Ⅻ",
        "ß",
        "ǅǆ",
        "\u{1F469}\u{200D}\u{1F4BB}",
    ];
    let mut rng = Rng(0xB17E5);
    let random: Vec<String> = (0..50).map(|_| random_text(&mut rng, 300)).collect();
    for text in tricky.iter().copied().chain(random.iter().map(String::as_str)) {
        let tokens = tokenizer.count(text).unwrap();
        assert!(
            tokens <= text.len(),
            "{text:?}: {tokens} tokens in {} bytes",
            text.len()
        );
    }
}

#[test]
fn a_word_longer_than_any_token_is_cut_into_bounded_pieces() {
    use quarry_indexer::chunk::{weighed_token_count, MAX_TOKEN_BYTES};
    let tokenizer = tokenizer();
    let chunker = TokenChunker::new(ChunkerConfig::default(), tokenizer.clone(), "t").unwrap();
    // A hex dump with no space, and Thai, which an English vocabulary reads a run at a time
    // as one unknown token.
    // Random, so each chunk is found where it is.
    let mut rng = Rng(0x7E8);
    let dump: String = (0..200_000)
        .map(|_| char::from(b"0123456789abcdef"[rng.below(16)]))
        .collect();
    let syllables = [
        "ภา",
        "ษา",
        "ไทย",
        "เขียน",
        "ติด",
        "กัน",
        "โดย",
        "ไม่",
        "มี",
        "ช่อง",
        "ว่าง",
        "คำ",
    ];
    let thai: String = (0..20_000).map(|_| syllables[rng.below(syllables.len())]).collect();
    // Counted a piece at a time, a long text of words counts what it counts whole.
    let words = "The harbour log is kept daily, tide by tide. ".repeat(8_000);
    assert_eq!(
        weighed_token_count(&tokenizer, &words).unwrap(),
        tokenizer.count(&words).unwrap()
    );
    for text in [dump.as_str(), thai.as_str()] {
        assert!(tokenizer.count(text).unwrap() < 10, "one unknown token or a few");
        let counted = weighed_token_count(&tokenizer, text).unwrap();
        assert!(counted >= text.len() / MAX_TOKEN_BYTES, "{counted}");
        let doc = document(text, vec![Block::text(text, &[])]);
        let chunks = chunker.chunk(&doc).unwrap();
        let room = ChunkerConfig::default().max_tokens - 2;
        assert!(
            chunks.len() >= text.len() / (room * MAX_TOKEN_BYTES),
            "{} chunks",
            chunks.len()
        );
        for chunk in &chunks {
            assert!(chunk.text.len() <= room * MAX_TOKEN_BYTES, "{} bytes", chunk.text.len());
        }
        // Verbatim pieces that cover the text.
        let ranges = locate(text, &chunks, true);
        assert_eq!(ranges.first().map(|r| r.0), Some(0));
        assert_eq!(ranges.last().map(|r| r.1), Some(text.len()));
        assert!(ranges.windows(2).all(|w| w[1].0 <= w[0].1), "a gap between chunks");
    }
}
