//! Which of a run's documents have their place in the rows settled before the run ends.
//!
//! A segment's rows are its documents in URI order, and documents reach the segmenter in
//! whatever order their files were fetched, parsed and embedded. The parse stage (and the
//! fetch stage, for a file it could not fetch) reports each file once it is done with it,
//! with every document it sent on from it; the segmenter tells which documents arrive. A
//! document's place is settled once no document sorting before it can still come: every
//! document reported and sorting before it has arrived, and every listed file sorting
//! before it is reported (a document's URI is its file's, or its file's with `#<item>`
//! after it, so a file not yet reported can only send documents that sort at or after its
//! own URI). The segmenter then hands the settled documents' rows to the segment's row files
//! while the run embeds the rest (`row_stream.rs`). Where the run may put a failed file's
//! last good version back after its stages (a full version over a previous one), a file
//! with a failure counts as never reported. (Should a document still arrive after documents
//! sorting after it were written, the segmenter writes its segment's rows at the cut
//! instead: `segmenter.rs`.)

use std::collections::{BTreeMap, HashSet};
use std::sync::{Mutex, PoisonError};

/// A run's listed files, and how far their documents have arrived.
pub(super) struct FileCompletion {
    state: Mutex<Files>,
    /// A failed file stays unreported: its last good version may come after the stages.
    failed_files_wait: bool,
}

/// Where the settled documents end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Settled {
    /// Documents whose URI sorts before this one (a document still to arrive, or a listed
    /// file not yet reported).
    Below(String),
    /// Every document.
    All,
}

#[derive(Default)]
struct Files {
    /// The listed files' URIs, sorted.
    listing: Vec<String>,
    /// The first listed file not known to be reported.
    next: usize,
    reported: HashSet<String>,
    /// Documents sent on and not yet arrived, by URI: how many times (a URI sent twice
    /// fails as a duplicate once it arrives).
    awaited: BTreeMap<String, usize>,
    /// Documents that arrived before their file was reported, by URI: how many times.
    early: BTreeMap<String, usize>,
}

impl FileCompletion {
    /// The run's listed files by URI; with `failed_files_wait`, a file with a failure never
    /// counts as reported.
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

    /// `files` (URI, whether any of it failed) are done with: `documents` (their URIs) are
    /// every document they sent on to the segments.
    pub fn report<'a>(
        &self,
        files: impl IntoIterator<Item = (&'a str, bool)>,
        documents: impl IntoIterator<Item = &'a str>,
    ) {
        let mut state = self.lock();
        let Files {
            reported,
            awaited,
            early,
            ..
        } = &mut *state;
        for document in documents {
            if !take_one(early, document) {
                *awaited.entry(document.to_string()).or_default() += 1;
            }
        }
        for (uri, failed) in files {
            if !(failed && self.failed_files_wait) {
                reported.insert(uri.to_string());
            }
        }
    }

    /// Documents (their URIs) that reached the segmenter.
    pub fn arrived<'a>(&self, documents: impl IntoIterator<Item = &'a str>) {
        let mut state = self.lock();
        let Files { awaited, early, .. } = &mut *state;
        for document in documents {
            if !take_one(awaited, document) {
                *early.entry(document.to_string()).or_default() += 1;
            }
        }
    }

    /// Where the documents whose place is settled end now.
    pub fn settled(&self) -> Settled {
        let mut state = self.lock();
        let Files {
            listing,
            next,
            reported,
            awaited,
            ..
        } = &mut *state;
        while listing.get(*next).is_some_and(|uri| reported.contains(uri)) {
            *next += 1;
        }
        let unreported = listing.get(*next);
        let awaited = awaited.keys().next();
        match (unreported, awaited) {
            (None, None) => Settled::All,
            (Some(uri), None) | (None, Some(uri)) => Settled::Below(uri.clone()),
            (Some(file), Some(document)) => Settled::Below(file.min(document).clone()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Takes one count of `uri` from `counts`; false when it held none.
fn take_one(counts: &mut BTreeMap<String, usize>, uri: &str) -> bool {
    let Some(count) = counts.get_mut(uri) else {
        return false;
    };
    *count -= 1;
    if *count == 0 {
        counts.remove(uri);
    }
    true
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
    fn documents_settle_once_nothing_sorting_before_them_can_still_come() {
        let files = listing(&["s3://b/c", "s3://b/a", "s3://b/b.jsonl"], false);
        assert_eq!(files.settled(), below("s3://b/a"));
        // b.jsonl's two items arrive and it is reported: nothing settles while a is out.
        files.arrived(["s3://b/b.jsonl#1", "s3://b/b.jsonl#2"]);
        files.report([("s3://b/b.jsonl", false)], ["s3://b/b.jsonl#1", "s3://b/b.jsonl#2"]);
        assert_eq!(files.settled(), below("s3://b/a"));
        // a is reported before its document arrives: settled up to that document.
        files.report([("s3://b/a", false)], ["s3://b/a"]);
        assert_eq!(files.settled(), below("s3://b/a"));
        files.arrived(["s3://b/a"]);
        assert_eq!(files.settled(), below("s3://b/c"));
        // c sends nothing (a file of no text, or one that failed whole).
        files.report([("s3://b/c", true)], []);
        assert_eq!(files.settled(), Settled::All);
    }

    #[test]
    fn within_a_file_documents_settle_up_to_the_first_still_to_come() {
        let files = listing(&["f:///a.jsonl", "f:///b"], false);
        files.report(
            [("f:///a.jsonl", false)],
            ["f:///a.jsonl#1", "f:///a.jsonl#2", "f:///a.jsonl#3"],
        );
        files.arrived(["f:///a.jsonl#1", "f:///a.jsonl#3"]);
        assert_eq!(files.settled(), below("f:///a.jsonl#2"));
        files.arrived(["f:///a.jsonl#2"]);
        assert_eq!(files.settled(), below("f:///b"));
    }

    #[test]
    fn a_file_with_a_failure_stays_open_where_its_last_good_version_may_follow() {
        let files = listing(&["f:///1", "f:///2"], true);
        files.report([("f:///1", true)], ["f:///1#a"]);
        files.arrived(["f:///1#a"]);
        files.report([("f:///2", false)], []);
        assert_eq!(files.settled(), below("f:///1"));
        // Without a previous version to take it from, it is done with.
        let files = listing(&["f:///1", "f:///2"], false);
        files.report([("f:///1", true)], ["f:///1#a"]);
        files.arrived(["f:///1#a"]);
        assert_eq!(files.settled(), below("f:///2"));
    }

    #[test]
    fn a_uri_sent_twice_is_awaited_twice() {
        // The second copy fails as a duplicate when it arrives, but it does arrive.
        let files = listing(&["a"], false);
        files.report([("a", false)], ["a#1", "a#1"]);
        files.arrived(["a#1"]);
        assert_eq!(files.settled(), below("a#1"));
        files.arrived(["a#1"]);
        assert_eq!(files.settled(), Settled::All);
    }
}
