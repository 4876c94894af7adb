//! A loaded version's live documents (those with a row no tombstone hides), by URI, with
//! their live chunk counts. A version never changes, so they are found once, on first use,
//! instead of walking every row and sorting every document on each request that lists them
//! (the summaries' pages, the files listing) or looks one up (an /api/rag/ingest).

use quarry_indexer::index::RowSet;
use quarry_indexer::snapshot::DocumentRecord;

use super::loaded::LoadedSegment;

/// Where each live document is, by URI, and the same by doc id.
pub(super) struct LiveDocuments {
    /// (segment, document within the segment, live chunks), by URI.
    entries: Vec<(u32, u32, u32)>,
    /// Indexes into `entries`, by doc id.
    by_id: Vec<u32>,
}

impl LiveDocuments {
    pub(super) fn of(segments: &[LoadedSegment], tombstoned: &RowSet) -> Self {
        let mut entries = Vec::new();
        for (at, segment) in segments.iter().enumerate() {
            let mut counts = vec![0u32; segment.data.documents.len()];
            for (local, &doc) in segment.data.doc_of_row.iter().enumerate() {
                if !tombstoned.contains(segment.offset + local) {
                    counts[doc as usize] += 1;
                }
            }
            entries.extend(
                counts
                    .into_iter()
                    .enumerate()
                    .filter(|(_, chunks)| *chunks > 0)
                    .map(|(doc, chunks)| (at as u32, doc as u32, chunks)),
            );
        }
        let record = |&(segment, doc, _): &(u32, u32, u32)| &segments[segment as usize].data.documents[doc as usize];
        entries.sort_by(|a, b| record(a).uri.cmp(&record(b).uri));
        let mut by_id: Vec<u32> = (0..entries.len() as u32).collect();
        by_id.sort_by(|&a, &b| {
            record(&entries[a as usize])
                .doc_id
                .cmp(&record(&entries[b as usize]).doc_id)
        });
        Self { entries, by_id }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The `at`-th live document by URI: its record, live chunks and segment id.
    pub(super) fn get<'a>(&self, segments: &'a [LoadedSegment], at: usize) -> (&'a DocumentRecord, usize, &'a str) {
        let (segment, doc, chunks) = self.entries[at];
        let segment = &segments[segment as usize];
        (
            &segment.data.documents[doc as usize],
            chunks as usize,
            segment.id.as_str(),
        )
    }

    /// The segment (its index among the version's) and the document within it of the `at`-th
    /// live document by URI.
    pub(super) fn segment_and_document(&self, at: usize) -> (usize, u32) {
        let (segment, doc, _) = self.entries[at];
        (segment as usize, doc)
    }

    /// The place by URI of the live document `doc_id`, if there is one.
    pub(super) fn find(&self, segments: &[LoadedSegment], doc_id: &str) -> Option<usize> {
        self.by_id
            .binary_search_by(|&at| self.get(segments, at as usize).0.doc_id.as_str().cmp(doc_id))
            .ok()
            .map(|found| self.by_id[found] as usize)
    }
}
