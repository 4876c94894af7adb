//! The benchmark harness (not built yet).
