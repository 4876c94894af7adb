//! The server's integration tests, in one test binary: each file beside this one is a
//! module of it (linking one binary instead of one a file took most of the tests' build).

#[path = "../../indexer/tests/common/mod.rs"]
mod common;
mod http_common;

mod dashboard_browser;
mod filters_and_segments;
mod http_chat;
mod http_dashboard;
mod http_embeddings;
mod http_fuzz;
mod http_knowledge;
mod http_knowledge_library;
mod http_layers;
mod http_openapi;
mod http_rag_and_reload;
mod http_user_scope;
mod http_versions;
mod llm_layers;
mod query_batching;
mod query_syntax;
mod read_only_replicas;
mod search_quality;
mod search_windows;
mod similar_to;
mod suggestions;
mod vectors_held_once;
