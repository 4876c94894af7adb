//! The served model's vectors for any texts, in the two shapes clients speak: OpenAI's
//! `POST /v1/embeddings` (the `openai` client, LangChain, LlamaIndex) and Text Embeddings
//! Inference's `POST /embed`. Both run on the search pool (bounded, 503 when full) through
//! the embedder searches use: a request of one text joins the shared query passes, more go to
//! the model as one batch (on the GPU when the server has one).
//!
//! A text longer than the model's window is refused, as OpenAI and TEI refuse one, naming the
//! input and its token count, unless the request sets `truncate: true` (TEI's field; an
//! extension on /v1/embeddings): then its first tokens are embedded, as `quarry embed` and the
//! golden file do. Token arrays (OpenAI's `input: [[ids]]`) are ids of the served model's
//! vocabulary, specials left out (not another model's, such as tiktoken's).

use axum::extract::State;
use axum::Json;
use base64::Engine;
use quarry_indexer::embed::Embedder;
use serde_json::{json, Map, Value};

use super::api_error::{ApiError, OpenAiError, TeiError};
use super::rag::body_object;
use super::search::SearchParts;

/// The most inputs one request embeds (OpenAI's limit).
pub const MAX_INPUTS: usize = 2048;
/// The most tokens one request embeds, all inputs together (OpenAI's limit).
pub const MAX_REQUEST_TOKENS: usize = 300_000;

/// What a request gives to embed.
enum Inputs {
    Texts(Vec<String>),
    /// Model vocabulary ids, specials left out.
    Tokens(Vec<Vec<u32>>),
}

/// What was embedded: a vector per input and the model tokens read (specials included).
struct Embedded {
    vectors: Vec<Vec<f32>>,
    tokens: usize,
}

/// The inputs as model ids (specials added), each checked against the window.
fn model_ids(embedder: &dyn Embedder, inputs: &Inputs, truncate: bool, field: &str) -> Result<Vec<Vec<u32>>, ApiError> {
    let tokenizer = embedder.tokenizer();
    let window = tokenizer.max_tokens();
    let vocabulary = tokenizer.vocabulary_size() as u32;
    let count = match inputs {
        Inputs::Texts(texts) => texts.len(),
        Inputs::Tokens(ids) => ids.len(),
    };
    if count == 0 {
        return Err(ApiError::field(field, format!("{field} must hold at least one input")));
    }
    if count > MAX_INPUTS {
        return Err(ApiError::field(
            field,
            format!("{field} holds {count} inputs; at most {MAX_INPUTS} are embedded a request"),
        ));
    }
    let mut all = Vec::with_capacity(count);
    for index in 0..count {
        let (ids, name) = match inputs {
            Inputs::Texts(texts) => {
                if texts[index].is_empty() {
                    return Err(ApiError::field(field, format!("{field}[{index}] is empty")));
                }
                let (_, ids) = tokenizer
                    .tokens_of(&texts[index])
                    .map_err(|e| ApiError::field(field, format!("{field}[{index}] could not be tokenized: {e}")))?;
                (ids, "text")
            }
            Inputs::Tokens(tokens) => {
                if tokens[index].is_empty() {
                    return Err(ApiError::field(field, format!("{field}[{index}] is empty")));
                }
                if let Some(&id) = tokens[index].iter().find(|&&id| id >= vocabulary) {
                    return Err(ApiError::field(
                        field,
                        format!("{field}[{index}] holds token id {id}; the model's vocabulary has {vocabulary} ids"),
                    ));
                }
                (tokens[index].clone(), "token array")
            }
        };
        let with_specials = ids.len() + tokenizer.special_tokens();
        if with_specials > window && !truncate {
            return Err(ApiError::field(
                field,
                format!(
                    "{field}[{index}] is a {name} of {with_specials} tokens; the model reads at most {window} (specials included): send it in parts, or set \"truncate\": true to embed its first {window}"
                ),
            ));
        }
        all.push(tokenizer.model_input(&ids, truncate));
    }
    let tokens: usize = all.iter().map(Vec::len).sum();
    if tokens > MAX_REQUEST_TOKENS {
        return Err(ApiError::field(
            field,
            format!("the inputs hold {tokens} tokens; at most {MAX_REQUEST_TOKENS} are embedded a request"),
        ));
    }
    Ok(all)
}

/// Embeds `inputs` on the search pool.
async fn embed(parts: &SearchParts, inputs: Inputs, truncate: bool, field: &'static str) -> Result<Embedded, ApiError> {
    let embedder = parts.collections.embedder().clone();
    parts
        .queue
        .run(&parts.metrics, move || -> Result<Embedded, ApiError> {
            let ids = model_ids(embedder.as_ref(), &inputs, truncate, field)?;
            let tokens = ids.iter().map(Vec::len).sum();
            // One text takes the searches' path (their cache and shared passes), which
            // tokenizes it to the same ids; more go to the model as one batch.
            let rows = match &inputs {
                Inputs::Texts(texts) if texts.len() == 1 => embedder.embed(&[texts[0].as_str()]),
                _ => embedder.embed_tokens(&ids),
            }
            .map_err(ApiError::from)?;
            let vectors = (0..rows.rows()).map(|i| rows.row(i).to_vec()).collect();
            Ok(Embedded { vectors, tokens })
        })
        .await?
}

/// A string, or an array of strings, of token ids, or of token-id arrays.
fn openai_inputs(value: Option<&Value>) -> Result<Inputs, ApiError> {
    let refuse = || {
        ApiError::field(
            "input",
            "input must be a string, an array of strings, an array of token ids or an array of token-id arrays",
        )
    };
    let ids = |items: &[Value]| -> Option<Vec<u32>> {
        items
            .iter()
            .map(|id| id.as_u64().and_then(|id| u32::try_from(id).ok()))
            .collect()
    };
    match value {
        Some(Value::String(text)) => Ok(Inputs::Texts(vec![text.clone()])),
        Some(Value::Array(items)) if !items.is_empty() && items.iter().all(Value::is_string) => Ok(Inputs::Texts(
            items.iter().filter_map(|t| t.as_str().map(str::to_string)).collect(),
        )),
        Some(Value::Array(items)) if !items.is_empty() && items.iter().all(Value::is_number) => {
            Ok(Inputs::Tokens(vec![ids(items).ok_or_else(refuse)?]))
        }
        Some(Value::Array(items)) if !items.is_empty() && items.iter().all(Value::is_array) => Ok(Inputs::Tokens(
            items
                .iter()
                .map(|item| item.as_array().and_then(|a| ids(a)))
                .collect::<Option<_>>()
                .ok_or_else(refuse)?,
        )),
        Some(Value::Array(items)) if items.is_empty() => {
            Err(ApiError::field("input", "input must hold at least one input"))
        }
        _ => Err(refuse()),
    }
}

fn optional_bool(body: &Map<String, Value>, field: &str, default: bool) -> Result<bool, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ApiError::field(field, format!("{field} must be true or false"))),
    }
}

/// `POST /v1/embeddings`, OpenAI's shape: `{input, model, encoding_format: float | base64,
/// dimensions, user, truncate}` -> `{object: "list", data: [{object: "embedding", index,
/// embedding}], model, usage: {prompt_tokens, total_tokens}}`. The served model answers
/// whatever `model` names; the answer's `model` says which it is.
pub async fn openai_embeddings(
    State(parts): State<SearchParts>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, OpenAiError> {
    let body = body_object(&body)?;
    let inputs = openai_inputs(body.get("input"))?;
    match body.get("model") {
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(_) => return Err(ApiError::field("model", "model must be a string").into()),
    }
    let base64 = match body.get("encoding_format") {
        None | Some(Value::Null) => false,
        Some(Value::String(format)) if format == "float" => false,
        Some(Value::String(format)) if format == "base64" => true,
        Some(_) => return Err(ApiError::field("encoding_format", "encoding_format must be float or base64").into()),
    };
    let info = parts.collections.embedder().info().clone();
    match body.get("dimensions") {
        None | Some(Value::Null) => {}
        Some(value) if value.as_u64() == Some(info.dim as u64) => {}
        Some(value) => {
            return Err(ApiError::field(
                "dimensions",
                format!(
                    "{} embeds in {} dimensions; dimensions {value} cannot be served",
                    info.name, info.dim
                ),
            )
            .into())
        }
    }
    let truncate = optional_bool(&body, "truncate", false)?;
    let embedded = embed(&parts, inputs, truncate, "input").await?;
    let data: Vec<Value> = embedded
        .vectors
        .iter()
        .enumerate()
        .map(|(index, vector)| {
            let embedding = match base64 {
                true => Value::String(base64::engine::general_purpose::STANDARD.encode(little_endian(vector))),
                false => json!(vector),
            };
            json!({ "object": "embedding", "index": index, "embedding": embedding })
        })
        .collect();
    Ok(Json(json!({
        "object": "list",
        "data": data,
        "model": info.name,
        "usage": { "prompt_tokens": embedded.tokens, "total_tokens": embedded.tokens },
    })))
}

/// The bytes of `vector`'s floats, little-endian (what OpenAI's base64 encoding holds).
fn little_endian(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `POST /embed`, Text Embeddings Inference's shape: `{inputs: string | [string], normalize
/// (true), truncate (false)}` -> `[[f32]]`, a vector per input. quarry's vectors are always
/// unit length: `normalize: false` is refused.
pub async fn tei_embed(State(parts): State<SearchParts>, body: axum::body::Bytes) -> Result<Json<Value>, TeiError> {
    let body = body_object(&body).map_err(|e| ApiError::Unprocessable(e.message()))?;
    let inputs = match body.get("inputs") {
        Some(Value::String(text)) => Inputs::Texts(vec![text.clone()]),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            Inputs::Texts(items.iter().filter_map(|t| t.as_str().map(str::to_string)).collect())
        }
        _ => return Err(ApiError::Unprocessable("inputs must be a string or an array of strings".into()).into()),
    };
    if let Inputs::Texts(texts) = &inputs {
        if texts.len() > MAX_INPUTS {
            return Err(ApiError::PayloadTooLarge(format!(
                "batch size {} > maximum allowed batch size {MAX_INPUTS}",
                texts.len()
            ))
            .into());
        }
    }
    let unprocessable = |e: ApiError| ApiError::Unprocessable(e.message());
    if !optional_bool(&body, "normalize", true).map_err(unprocessable)? {
        return Err(ApiError::Unprocessable(
            "normalize: false is not served: quarry's vectors are always unit length".into(),
        )
        .into());
    }
    let truncate = optional_bool(&body, "truncate", false).map_err(unprocessable)?;
    let embedded = embed(&parts, inputs, truncate, "inputs").await.map_err(|e| match e {
        invalid @ (ApiError::InvalidField { .. } | ApiError::BadRequest(_)) => unprocessable(invalid),
        other => other,
    })?;
    Ok(Json(json!(embedded.vectors)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_inputs_take_every_documented_form() {
        let texts = |v: Value| match openai_inputs(Some(&v)).unwrap() {
            Inputs::Texts(t) => t,
            Inputs::Tokens(_) => panic!("texts expected"),
        };
        let tokens = |v: Value| match openai_inputs(Some(&v)).unwrap() {
            Inputs::Tokens(t) => t,
            Inputs::Texts(_) => panic!("tokens expected"),
        };
        assert_eq!(texts(json!("a")), ["a"]);
        assert_eq!(texts(json!(["a", "b"])), ["a", "b"]);
        assert_eq!(tokens(json!([1, 2])), [vec![1, 2]]);
        assert_eq!(tokens(json!([[1], [2, 3]])), [vec![1], vec![2, 3]]);
        for bad in [
            json!(7),
            json!([]),
            json!(["a", 1]),
            json!([-1]),
            json!([[1.5]]),
            json!({}),
        ] {
            assert!(openai_inputs(Some(&bad)).is_err(), "{bad}");
        }
        assert!(openai_inputs(None).is_err());
    }

    #[test]
    fn base64_holds_little_endian_floats() {
        let bytes = little_endian(&[1.0, -2.5]);
        assert_eq!(bytes, [0, 0, 128, 63, 0, 0, 32, 192]);
    }
}
