//! `bench-suggest --snapshot URI --queries queries.jsonl [--reps N] [--seed N]
//! [--write-mistyped FILE]`: how well and
//! how fast "did you mean" (`"suggest": true`, server/src/search/spelling.rs) answers. Each
//! query's longest word of 5 or more characters that some row holds is mistyped once
//! (bench/src/typos.rs: a swap, a letter left out, doubled or changed; never the first), and
//! the keyword search of the mistyped query asks for a suggestion: how often the suggestion
//! gives back the word as written, another word, or nothing; how often the queries as
//! written get a suggestion at all (their words no row holds); and the keyword search's
//! time without typo tolerance, with it (the default) and with the suggestion too, and the
//! `auto` search's (the query embedded; under typo tolerance the corrected query too) without
//! and with typo tolerance (p50 / p99 over `--reps` runs). `--write-mistyped` writes the
//! mistyped queries (their ids kept) as a BEIR queries file, for `quarry eval` to measure
//! search on them. Nothing is tuned on these figures: they measure the rule as it is.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use quarry_bench::arg_value as value;
use quarry_bench::search_latency::percentiles;
use quarry_bench::typos::{mistype, Seeded};
use quarry_indexer::embed::{BertEmbedder, EmbedOptions};
use quarry_indexer::index::analysis::{pieces, Piece};
use quarry_indexer::index::KeywordQuery;
use quarry_server::{LoadOptions, LoadedSnapshot, Mode, SearchRequest, Searcher};

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let model = quarry_bench::model_dir()?;
    let queries: Vec<(String, String)> =
        std::fs::read_to_string(value("--queries").context("--queries FILE is required")?)?
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| Some((v["_id"].as_str()?.to_string(), v["text"].as_str()?.to_string())))
            .collect();
    let mut mistyped_queries = String::new();
    let reps: usize = value("--reps").and_then(|v| v.parse().ok()).unwrap_or(3);
    let seed: u64 = value("--seed").and_then(|v| v.parse().ok()).unwrap_or(42);
    let snapshot = value("--snapshot").context("--snapshot URI is required")?;
    let loaded = LoadedSnapshot::load(&snapshot, &LoadOptions::default()).await?;
    let embedder = Arc::new(BertEmbedder::load(&model, EmbedOptions::default())?);
    let searcher = Searcher::new(Arc::new(loaded), embedder)?;
    let held = |word: &str| -> anyhow::Result<bool> {
        let stats = searcher.keyword_stats(&KeywordQuery::text(word))?;
        Ok(stats.doc_freq.values().any(|&rows| rows > 0))
    };
    let search_in = |mode: Mode,
                     query: &str,
                     suggest: bool,
                     typo_tolerance: bool|
     -> anyhow::Result<(Option<quarry_server::search::spelling::Suggestion>, f64)> {
        let request = SearchRequest {
            query: query.to_string(),
            mode,
            top_k: 10,
            query_syntax: quarry_server::search::query_syntax::QuerySyntax::Plain,
            suggest,
            typo_tolerance,
            ..Default::default()
        };
        let started = Instant::now();
        let outcome = searcher.search(&request)?;
        Ok((outcome.result.suggestion, started.elapsed().as_secs_f64()))
    };
    let search =
        |query: &str, suggest: bool, typo_tolerance: bool| search_in(Mode::Keyword, query, suggest, typo_tolerance);
    let mut draw = Seeded::new(seed);
    let (mut mistyped, mut a_word, mut restored, mut other, mut none) = (0, 0, 0, 0, 0);
    let mut as_written_suggested = 0;
    let (mut plain_times, mut tolerant_times, mut suggest_times) = (Vec::new(), Vec::new(), Vec::new());
    let (mut written_plain_times, mut written_tolerant_times) = (Vec::new(), Vec::new());
    let (mut auto_times, mut auto_tolerant_times) = (Vec::new(), Vec::new());
    let (mut examples, mut as_written_examples): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for (id, query) in &queries {
        for _ in 0..reps.max(1) {
            written_plain_times.push(search(query, false, false)?.1);
            written_tolerant_times.push(search(query, false, true)?.1);
        }
        if let Some(suggestion) = search(query, true, true)?.0 {
            as_written_suggested += 1;
            if as_written_examples.len() < 12 {
                let corrections: Vec<String> = suggestion
                    .corrections
                    .iter()
                    .map(|c| format!("{} -> {}", c.word, c.suggestion))
                    .collect();
                as_written_examples.push(corrections.join(", "));
            }
        }
        // The longest word of 5 or more letters some row holds.
        let mut words: Vec<std::ops::Range<usize>> = pieces(query)
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Word(range) => Some(range),
                Piece::Pairs(_) => None,
            })
            .filter(|range| {
                let w = &query[range.clone()];
                w.chars().count() >= 5 && w.chars().all(char::is_alphabetic)
            })
            .collect();
        words.sort_by_key(|range| std::cmp::Reverse(query[range.clone()].chars().count()));
        let Some(range) = words
            .into_iter()
            .find(|range| held(&query[range.clone()]).unwrap_or(false))
        else {
            continue;
        };
        let word = &query[range.clone()];
        let Some(typo) = mistype(word, &mut draw) else {
            continue;
        };
        if held(&typo)? {
            a_word += 1;
            continue;
        }
        mistyped += 1;
        let misspelt = format!("{}{typo}{}", &query[..range.start], &query[range.end..]);
        mistyped_queries.push_str(&serde_json::json!({"_id": id, "text": misspelt}).to_string());
        mistyped_queries.push('\n');
        for _ in 0..reps.max(1) {
            plain_times.push(search(&misspelt, false, false)?.1);
            tolerant_times.push(search(&misspelt, false, true)?.1);
            suggest_times.push(search(&misspelt, true, true)?.1);
            auto_times.push(search_in(Mode::Auto, &misspelt, false, false)?.1);
            auto_tolerant_times.push(search_in(Mode::Auto, &misspelt, false, true)?.1);
        }
        let suggestion = search(&misspelt, true, true)?.0;
        let correction = suggestion
            .as_ref()
            .and_then(|s| s.corrections.iter().find(|c| c.word == typo))
            .map(|c| c.suggestion.clone());
        match correction {
            Some(fixed) if fixed.to_lowercase() == word.to_lowercase() => restored += 1,
            Some(fixed) => {
                other += 1;
                if examples.len() < 12 {
                    examples.push(format!("{word} -> {typo} -> {fixed}"));
                }
            }
            None => none += 1,
        }
    }
    if let Some(path) = value("--write-mistyped") {
        std::fs::write(&path, &mistyped_queries).with_context(|| format!("writing {path}"))?;
    }
    let (written_plain, written_tolerant) = (percentiles(written_plain_times), percentiles(written_tolerant_times));
    let (plain, tolerant, with) = (
        percentiles(plain_times),
        percentiles(tolerant_times),
        percentiles(suggest_times),
    );
    let (auto, auto_tolerant) = (percentiles(auto_times), percentiles(auto_tolerant_times));
    let share = |n: usize| 100.0 * n as f64 / mistyped.max(1) as f64;
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "snapshot": snapshot, "queries": queries.len(), "seed": seed, "reps": reps,
            "as_written_with_a_suggestion": as_written_suggested, "as_written_examples": as_written_examples,
            "mistyped": mistyped, "typo_was_a_word": a_word,
            "restored": restored, "another_word": other, "no_suggestion": none,
            "as_written_keyword_search_ms": written_plain,
            "as_written_typo_tolerant_keyword_search_ms": written_tolerant,
            "keyword_search_ms": plain, "typo_tolerant_keyword_search_ms": tolerant,
            "keyword_search_with_suggest_ms": with,
            "auto_search_ms": auto, "typo_tolerant_auto_search_ms": auto_tolerant,
            "other_word_examples": examples,
        }))?
    );
    println!(
        "\nas written: keyword search p50 / p99 {:.2} / {:.2} ms, typo-tolerant {:.2} / {:.2} ms",
        written_plain.p50_ms, written_plain.p99_ms, written_tolerant.p50_ms, written_tolerant.p99_ms
    );
    println!(
        "mistyped: auto search (the query embedded) p50 / p99 {:.2} / {:.2} ms, typo-tolerant {:.2} / {:.2} ms",
        auto.p50_ms, auto.p99_ms, auto_tolerant.p50_ms, auto_tolerant.p99_ms
    );
    println!(
        "\n| queries | as written: suggested | mistyped | restored | another word | none | typo a word | search p50 / p99 ms | typo-tolerant p50 / p99 ms | with suggest p50 / p99 ms |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n| {} | {} | {} | {} ({:.1}%) | {} ({:.1}%) | {} ({:.1}%) | {} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} |",
        queries.len(),
        as_written_suggested,
        mistyped,
        restored,
        share(restored),
        other,
        share(other),
        none,
        share(none),
        a_word,
        plain.p50_ms,
        plain.p99_ms,
        tolerant.p50_ms,
        tolerant.p99_ms,
        with.p50_ms,
        with.p99_ms
    );
    Ok(())
}
