//! The quarry search server: Searcher, collection registry and axum routes (not built yet).
