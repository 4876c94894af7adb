//! Seed 004's knowledge library over real HTTP: /api/knowledge/documents (upload one file with a
//! name and tags, list, get, delete) and /api/knowledge/search (its SearchResult records with
//! similarity, heading_path, document_name, token_count), errors in the /api shape.

use crate::http_common;

use std::time::Duration;

use http_common::{options, TestServer};
use serde_json::{json, Value};

async fn upload(server: &TestServer, file: &str, bytes: &[u8], name: Option<&str>, tags: &str) -> (u16, Value) {
    let mut form = reqwest::multipart::Form::new().text("tags", tags.to_string());
    if !file.is_empty() {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(bytes.to_vec()).file_name(file.to_string()),
        );
    }
    if let Some(name) = name {
        form = form.text("name", name.to_string());
    }
    server.post_form("/api/knowledge/documents", form).await
}

/// Polls a document until it is ready or failed.
async fn settled(server: &TestServer, id: &str) -> Value {
    for _ in 0..600 {
        let (status, document) = server.get(&format!("/api/knowledge/documents/{id}")).await;
        assert_eq!(status, 200, "{document}");
        if document["status"] == "ready" || document["status"] == "failed" {
            return document;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("document {id} did not settle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_knowledge_library_uploads_lists_searches_and_deletes() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let guide = b"# Setup\n\n## Install\n\nRun cargo build in the checkout to install quarry on a new machine.\n\n## Tea\n\nGreen tea steeps for two minutes at eighty degrees.\n";
    let (status, pending) = upload(&server, "guide.md", guide, Some("Setup guide"), "ops, setup").await;
    assert_eq!(status, 202, "{pending}");
    let keys: Vec<&str> = pending.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "id",
        "name",
        "filename",
        "content_type",
        "tags",
        "status",
        "error",
        "chunk_count",
        "token_count",
        "metadata",
        "created_at",
        "updated_at",
    ] {
        assert!(keys.contains(&key), "{key} missing: {pending}");
    }
    assert_eq!(
        (
            &pending["name"],
            &pending["filename"],
            &pending["content_type"],
            &pending["tags"]
        ),
        (
            &json!("Setup guide"),
            &json!("guide.md"),
            &json!("text/markdown"),
            &json!(["ops", "setup"])
        )
    );
    assert!(
        matches!(pending["status"].as_str(), Some("pending" | "processing")),
        "{pending}"
    );
    let id = pending["id"].as_str().unwrap().to_string();
    let (status, broken) = upload(&server, "broken.pdf", b"%PDF-1.7 not really", None, "").await;
    assert_eq!(status, 202, "{broken}");
    let broken_id = broken["id"].as_str().unwrap().to_string();

    let ready = settled(&server, &id).await;
    assert_eq!(ready["status"], "ready", "{ready}");
    assert!(
        ready["chunk_count"].as_u64().unwrap() >= 1 && ready["token_count"].as_u64().unwrap() > 10,
        "{ready}"
    );
    let failed = settled(&server, &broken_id).await;
    assert_eq!(
        (&failed["status"], &failed["error"], &failed["name"]),
        (
            &json!("failed"),
            &json!("File appears corrupted. Please verify the file and try again."),
            &json!("broken.pdf")
        )
    );
    assert!(
        failed["metadata"]["error_detail"].as_str().unwrap().contains("PDF"),
        "{failed}"
    );
    let (status, listed) = server.get("/api/knowledge/documents").await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [broken_id.as_str(), id.as_str()], "newest first");

    // Search: seed 004's SearchResult, by cosine similarity, with the heading path.
    let (status, results) = server
        .post(
            "/api/knowledge/search",
            json!({ "query": "how do I install quarry", "top_k": 3, "similarity_threshold": 0.2 }),
        )
        .await;
    assert_eq!(status, 200, "{results}");
    let first = &results[0];
    assert_eq!(
        (&first["document_id"], &first["document_name"], &first["tags"]),
        (&json!(id), &json!("Setup guide"), &json!(["ops", "setup"]))
    );
    assert!(
        first["heading_path"].as_array().unwrap().iter().any(|h| h == "Install"),
        "{first}"
    );
    assert!(first["content"].as_str().unwrap().contains("cargo build"), "{first}");
    let similarity = first["similarity"].as_f64().unwrap();
    assert!(similarity > 0.2 && similarity <= 1.0, "{first}");
    assert!(first["token_count"].as_u64().unwrap() > 0);
    for (body, why) in [
        (
            json!({ "query": "install quarry", "tags": ["finance"] }),
            "no document has the tag",
        ),
        (
            json!({ "query": "install quarry", "similarity_threshold": 0.99 }),
            "nothing that similar",
        ),
    ] {
        let (status, results) = server.post("/api/knowledge/search", body).await;
        assert_eq!((status, results), (200, json!([])), "{why}");
    }
    for (body, field) in [
        (json!({ "query": " " }), "query"),
        (json!({ "query": "x", "top_k": 0 }), "top_k"),
        (
            json!({ "query": "x", "similarity_threshold": 2 }),
            "similarity_threshold",
        ),
        (json!({ "query": "x", "tags": "ops" }), "tags"),
    ] {
        let (status, answer) = server.post("/api/knowledge/search", body).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(
            (&answer["error"], &answer["details"]["field"]),
            (&json!("Validation error"), &json!(field))
        );
    }
    let (status, answer) = upload(&server, "", b"", None, "").await;
    assert_eq!(status, 400, "an upload without a file: {answer}");
    assert_eq!(answer["details"]["field"], "file", "{answer}");

    // Delete: the document and its chunks go; the library's collection itself stays.
    let response = server
        .client
        .delete(server.url(&format!("/api/knowledge/documents/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 204);
    let (status, gone) = server.get(&format!("/api/knowledge/documents/{id}")).await;
    assert_eq!((status, &gone["error"]), (404, &json!("Not Found")), "{gone}");
    let (_, results) = server
        .post(
            "/api/knowledge/search",
            json!({ "query": "how do I install quarry", "similarity_threshold": 0.0 }),
        )
        .await;
    assert_eq!(results, json!([]), "its chunks went with it");
    let (status, _) = server.delete(&format!("/api/knowledge/documents/{id}"), None).await;
    assert_eq!(status, 404);
    let (status, refused) = server.delete("/v1/collections/knowledge", None).await;
    assert_eq!(status, 409, "{refused}");
}

/// An OpenDocument file of `kind` (`spreadsheet`, `presentation`) whose body is `body_xml`,
/// as an office suite writes it: its stored `mimetype` first, then its content.
fn opendocument(kind: &str, body_xml: &str) -> Vec<u8> {
    use std::io::Write;
    let ns = [
        ("office", "urn:oasis:names:tc:opendocument:xmlns:office:1.0"),
        ("text", "urn:oasis:names:tc:opendocument:xmlns:text:1.0"),
        ("table", "urn:oasis:names:tc:opendocument:xmlns:table:1.0"),
        ("draw", "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"),
        ("presentation", "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"),
    ]
    .map(|(prefix, uri)| format!(r#" xmlns:{prefix}="{uri}""#))
    .concat();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    write!(zip, "application/vnd.oasis.opendocument.{kind}").unwrap();
    zip.start_file("content.xml", zip::write::SimpleFileOptions::default())
        .unwrap();
    write!(
        zip,
        r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content{ns}><office:body><office:{kind}>{body_xml}</office:{kind}></office:body></office:document-content>"#
    )
    .unwrap();
    zip.finish().unwrap().into_inner()
}

/// An uploaded spreadsheet and presentation (the OpenDocument formats, parsed by the same
/// workers as a batch run's) and a Word 97-2003 document are recorded with their content types,
/// and searched with their sheet's name, their slide's title and the document's headings as the
/// heading path; a workbook saved with a password
/// fails with a message that says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spreadsheets_and_presentations_are_uploaded_and_searched_by_sheet_and_slide() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let cell = |text: &str| format!("<table:table-cell><text:p>{text}</text:p></table:table-cell>");
    let row = |cells: [&str; 3]| format!("<table:table-row>{}</table:table-row>", cells.map(cell).concat());
    let sheet = format!(
        r#"<table:table table:name="Steeping">{}{}{}</table:table>"#,
        row(["tea", "minutes", "degrees"]),
        row(["green tea", "2", "80"]),
        row(["black tea", "4", "95"])
    );
    let frame = |class: &str, text: &str| {
        format!(
            r#"<draw:frame presentation:class="{class}"><draw:text-box><text:p>{text}</text:p></draw:text-box></draw:frame>"#
        )
    };
    let slides = format!(
        "<draw:page>{}{}{}</draw:page>",
        frame("title", "Rollout plan"),
        frame("outline", "Move the vector search cluster to new GPUs in March."),
        frame("page-number", "7")
    );
    let uploads = [
        (
            "tea.ods",
            opendocument("spreadsheet", &sheet),
            "application/vnd.oasis.opendocument.spreadsheet",
        ),
        (
            "rollout.odp",
            opendocument("presentation", &slides),
            "application/vnd.oasis.opendocument.presentation",
        ),
        // Word 97-2003, as LibreOffice writes it (headings, a table, German and Japanese).
        (
            "pumps.doc",
            include_bytes!("../../indexer/tests/fixtures/report.doc").to_vec(),
            "application/msword",
        ),
    ];
    let mut ids = Vec::new();
    for (file, bytes, content_type) in &uploads {
        let (status, pending) = upload(&server, file, bytes, None, "").await;
        assert_eq!(status, 202, "{pending}");
        assert_eq!(pending["content_type"], json!(content_type), "{pending}");
        ids.push(pending["id"].as_str().unwrap().to_string());
    }
    for id in &ids {
        let ready = settled(&server, id).await;
        assert_eq!(ready["status"], "ready", "{ready}");
    }
    // A workbook saved with a password: an OLE file whose directory names the encrypted
    // package; it fails with a message saying so.
    let mut locked = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
    locked.resize(512, 0);
    locked.extend("EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes));
    locked.resize(4096, 0);
    let (status, pending) = upload(&server, "locked.xlsx", &locked, None, "").await;
    assert_eq!(status, 202, "{pending}");
    let failed = settled(&server, pending["id"].as_str().unwrap()).await;
    assert_eq!(
        (&failed["status"], &failed["error"]),
        (
            &json!("failed"),
            &json!("XLSX is encrypted (saved with a password, or under DRM). Please upload an unlocked version.")
        ),
        "{failed}"
    );
    for (query, id, heading, says) in [
        ("how long does black tea steep", &ids[0], "Steeping", "black tea, 4, 95"),
        (
            "when does the search cluster move to new GPUs",
            &ids[1],
            "Rollout plan",
            "new GPUs in March",
        ),
        (
            "which pump has a worn seal",
            &ids[2],
            "Pump station overview / Findings",
            "seal worn",
        ),
    ] {
        let (status, results) = server
            .post(
                "/api/knowledge/search",
                json!({ "query": query, "top_k": 1, "similarity_threshold": 0.0 }),
            )
            .await;
        assert_eq!(status, 200, "{results}");
        let first = &results[0];
        assert_eq!(
            (&first["document_id"], &first["heading_path"]),
            (&json!(id), &json!(heading.split(" / ").collect::<Vec<_>>())),
            "{query}: {first}"
        );
        let content = first["content"].as_str().unwrap();
        assert!(content.contains(says), "{query}: {first}");
        assert!(!content.contains(" 7"), "the page number is left out: {first}");
    }
}
