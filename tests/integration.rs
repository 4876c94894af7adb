//! The quarry command's integration tests, in one test binary: each file beside this one is a
//! module of it (linking one binary instead of one a file took most of the tests' build).

#[path = "../indexer/tests/common/mod.rs"]
mod common;

mod cli;
mod completions;
mod config_file;
mod deploy_manifests;
mod hostile_files;
mod legacy_encodings;
mod openmp_waiting;
mod row_files_while_embedding;
mod sharded_runs;
mod wiki_dumps;
