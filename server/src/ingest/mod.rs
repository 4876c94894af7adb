//! Online ingestion: upload jobs with their persisted status, worker pool and resumption
//! ([`jobs`]), and the indexer pipeline run on one file and published as a new version of a
//! collection ([`online`]).

pub mod jobs;
pub mod online;
