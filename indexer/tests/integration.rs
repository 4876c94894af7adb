//! The indexer's integration tests, in one test binary: each file beside this one is a
//! module of it (linking one binary instead of one a file took most of the tests' build).

mod common;

mod bert_encoder_parity;
mod chunker_properties;
mod concurrent_writers;
mod document_layers;
mod end_to_end;
mod incremental;
mod multilingual_model;
mod plan;
mod publish_safety;
mod ranged_reads;
mod rollback;
mod tokenizer_fast_path;
