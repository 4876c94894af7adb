//! A delta whose base stopped being LATEST while the run worked: another writer (an upload
//! through a server, a delete, a RAG ingest, a compaction, another run) published a version
//! that builds on the base. The run's change — its new segments, the copies it hides, the
//! tombstones it lifts — is put on top of that version instead, so neither writer's change is
//! lost. A version that does not build on the base (a rollback, a full version) is not
//! built on: the run refuses to publish. A full version replaces what LATEST names, but carries
//! over the documents other writers added through the API meanwhile ([`carry_api_documents`]).

use std::collections::{HashMap, HashSet};

use crate::error::Result;
use crate::parse::added_through_api;
use crate::snapshot::{new_version_id, tombstone_document, DocumentOutline, Manifest, SegmentManifest, SnapshotReader};
use crate::store::StoreOptions;

/// How often a writer whose base stopped being LATEST puts its change on top of the version
/// another writer published meanwhile before it gives up.
pub(super) const REBASES: usize = 8;

/// How far back a version's parents are followed to find the base.
const MAX_PARENTS: usize = 10_000;

/// Whether `version` builds on `ancestor`: `ancestor` is among its parents.
pub(super) async fn builds_on(uri: &str, store: &StoreOptions, version: &Manifest, ancestor: &str) -> Result<bool> {
    let mut parent = version.parent.clone();
    for _ in 0..MAX_PARENTS {
        match parent {
            None => return Ok(false),
            Some(id) if id == ancestor => return Ok(true),
            // Version ids sort by time: a parent older than the ancestor cannot lead to it.
            Some(id) if id.as_str() < ancestor => return Ok(false),
            Some(id) => {
                parent = SnapshotReader::open_version(uri, &id, store)
                    .await?
                    .manifest()
                    .parent
                    .clone()
            }
        }
    }
    Ok(false)
}

/// The documents a delta touched: those it wrote (`written`) and those whose old copies its
/// new tombstones hide (replaced or removed). Any copy of them another writer added since the
/// base must be hidden too.
pub(super) fn touched_documents(run: &Manifest, base: &Manifest, written: &HashSet<String>) -> HashSet<String> {
    let before: HashSet<&str> = base.tombstones.iter().map(String::as_str).collect();
    let hidden = run
        .tombstones
        .iter()
        .filter(|t| !before.contains(t.as_str()))
        .filter_map(|t| t.split_once('/').map(|(_, doc)| doc.to_string()));
    written.iter().cloned().chain(hidden).collect()
}

/// The version `latest`, and the copies it added since `base` ([`added_copies`]), when it
/// builds on `base`; None when it does not (a rollback, a full version): no change is put on
/// top of it, and no document is carried over from it.
pub(super) async fn built_on_base(
    uri: &str,
    store: &StoreOptions,
    base: &Manifest,
    latest: &str,
) -> Result<Option<(SnapshotReader, AddedCopies)>> {
    let reader = SnapshotReader::open_version(uri, latest, store).await?;
    if !builds_on(uri, store, reader.manifest(), &base.version).await? {
        return Ok(None);
    }
    let copies = added_copies(&reader, base).await?;
    Ok(Some((reader, copies)))
}

/// `run` (a delta built on `base`) put on top of `onto`, which builds on `base`:
/// - `onto`'s segments, then the run's new ones;
/// - `onto`'s tombstones less those the run lifted and those of documents the run wrote again
///   (a document the source still has after an online delete comes back, as in a delta);
/// - the run's new tombstones whose segment `onto` still has (a compaction since may have
///   merged it away), and, in each segment `onto` added since `base` (`added_copies`: its id and
///   the documents it holds), a tombstone for each copy of a document the run touched;
/// - the run's source, parse signature and precisions, and the worse recall of the two.
pub(super) fn rebase_delta(
    run: &Manifest,
    base: &Manifest,
    onto: &Manifest,
    added_copies: &[(String, Vec<DocumentOutline>)],
    touched: &HashSet<String>,
    written: &HashSet<String>,
) -> Manifest {
    let base_segments: HashSet<&str> = base.segments.iter().map(|s| s.id.as_str()).collect();
    let run_tombstones: HashSet<&str> = run.tombstones.iter().map(String::as_str).collect();
    let base_tombstones: HashSet<&str> = base.tombstones.iter().map(String::as_str).collect();
    let lifted: HashSet<&str> = base_tombstones.difference(&run_tombstones).copied().collect();
    let rewritten = |tombstone: &str| tombstone_document(tombstone).is_some_and(|document| written.contains(document));

    let mut out = onto.successor(new_version_id());
    out.source = run.source.clone();
    out.parse_sig = run.parse_sig.clone();
    out.model.precisions = run.model.precisions.clone();
    out.recall_check = match (&onto.recall_check, &run.recall_check) {
        (Some(a), Some(b)) => Some(if a.recall <= b.recall { a.clone() } else { b.clone() }),
        (a, b) => a.clone().or_else(|| b.clone()),
    };
    out.tombstones.retain(|t| !lifted.contains(t.as_str()) && !rewritten(t));
    for segment in run.segments.iter().filter(|s| !base_segments.contains(s.id.as_str())) {
        out.add_segment_of(segment.clone(), run);
    }
    out.counts.tokens += run.counts.tokens.saturating_sub(base.counts.tokens);

    let present: HashSet<String> = out.segments.iter().map(|s| s.id.clone()).collect();
    let mut tombstones: HashSet<String> = out.tombstones.iter().cloned().collect();
    let mut add = |out: &mut Manifest, tombstone: String| {
        if tombstones.insert(tombstone.clone()) {
            out.tombstones.push(tombstone);
        }
    };
    for tombstone in run.tombstones.iter().filter(|t| !base_tombstones.contains(t.as_str())) {
        let kept = tombstone
            .split_once('/')
            .is_none_or(|(segment, _)| present.contains(segment));
        if kept {
            add(&mut out, tombstone.clone());
        }
    }
    for (segment, documents) in added_copies {
        for document in documents.iter().filter(|d| touched.contains(&d.doc_id)) {
            add(&mut out, format!("{segment}/{}", document.doc_id));
        }
    }
    out
}

/// Segments a version added since a base: each id with the documents it holds.
pub(super) type AddedCopies = Vec<(String, Vec<DocumentOutline>)>;

/// The segments of `onto` (the version `reader` opened) that `base` does not have, each with
/// the documents it holds.
pub(super) async fn added_copies(onto: &SnapshotReader, base: &Manifest) -> Result<AddedCopies> {
    let base_segments: HashSet<&str> = base.segments.iter().map(|s| s.id.as_str()).collect();
    let mut copies = Vec::new();
    for segment in onto
        .manifest()
        .segments
        .iter()
        .map(|s| s.id.as_str())
        .filter(|id| !base_segments.contains(id))
    {
        copies.push((segment.to_string(), onto.read_segment_outlines(segment).await?));
    }
    Ok(copies)
}

/// What carrying over changed in a full version: documents and chunks added from versions
/// other writers published (positive), and of the run's own rows those now hidden (an API
/// delete, a newer copy).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Carried {
    pub documents: usize,
    pub chunks: usize,
    pub hidden_documents: usize,
    pub hidden_chunks: usize,
}

/// `run` (a full version; `kept`: the documents added through the API it carried over from
/// `base` as rows) published over `onto`, which other writers built on `base` meanwhile: the
/// segments `onto` added (`added_copies`) that hold live documents added through the API join
/// the version, every other document in them hidden; so do `onto`'s new tombstones of those
/// documents (an API delete during the run), and a document `onto` holds a newer copy of (a RAG
/// update) has the run's copy hidden.
pub(super) fn carry_api_documents(
    run: &Manifest,
    base: &Manifest,
    onto: &Manifest,
    added_copies: &[(String, Vec<DocumentOutline>)],
    kept: &HashMap<String, usize>,
) -> (Manifest, Carried) {
    let mut out = Manifest {
        version: new_version_id(),
        created_at: chrono::Utc::now(),
        ..run.clone()
    };
    let run_segments: Vec<String> = run.segments.iter().map(|s| s.id.clone()).collect();
    let base_tombstones: HashSet<&str> = base.tombstones.iter().map(String::as_str).collect();
    let new_tombstones: Vec<&String> = onto
        .tombstones
        .iter()
        .filter(|t| !base_tombstones.contains(t.as_str()))
        .collect();
    let dead = onto.tombstone_set();
    let mut carried = Carried::default();
    let (mut carried_segments, mut api_documents): (HashSet<&str>, HashSet<String>) =
        (HashSet::new(), kept.keys().cloned().collect());
    let mut hidden_kept: HashSet<String> = HashSet::new();
    for (segment_id, outlines) in added_copies {
        let Some(segment) = onto.segments.iter().find(|s| &s.id == segment_id) else {
            continue;
        };
        let live_api = |o: &&DocumentOutline| {
            added_through_api(&o.uri) && !dead.hides_any_row(segment_id, &o.doc_id, o.chunk_count)
        };
        if !outlines.iter().any(|o| live_api(&o)) {
            continue;
        }
        out.add_segment_of(
            SegmentManifest {
                index: Some(onto.segment_index(segment)),
                ..segment.clone()
            },
            onto,
        );
        for outline in outlines {
            if live_api(&outline) {
                carried.documents += 1;
                carried.chunks += outline.chunk_count as usize;
                api_documents.insert(outline.doc_id.clone());
                if kept.contains_key(&outline.doc_id) {
                    // A newer copy than the one the run kept: the run's is hidden.
                    out.tombstones
                        .extend(run_segments.iter().map(|s| format!("{s}/{}", outline.doc_id)));
                    hidden_kept.insert(outline.doc_id.clone());
                }
            } else {
                out.tombstones.push(format!("{segment_id}/{}", outline.doc_id));
            }
        }
        carried_segments.insert(segment_id.as_str());
    }
    for tombstone in new_tombstones {
        let applies = match tombstone.split_once('/') {
            Some((segment, _)) => carried_segments.contains(segment),
            None => tombstone_document(tombstone).is_some_and(|document| api_documents.contains(document)),
        };
        if applies {
            out.tombstones.push(tombstone.clone());
        }
    }
    let hides = out.tombstone_set();
    for (doc_id, &chunks) in kept {
        let hidden = hidden_kept.contains(doc_id)
            || run_segments
                .iter()
                .any(|segment| hides.hides_any_row(segment, doc_id, chunks as u32));
        if hidden {
            carried.hidden_documents += 1;
            carried.hidden_chunks += chunks;
        }
    }
    (out, carried)
}
