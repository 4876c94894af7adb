//! `quarry search SNAPSHOT "query"`: a readable table (rank, score, citation, snippet; then
//! any facet counts) or JSON.

use std::process::ExitCode;

use quarry_server::search::similar_to::{ExampleId, SimilarTo};
use quarry_server::{ChunkResult, Mode, SearchRequest};

use super::{runtime, LoadArgs};

#[derive(clap::Args, Debug)]
pub struct SearchArgs {
    /// Snapshot root (folder or s3://bucket/prefix).
    pub snapshot: String,
    /// The query text: "a quoted phrase" must be in each result, -word and -"a phrase" must not.
    /// May be left out with --similar-to-chunk or --similar-to-document.
    #[arg(required_unless_present_any = ["similar_to_chunk", "similar_to_document", "unlike_chunk", "unlike_document"])]
    pub query: Option<String>,
    /// Rank by this chunk's embedding instead of the query's (a result's chunk_id): what is
    /// most like it; its document is left out unless --include-source. Given again, or with
    /// --similar-to-document, the examples rank by their mean.
    #[arg(long)]
    pub similar_to_chunk: Vec<String>,
    /// Rank by this document's embedding (the mean of its chunks'; a result's metadata.doc_id).
    #[arg(long)]
    pub similar_to_document: Vec<String>,
    /// With --similar-to-chunk or --similar-to-document: a chunk the results should resemble
    /// less (the examples rank by 2 x their mean - the mean of these).
    #[arg(long)]
    pub unlike_chunk: Vec<String>,
    /// With --similar-to-chunk or --similar-to-document: a document the results should resemble less.
    #[arg(long)]
    pub unlike_document: Vec<String>,
    /// With --similar-to-chunk or --similar-to-document: the examples' own documents may be among the results.
    #[arg(long)]
    pub include_source: bool,
    /// simple (quoted phrases and -exclusions) or plain (quotes and dashes are text).
    #[arg(long, env = "QUARRY_QUERY_SYNTAX", default_value = "simple")]
    pub query_syntax: quarry_server::search::query_syntax::QuerySyntax,
    /// auto | vector | keyword | hybrid (also semantic, bm25). auto fuses both lanes, weighing the vector lane by how much of the query and the collection the model reads.
    #[arg(long, env = "QUARRY_MODE", default_value = "auto")]
    pub mode: Mode,
    #[arg(long, env = "QUARRY_TOP_K", default_value_t = 10)]
    pub top_k: usize,
    /// Skip this many results first (the next page of top_k: --offset top_k).
    #[arg(long, env = "QUARRY_OFFSET", default_value_t = 0)]
    pub offset: usize,
    /// At most this many chunks of any one document (its best ones); top_k still fills when enough documents match.
    #[arg(long, env = "QUARRY_MAX_CHUNKS_PER_DOCUMENT")]
    pub max_chunks_per_document: Option<usize>,
    /// key=value[,value...]: source, tags (any of), file_name, doc_id, or a metadata key; a metadata key also takes key>=value, >, <=, < and !=. Repeatable.
    #[arg(long = "filter")]
    pub filters: Vec<String>,
    /// Leave out the documents this key=value (same forms as --filter) matches; a document any --exclude matches is left out. Repeatable.
    #[arg(long = "exclude")]
    pub exclude: Vec<String>,
    /// Leave out results scoring below this (0..1).
    #[arg(long)]
    pub min_score: Option<f32>,
    /// Hybrid: weight of the vector lane.
    #[arg(long, default_value_t = 1.0)]
    pub vector_weight: f32,
    /// Hybrid: weight of the keyword lane.
    #[arg(long, default_value_t = 1.0)]
    pub keyword_weight: f32,
    /// Mark the words matching the query: in the table as [word], in JSON as metadata.highlights (character ranges).
    #[arg(long)]
    pub highlight: bool,
    /// Add up to N chunks of each result's document before and after it (JSON: metadata.context_before / context_after).
    #[arg(long, default_value_t = 0)]
    pub context_chunks: usize,
    /// Count the documents the search could return by this field's values: source, file_name, tags or metadata.KEY. Repeatable.
    #[arg(long = "facet")]
    pub facets: Vec<String>,
    /// Values listed per --facet, most documents first.
    #[arg(long, default_value_t = quarry_server::search::facets::DEFAULT_FACET_SIZE)]
    pub facet_size: usize,
    /// Which layer of each document to return: L2 (its chunks), L1 (its overview) or L0 (its
    /// abstract; L0 and L1 once per document).
    #[arg(long, default_value = "L2")]
    pub layer: quarry_server::search::layer::Layer,
    /// "Did you mean": the query with its words no row holds corrected to the index's nearest
    /// word (a typing error or two away), printed before the table (JSON: suggestion): as
    /// "including results for" under typo tolerance, which reads those words so too.
    #[arg(long)]
    pub suggest: bool,
    /// Read the query only as typed: no typo tolerance (by default each word no row holds is
    /// also read as the index's nearest word, by the keyword lane and the vector lane).
    #[arg(long)]
    pub no_typo_tolerance: bool,
    /// Print the RetrievalResult as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub load: LoadArgs,
}

fn snippet(text: &str, width: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= width {
        return flat;
    }
    format!("{}…", flat.chars().take(width - 1).collect::<String>())
}

/// A chunk's text with its highlighted words in [brackets], from a little before the first.
fn marked(chunk: &ChunkResult) -> String {
    let ranges: Vec<(usize, usize)> = chunk
        .metadata
        .get("highlights")
        .and_then(|h| serde_json::from_value(h.clone()).ok())
        .unwrap_or_default();
    let chars: Vec<char> = chunk.content.chars().collect();
    let start = ranges.first().map(|r| r.0.saturating_sub(20)).unwrap_or(0);
    let (mut out, mut at) = (String::new(), start);
    for (from, to) in ranges {
        out.extend(&chars[at..from]);
        out.push('[');
        out.extend(&chars[from..to]);
        out.push(']');
        at = to;
    }
    out.extend(&chars[at..]);
    if start > 0 {
        format!("…{out}")
    } else {
        out
    }
}

/// The examples the flags name: chunks, then documents.
fn examples(chunks: &[String], documents: &[String]) -> Vec<ExampleId> {
    let chunks = chunks.iter().map(|id| ExampleId {
        chunk_id: Some(id.clone()),
        document_id: None,
    });
    let documents = documents.iter().map(|id| ExampleId {
        chunk_id: None,
        document_id: Some(id.clone()),
    });
    chunks.chain(documents).collect()
}

pub fn run(args: SearchArgs) -> anyhow::Result<ExitCode> {
    let mut request = SearchRequest::new(args.query.as_deref().unwrap_or_default());
    let likes = examples(&args.similar_to_chunk, &args.similar_to_document);
    let unlikes = examples(&args.unlike_chunk, &args.unlike_document);
    if likes.is_empty() && !unlikes.is_empty() {
        anyhow::bail!("--unlike-chunk and --unlike-document steer a search by example: give --similar-to-chunk or --similar-to-document as well");
    }
    if !likes.is_empty() {
        request.similar_to = Some(SimilarTo {
            like: likes,
            unlike: unlikes,
            include_source: args.include_source,
            ..SimilarTo::default()
        });
    }
    request.mode = args.mode;
    request.top_k = args.top_k;
    request.offset = args.offset;
    request.max_chunks_per_document = args.max_chunks_per_document;
    request.highlight = args.highlight;
    request.suggest = args.suggest;
    request.typo_tolerance = !args.no_typo_tolerance;
    request.context_chunks = args.context_chunks;
    request.layer = args.layer;
    request.query_syntax = args.query_syntax;
    request.facets = args.facets.clone();
    request.facet_size = args.facet_size;
    request.min_score = args.min_score;
    request.vector_weight = args.vector_weight;
    request.keyword_weight = args.keyword_weight;
    for spec in &args.filters {
        request.filters.add(spec)?;
    }
    for spec in &args.exclude {
        request.filters.add_exclusion(spec)?;
    }
    let outcome = runtime()?.block_on(async {
        let searcher = args.load.searcher(&args.snapshot).await?;
        anyhow::Ok(searcher.search(&request)?)
    })?;
    let result = &outcome.result;
    if args.json {
        println!("{}", serde_json::to_string_pretty(result)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(suggestion) = &result.suggestion {
        let corrections: Vec<String> = suggestion
            .corrections
            .iter()
            .map(|c| format!("{} -> {}", c.word, c.suggestion))
            .collect();
        // Under typo tolerance the results already include the corrected words'.
        let heading = match args.no_typo_tolerance {
            true => "did you mean",
            false => "including results for",
        };
        println!("{heading}: {}  ({})\n", suggestion.query, corrections.join(", "));
    }
    println!("{:>4}  {:>6}  {:<32}  snippet", "rank", "score", "citation");
    for (rank, chunk) in result.chunks.iter().enumerate() {
        println!(
            "{:>4}  {:>6.3}  {:<32}  {}",
            args.offset + rank + 1,
            chunk.score,
            snippet(&chunk.display_citation, 32),
            snippet(&marked(chunk), 90)
        );
    }
    for (name, facet) in result.facets.iter().flatten() {
        println!(
            "\n{name} ({} document{}):",
            facet.documents,
            if facet.documents == 1 { "" } else { "s" }
        );
        for value in &facet.values {
            let shown = value
                .value
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| value.value.to_string());
            println!("  {:>7}  {shown}", value.count);
        }
        if facet.more_values > 0 {
            println!("  ({} more values)", facet.more_values);
        }
        if facet.missing > 0 {
            println!("  {:>7}  (none)", facet.missing);
        }
    }
    // A search by example reads its example's stored vector instead of embedding a query.
    let first_step = match request.similar_to {
        Some(_) => "finding the example",
        None => "embedding",
    };
    println!(
        "\n{} results ({} mode{}), {:.1} ms {first_step} + {:.1} ms search",
        result.chunks.len(),
        result.mode,
        if result.underfilled {
            format!("; fewer than top_k = {} matched", args.top_k)
        } else {
            String::new()
        },
        outcome.timings.embed_secs * 1e3,
        outcome.timings.search_secs * 1e3
    );
    Ok(ExitCode::SUCCESS)
}
