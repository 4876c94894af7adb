//! Which of a run's documents have their place in the rows settled before the run ends.
//!
//! A segment's rows are its documents in URI order, and documents reach the segmenter in
//! whatever order their files were fetched, parsed and embedded. A document's place is
//! settled once every listed file whose URI sorts before it has sent all the documents it
//! will send: a document's URI is its file's, or its file's with `#<item>` after it, so a
//! file not yet complete can only send documents that sort at or after its own URI. The
//! segmenter then hands the settled documents' rows to the segment's row files while the run
//! embeds the rest (`row_stream.rs`).
//!
//! The parse stage (and the fetch stage, for a file it could not fetch) reports each file
//! once it is done with it, with the documents it sent on from it; the segmenter tells which
//! documents arrive. A file is complete once reported and every document it sent on has
//! arrived. Where the run may put a failed file's last good version back after its stages
//! (a full version over a previous one), a file with a failure never counts as complete.
//! (Should a document still arrive after documents sorting after it were written, the
//! segmenter writes its segment's rows at the cut instead: `segmenter.rs`.)

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// A run's listed files, and how far their documents have arrived.
pub(super) struct FileCompletion {
    state: Mutex<Files>,
    /// A failed file stays incomplete: its last good version may come after the stages.
    failed_files_wait: bool,
}

/// Where the settled documents end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Settled {
    /// Documents whose URI sorts before this one (a listed file's, not yet complete).
    Below(String),
    /// Every document: every listed file is complete.
    All,
}

#[derive(Default)]
struct Files {
    /// The listed files' URIs, sorted.
    listing: Vec<String>,
    /// The first listed file not known to be complete.
    next: usize,
    by_uri: HashMap<String, FileState>,
    /// Documents sent on and not yet arrived, by URI: their file's URI, and how many times
    /// (a URI sent twice fails as a duplicate once it arrives).
    awaited: HashMap<String, (String, usize)>,
    /// Documents that arrived before their file was reported, by URI: how many times.
    early: HashMap<String, usize>,
}

#[derive(Debug, Default)]
struct FileState {
    reported: bool,
    failed: bool,
    /// Its documents sent on and not yet arrived.
    outstanding: usize,
}

impl FileCompletion {
    /// The run's listed files by URI; with `failed_files_wait`, a file with a failure never
    /// counts as complete.
    pub fn new(uris: impl IntoIterator<Item = String>, failed_files_wait: bool) -> Self {
        let mut listing: Vec<String> = uris.into_iter().collect();
        listing.sort_unstable();
        listing.dedup();
        Self {
            state: Mutex::new(Files {
                listing,
                ..Files::default()
            }),
            failed_files_wait,
        }
    }

    /// `files` (URI, whether any of it failed) are done with: `documents` (each its file's URI
    /// and its own) are every document they sent on to the segments.
    pub fn report<'a>(
        &self,
        files: impl IntoIterator<Item = (&'a str, bool)>,
        documents: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        let mut state = self.lock();
        let Files {
            by_uri, awaited, early, ..
        } = &mut *state;
        for (file, document) in documents {
            if let Some(count) = early.get_mut(document) {
                *count -= 1;
                if *count == 0 {
                    early.remove(document);
                }
                continue;
            }
            awaited
                .entry(document.to_string())
                .or_insert_with(|| (file.to_string(), 0))
                .1 += 1;
            file_state(by_uri, file).outstanding += 1;
        }
        for (uri, failed) in files {
            let file = file_state(by_uri, uri);
            file.reported = true;
            file.failed |= failed;
        }
    }

    /// Documents (their URIs) that reached the segmenter.
    pub fn arrived<'a>(&self, documents: impl IntoIterator<Item = &'a str>) {
        let mut state = self.lock();
        let Files {
            by_uri, awaited, early, ..
        } = &mut *state;
        for document in documents {
            match awaited.get_mut(document) {
                Some((file, count)) => {
                    *count -= 1;
                    let file = file_state(by_uri, file);
                    file.outstanding = file.outstanding.saturating_sub(1);
                    if *count == 0 {
                        awaited.remove(document);
                    }
                }
                None => *early.entry(document.to_string()).or_default() += 1,
            }
        }
    }

    /// Where the documents whose place is settled end now.
    pub fn settled(&self) -> Settled {
        let mut state = self.lock();
        let Files {
            listing, next, by_uri, ..
        } = &mut *state;
        while let Some(uri) = listing.get(*next) {
            let complete = by_uri
                .get(uri)
                .is_some_and(|file| file.reported && file.outstanding == 0 && !(file.failed && self.failed_files_wait));
            if !complete {
                return Settled::Below(uri.clone());
            }
            *next += 1;
        }
        Settled::All
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn file_state<'a>(by_uri: &'a mut HashMap<String, FileState>, uri: &str) -> &'a mut FileState {
    if !by_uri.contains_key(uri) {
        by_uri.insert(uri.to_string(), FileState::default());
    }
    by_uri.get_mut(uri).expect("inserted above")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(files: &[&str], failed_files_wait: bool) -> FileCompletion {
        FileCompletion::new(files.iter().map(|f| f.to_string()), failed_files_wait)
    }

    fn below(uri: &str) -> Settled {
        Settled::Below(uri.to_string())
    }

    #[test]
    fn documents_settle_once_every_file_before_them_sent_all_it_will() {
        let files = listing(&["s3://b/c", "s3://b/a", "s3://b/b.jsonl"], false);
        assert_eq!(files.settled(), below("s3://b/a"));
        // b.jsonl's two items arrive and it is reported: nothing settles while a.txt is out.
        files.arrived(["s3://b/b.jsonl#1", "s3://b/b.jsonl#2"]);
        files.report(
            [("s3://b/b.jsonl", false)],
            [
                ("s3://b/b.jsonl", "s3://b/b.jsonl#1"),
                ("s3://b/b.jsonl", "s3://b/b.jsonl#2"),
            ],
        );
        assert_eq!(files.settled(), below("s3://b/a"));
        // a is reported before its document arrives: complete only once it has.
        files.report([("s3://b/a", false)], [("s3://b/a", "s3://b/a")]);
        assert_eq!(files.settled(), below("s3://b/a"));
        files.arrived(["s3://b/a"]);
        assert_eq!(files.settled(), below("s3://b/c"));
        // c sends nothing (a file of no text, or one that failed whole).
        files.report([("s3://b/c", true)], []);
        assert_eq!(files.settled(), Settled::All);
    }

    #[test]
    fn a_file_with_a_failure_stays_open_where_its_last_good_version_may_follow() {
        let files = listing(&["f:///1", "f:///2"], true);
        files.report([("f:///1", true)], [("f:///1", "f:///1#a")]);
        files.arrived(["f:///1#a"]);
        files.report([("f:///2", false)], []);
        assert_eq!(files.settled(), below("f:///1"));
        // Without a previous version to take it from, it completes.
        let files = listing(&["f:///1", "f:///2"], false);
        files.report([("f:///1", true)], [("f:///1", "f:///1#a")]);
        files.arrived(["f:///1#a"]);
        assert_eq!(files.settled(), below("f:///2"));
    }

    #[test]
    fn documents_count_for_the_file_that_sent_them_whatever_their_uris_say() {
        // A file named with a `#` and one whose documents' URIs name another file.
        let files = listing(&["f:///c", "f:///c#notes.txt", "f:///z"], false);
        files.report(
            [("f:///c#notes.txt", false)],
            [("f:///c#notes.txt", "f:///c#notes.txt")],
        );
        files.report([("f:///c", false), ("f:///z", false)], [("f:///z", "f:///a-elsewhere")]);
        assert_eq!(files.settled(), below("f:///c#notes.txt"));
        files.arrived(["f:///c#notes.txt"]);
        assert_eq!(files.settled(), below("f:///z"));
        // A URI sent on twice (the second fails as a duplicate) counts twice.
        let files = listing(&["a"], false);
        files.report([("a", false)], [("a", "a#1"), ("a", "a#1")]);
        files.arrived(["a#1"]);
        assert_eq!(files.settled(), below("a"));
        files.arrived(["a#1"]);
        assert_eq!(files.settled(), Settled::All);
    }

    #[test]
    fn a_file_missing_a_document_keeps_everything_after_it_open() {
        let files = listing(&["a", "b"], false);
        files.report([("a", false), ("b", false)], [("a", "a#1"), ("a", "a#2"), ("b", "b")]);
        files.arrived(["b", "a#2"]);
        assert_eq!(files.settled(), below("a"));
        files.arrived(["a#1"]);
        assert_eq!(files.settled(), Settled::All);
    }
}
