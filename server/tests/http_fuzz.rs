//! Malformed HTTP requests against a live server, seeded and bounded: 3,000 requests built
//! from the route table with broken paths, methods, headers and bodies (mutated JSON, wrong
//! types, deep nesting, invalid UTF-8, broken multipart). Every answer must be below 500,
//! every error must come in its surface's documented shape (`{"error", "message"|"details"}`
//! under /api, OpenAI's `{"error": {"message", "type"}}` on /v1/embeddings, TEI's `{"error",
//! "error_type"}` on /embed, `{"detail"}` elsewhere), and the server must still answer
//! searches after. (/api/chat is left out: without an LLM endpoint it is a 503 by design.)

use crate::http_common;

use std::time::{Duration, Instant};

use http_common::{options, TestServer};
use serde_json::{json, Value};

/// Requests sent (QUARRY_HTTP_FUZZ_REQUESTS overrides, for a longer local run).
const REQUESTS: usize = 3_000;

// A seeded stream, so a failure names the request that can be sent again.
use quarry_datasets::synthetic::SeededRng as Draw;

/// Route templates and the methods they answer; `{name}` and `{job}` are filled in.
const ROUTES: &[(&str, &[&str])] = &[
    ("/v1/collections", &["POST", "GET"]),
    ("/v1/collections/{name}", &["GET", "DELETE"]),
    ("/v1/collections/{name}/documents", &["POST", "GET", "DELETE"]),
    ("/v1/collections/{name}/search", &["POST"]),
    ("/v1/search", &["POST"]),
    ("/v1/collections/{name}/reload", &["POST"]),
    ("/v1/collections/{name}/versions", &["GET"]),
    ("/v1/collections/{name}/summaries", &["GET"]),
    ("/v1/collections/{name}/rollback", &["POST"]),
    ("/v1/documents/{job}/status", &["GET"]),
    ("/v1/knowledge/health", &["GET"]),
    ("/api/rag/ingest", &["POST"]),
    ("/api/rag/search", &["POST"]),
    ("/api/knowledge/documents", &["POST", "GET"]),
    ("/api/knowledge/documents/{job}", &["GET", "DELETE"]),
    ("/api/knowledge/search", &["POST"]),
    ("/v1/embeddings", &["POST"]),
    ("/embed", &["POST"]),
    ("/healthz", &["GET"]),
    ("/readyz", &["GET"]),
    ("/metrics", &["GET"]),
    ("/dashboard", &["GET"]),
    ("/", &["GET"]),
];

const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"];

/// Collection names: the fixture's, missing ones, and names no collection may have.
/// ("kept" is never deleted: the searches at the end read it.)
const NAMES: &[&str] = &[
    "kept",
    "scratch",
    "nope",
    "",
    "..",
    "%2e%2e",
    "a%2Fb",
    "%00",
    "caf%C3%A9",
    "%FF%FE",
    "UPPER",
    "-x",
    "x y",
    "1234567890123456789012345678901234567890123456789012345678901234567890",
];

/// A valid body for the route, the starting point of the mutations.
fn valid_body(route: &str, draw: &mut Draw) -> Value {
    match route {
        "/v1/collections" => json!({ "name": *draw.pick(&["scratch", "fz", "kept"]), "description": "fuzzed" }),
        "/v1/collections/{name}/search" | "/v1/search" if draw.below(4) == 0 => json!({
            "similar_to": {
                "chunk_id": *draw.pick(&["nope-0", "", "-"]), "include_source": true,
                "like": [{ "document_id": *draw.pick(&["nope", "x"]) }], "unlike": [{ "chunk_id": "nope-1" }]
            },
            "query": "-drought", "top_k": 5, "collections": ["kept"]
        }),
        "/v1/collections/{name}/search" | "/v1/search" => json!({
            "query": *draw.pick(&["river drought", "riv* drout~", "\"river drought\" -dr* x~2", "a* b~9 *~ ~* r~0", "川* 東京~1", "Rivre \"drougth\" -rivr RIVERR"]),
            "top_k": 5, "mode": *draw.pick(&["vector", "keyword", "hybrid", "auto"]), "suggest": draw.below(2) == 0,
            "typo_tolerance": draw.below(2) == 0, "collections": ["kept"], "filters": { "tags": ["a"], "metadata.year": { "$gte": 2000 } }, "offset": 0
        }),
        "/v1/collections/{name}/documents" => json!({ "doc_ids": ["d1"], "file_names": ["x.txt"] }),
        "/v1/collections/{name}/rollback" => json!({ "version": "20200101T000000000Z-0000" }),
        "/api/rag/ingest" => {
            json!({ "source": "s", "path": "p", "title": "t", "text": "Rivers run dry in a drought.", "tags": ["x"], "metadata": { "k": "v" } })
        }
        "/api/rag/search" => json!({ "query": "drought", "topK": 3, "filters": { "source": "s" } }),
        _ => json!({}),
    }
}

/// A value of another kind than a field usually holds.
fn strange_value(draw: &mut Draw) -> Value {
    match draw.below(12) {
        0 => Value::Null,
        1 => json!(-1),
        2 => json!(1e308),
        3 => json!(u64::MAX),
        4 => json!("x".repeat(20_000)),
        5 => json!([]),
        6 => json!({ "$unknown": [1, 2] }),
        7 => json!(true),
        8 => json!(0.5),
        9 => json!("\u{0}\u{202e}\u{fffd}"),
        10 => json!([[[[["deep"]]]]]),
        _ => json!({ "$in": (0..500).map(|i| format!("id{i}")).collect::<Vec<_>>() }),
    }
}

/// The body mutated: a field dropped, retyped or added, or the whole value replaced.
fn mutate(mut body: Value, draw: &mut Draw) -> Value {
    for _ in 0..=draw.below(3) {
        let Some(object) = body.as_object_mut() else {
            return strange_value(draw);
        };
        let keys: Vec<String> = object.keys().cloned().collect();
        match draw.below(4) {
            0 if !keys.is_empty() => {
                object.remove(draw.pick(&keys));
            }
            1 if !keys.is_empty() => {
                let key = draw.pick(&keys).clone();
                object.insert(key, strange_value(draw));
            }
            2 => {
                object.insert(
                    draw.pick(&[
                        "extra",
                        "top_k",
                        "topK",
                        "filters",
                        "mode",
                        "query",
                        "name",
                        "text",
                        "similar_to",
                        "suggest",
                        "typo_tolerance",
                    ])
                    .to_string(),
                    strange_value(draw),
                );
            }
            _ => return strange_value(draw),
        }
    }
    body
}

/// Raw body bytes that are not the JSON they claim to be.
fn broken_bytes(draw: &mut Draw) -> Vec<u8> {
    match draw.below(7) {
        0 => b"{\"query\": \"unterminated".to_vec(),
        1 => vec![0xff, 0xfe, b'{', 0xc3, 0x28, b'}'],
        2 => format!("{}{}", "[".repeat(5_000), "]".repeat(5_000)).into_bytes(),
        3 => b"".to_vec(),
        4 => b"null".to_vec(),
        5 => (0..2_000).map(|i| (i * 7 % 256) as u8).collect(),
        _ => b"{\"query\": \"a\", \"query\": 5}".to_vec(),
    }
}

/// One request: (method, path, content type, body, extra headers), all drawn.
/// Method, path, content type, body and extra headers of one request.
type Request = (
    String,
    String,
    Option<&'static str>,
    Vec<u8>,
    Vec<(&'static str, String)>,
);

fn request(draw: &mut Draw, job: &str) -> Request {
    let (route, methods) = *draw.pick(ROUTES);
    let method: &str = if draw.chance(80) {
        draw.pick::<&str>(methods)
    } else {
        draw.pick::<&str>(METHODS)
    };
    let name = match *draw.pick(NAMES) {
        "kept" if method == "DELETE" => "scratch",
        name => name,
    };
    let mut path = route.replace("{name}", name).replace(
        "{job}",
        if draw.chance(50) {
            job
        } else {
            draw.pick::<&str>(&["nope", "%00", "../../etc"])
        },
    );
    match draw.below(10) {
        0 => path.push_str("?top_k=-1&mode=%ZZ"),
        1 => path.push_str("/extra/segments"),
        2 => path = path.replace('/', "//"),
        3 => path.push_str(&format!("?q={}", "a".repeat(3_000))),
        _ => {}
    }
    let mut headers = Vec::new();
    if draw.chance(10) {
        headers.push((
            "authorization",
            (*draw.pick(&["Bearer", "Bearer \u{7f}", "Basic Og==", "Bearer x"])).to_string(),
        ));
    }
    if draw.chance(10) {
        let long = "k".repeat(2_000);
        headers.push((
            "idempotency-key",
            (*draw.pick(&["", "k", "k\tk", long.as_str()])).to_string(),
        ));
    }
    let upload = route.ends_with("/documents") && method == "POST";
    let (content_type, body) = if upload {
        let boundary = "fuzzboundary";
        let file_name = *draw.pick(&[
            "a.txt",
            "../../escape.txt",
            "",
            "nul\u{0}.txt",
            "x.pdf",
            "y.docx",
            "long.md",
        ]);
        let contents: [&[u8]; 5] = [
            b"A short note on rivers.",
            b"",
            b"%PDF-1.7 broken",
            b"PK\x03\x04 not a zip",
            b"\xff\xfe\x00\x00",
        ];
        let content = *draw.pick(&contents);
        let mut body =
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{file_name}\"\r\n\r\n")
                .into_bytes();
        body.extend_from_slice(content);
        if draw.chance(80) {
            body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        }
        let content_type = if draw.chance(85) {
            "multipart/form-data; boundary=fuzzboundary"
        } else {
            "multipart/form-data"
        };
        (Some(content_type), body)
    } else if method == "GET" || method == "HEAD" || draw.chance(10) {
        (None, Vec::new())
    } else if draw.chance(25) {
        (Some("application/json"), broken_bytes(draw))
    } else {
        // A quarter stay valid, so requests also reach the handlers' deeper paths.
        let body = if draw.chance(25) {
            valid_body(route, draw)
        } else {
            mutate(valid_body(route, draw), draw)
        };
        let content_type = *draw.pick(&[
            "application/json",
            "application/json",
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
        ]);
        (Some(content_type), serde_json::to_vec(&body).unwrap())
    };
    (method.to_string(), path, content_type, body, headers)
}

/// Whether an error body has its surface's documented shape.
fn documented_shape(path: &str, body: &Value) -> bool {
    match path.split('?').next().unwrap_or_default() {
        "/v1/embeddings" => body["error"]["message"].is_string() && body["error"]["type"].is_string(),
        "/embed" => body["error"].is_string() && body["error_type"].is_string(),
        _ if path.starts_with("/api/") => {
            body["error"].is_string() && (body["message"].is_string() || !body["details"].is_null())
        }
        _ => body["detail"].is_string() || body["detail"].is_array(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn malformed_requests_get_documented_errors_and_no_5xx() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "kept" })).await;
    let job = server
        .upload_completed(
            "kept",
            "rivers.txt",
            b"Rivers run dry in a long drought. Farmers wait for rain.".to_vec(),
        )
        .await;
    let job_id = job["job_id"].as_str().unwrap_or("nope").to_string();
    let (status, _) = server
        .post("/api/rag/ingest", valid_body("/api/rag/ingest", &mut Draw::new(1)))
        .await;
    assert_eq!(status, 200);

    let requests = std::env::var("QUARRY_HTTP_FUZZ_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(REQUESTS);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let mut draw = Draw::new(0x5eed_f00d);
    let (started, mut by_status) = (Instant::now(), std::collections::BTreeMap::<u16, usize>::new());
    let (mut failures, mut by_surface) = (
        Vec::new(),
        std::collections::BTreeMap::<(String, String, u16), usize>::new(),
    );
    for i in 0..requests {
        let (method, path, content_type, body, headers) = request(&mut draw, &job_id);
        let mut builder = client
            .request(method.parse().unwrap(), server.url(&path))
            .body(body.clone());
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        for (name, value) in &headers {
            if let Ok(value) = reqwest::header::HeaderValue::from_str(value) {
                builder = builder.header(*name, value);
            }
        }
        let response = match builder.send().await {
            Ok(response) => response,
            Err(error) => {
                failures.push(format!("#{i} {method} {path}: no answer ({error})"));
                continue;
            }
        };
        let status = response.status().as_u16();
        *by_status.entry(status).or_default() += 1;
        let route = path.split('?').next().unwrap_or_default();
        let surface = route
            .trim_start_matches('/')
            .split('/')
            .take(3)
            .map(|segment| segment.chars().take(16).collect::<String>())
            .collect::<Vec<_>>()
            .join("/");
        *by_surface.entry((method.clone(), surface, status)).or_default() += 1;
        let text = response.text().await.unwrap_or_default();
        let shown = || {
            format!(
                "#{i} {method} {path} ({content_type:?}, {} body bytes: {:?}) -> {status} {}",
                body.len(),
                String::from_utf8_lossy(&body[..body.len().min(120)]),
                &text[..text.len().min(300)]
            )
        };
        if status >= 500 {
            failures.push(format!("a 5xx: {}", shown()));
        } else if status >= 400 && method != "HEAD" {
            let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            if !documented_shape(&path, &parsed) {
                failures.push(format!("not the documented shape: {}", shown()));
            }
        }
    }
    eprintln!(
        "{requests} malformed requests in {:.1} s, answers by status: {by_status:?}",
        started.elapsed().as_secs_f64()
    );
    for ((method, surface, status), count) in &by_surface {
        eprintln!("  {method} /{surface}: {status} x{count}");
    }
    assert!(
        failures.is_empty(),
        "{} of {requests} requests answered wrongly; the first:\n{}",
        failures.len(),
        failures.iter().take(15).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(
        by_status.keys().any(|&s| s >= 400) && by_status.keys().any(|&s| s < 300),
        "the requests reach both handlers and refusals: {by_status:?}"
    );

    // The server still serves.
    let (status, found) = server
        .post(
            "/v1/collections/kept/search",
            json!({ "query": "rivers drought", "top_k": 3 }),
        )
        .await;
    assert_eq!(status, 200, "{found}");
    assert!(
        found["chunks"].as_array().is_some_and(|chunks| !chunks.is_empty()),
        "{found}"
    );
    let (status, _) = server.get("/healthz").await;
    assert_eq!(status, 200);
    server.stop().await;
}
