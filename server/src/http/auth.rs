//! API keys: with none configured the server is open (a loopback default); with any, every
//! route but the probes, the metrics and the dashboard page needs a key, sent as
//! `Authorization: Bearer <key>` or `X-API-Key: <key>`. Search keys read and search; admin
//! keys also create, upload, delete, reload and roll back. Keys are compared by their SHA-256 digests,
//! in constant time.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderMap, Method};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};

use crate::app::HttpSettings;
use crate::http::api_error::{ApiError, Surface};

/// The shortest key accepted: a guessable key protects nothing.
pub const MIN_KEY_CHARS: usize = 16;

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Read collections, documents, jobs and events; search.
    Search,
    /// Everything, writes included.
    Admin,
}

/// What a route needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    Key(Role),
}

/// The server's keys, as digests.
#[derive(Clone, Default)]
pub struct ApiKeys {
    keys: Vec<([u8; 32], Role)>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = |role| self.keys.iter().filter(|(_, r)| *r == role).count();
        write!(
            f,
            "ApiKeys {{ admin: {}, search: {} }}",
            count(Role::Admin),
            count(Role::Search)
        )
    }
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

impl ApiKeys {
    /// Admin and search keys; refuses empty, short or padded ones with the reason.
    pub fn new(admin: &[String], search: &[String]) -> Result<Self, String> {
        let mut keys = Vec::new();
        for (list, role, flag) in [
            (admin, Role::Admin, "--api-key"),
            (search, Role::Search, "--search-api-key"),
        ] {
            for key in list {
                if key.trim() != key {
                    return Err(format!("{flag}: a key must not start or end with whitespace"));
                }
                if key.chars().count() < MIN_KEY_CHARS {
                    return Err(format!(
                        "{flag}: a key of {} characters is too short (at least {MIN_KEY_CHARS})",
                        key.chars().count()
                    ));
                }
                keys.push((digest(key), role));
            }
        }
        Ok(Self { keys })
    }

    /// Whether any key is configured (else every route is open).
    pub fn enabled(&self) -> bool {
        !self.keys.is_empty()
    }

    /// The role of `key`, if it is one of the server's (every key compared, in constant time).
    pub fn role_of(&self, key: &str) -> Option<Role> {
        let wanted = digest(key);
        let mut found = None;
        for (stored, role) in &self.keys {
            let difference = stored.iter().zip(&wanted).fold(0u8, |acc, (a, b)| acc | (a ^ b));
            if difference == 0 {
                found = found.max(Some(*role));
            }
        }
        found
    }
}

/// What a request to `path` (the route's template) with `method` needs.
pub fn needs(method: &Method, path: &str) -> Needs {
    match (method.as_str(), path) {
        ("GET", "/healthz" | "/readyz" | "/metrics" | "/dashboard" | "/" | "/openapi.json") => Needs::Nothing,
        ("GET", path) if path.starts_with("/v1/") => Needs::Key(Role::Search),
        ("GET", path) if path.starts_with("/api/knowledge/") => Needs::Key(Role::Search),
        (
            "POST",
            "/v1/collections/{name}/search"
            | "/v1/search"
            | "/api/rag/search"
            | "/api/chat"
            | "/api/knowledge/search"
            | "/v1/embeddings"
            | "/embed",
        ) => Needs::Key(Role::Search),
        _ => Needs::Key(Role::Admin),
    }
}

/// The key a request carries, from `Authorization: Bearer` or `X-API-Key`.
fn presented_key(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
    bearer
        .or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()))
        .map(str::trim)
}

/// A refusal in the error shape of the request's surface (/api/rag or /v1).
fn refuse(error: ApiError, path: &str) -> Response {
    error.respond(Surface::of_path(path))
}

/// The middleware: lets a request through when its key may do what its route does.
pub async fn require_key(State(settings): State<Arc<HttpSettings>>, request: Request, next: Next) -> Response {
    if !settings.api_keys.enabled() {
        return next.run(request).await;
    }
    let path = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| request.uri().path().to_string());
    let Needs::Key(needed) = needs(request.method(), &path) else {
        return next.run(request).await;
    };
    let Some(key) = presented_key(request.headers()) else {
        return refuse(
            ApiError::Unauthorized(
                "missing API key: send it as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'".into(),
            ),
            &path,
        );
    };
    match settings.api_keys.role_of(key) {
        None => refuse(ApiError::Unauthorized("invalid API key".into()), &path),
        Some(role) if role < needed => refuse(
            ApiError::Forbidden(format!(
                "{} {path} needs an admin API key; this key may only read and search",
                request.method()
            )),
            &path,
        ),
        Some(_) => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_searches_need_a_search_key_the_rest_an_admin_key() {
        let get = |path| needs(&Method::GET, path);
        let post = |path| needs(&Method::POST, path);
        assert_eq!(get("/healthz"), Needs::Nothing);
        assert_eq!(get("/dashboard"), Needs::Nothing);
        assert_eq!(get("/v1/collections/{name}/events"), Needs::Key(Role::Search));
        assert_eq!(get("/v1/documents/{job_id}/status"), Needs::Key(Role::Search));
        assert_eq!(post("/v1/search"), Needs::Key(Role::Search));
        assert_eq!(post("/api/rag/search"), Needs::Key(Role::Search));
        assert_eq!(post("/api/chat"), Needs::Key(Role::Search));
        assert_eq!(post("/v1/embeddings"), Needs::Key(Role::Search));
        assert_eq!(post("/embed"), Needs::Key(Role::Search));
        assert_eq!(post("/v1/collections/{name}/documents"), Needs::Key(Role::Admin));
        assert_eq!(post("/api/rag/ingest"), Needs::Key(Role::Admin));
        assert_eq!(
            needs(&Method::DELETE, "/v1/collections/{name}"),
            Needs::Key(Role::Admin)
        );
        assert_eq!(
            post("/healthz"),
            Needs::Key(Role::Admin),
            "anything not listed needs the most"
        );
        assert_eq!(get("/unknown"), Needs::Key(Role::Admin));
    }

    #[test]
    fn keys_are_checked_and_matched_to_their_role() {
        let keys = ApiKeys::new(&["admin-key-0123456789".into()], &["search-key-0123456789".into()]).unwrap();
        assert!(keys.enabled());
        assert_eq!(keys.role_of("admin-key-0123456789"), Some(Role::Admin));
        assert_eq!(keys.role_of("search-key-0123456789"), Some(Role::Search));
        assert_eq!(keys.role_of("search-key-012345678"), None);
        assert_eq!(keys.role_of(""), None);
        assert!(!ApiKeys::default().enabled());
        assert_eq!(
            ApiKeys::new(&["short".into()], &[]).unwrap_err(),
            "--api-key: a key of 5 characters is too short (at least 16)"
        );
        assert!(ApiKeys::new(&[], &[" padded-key-0123456789".into()])
            .unwrap_err()
            .starts_with("--search-api-key"));
        assert_eq!(
            format!("{keys:?}"),
            "ApiKeys { admin: 1, search: 1 }",
            "keys never printed"
        );
    }
}
