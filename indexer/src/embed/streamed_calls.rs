//! A stream of embedding calls run by one model lane (a GPU's, or a CPU's with one lane) with
//! a batch always queued: the first batch of the next call is queued before the last batch
//! of the current one is read back, as `BertEmbedder::run_batches` does inside a call. Call
//! by call, the device waited between calls while the host read back the last batch,
//! scattered its rows, handed the call's documents on and padded and uploaded the next
//! call's first batch; a run's calls are groups of about 2,048 chunks, on a GPU one or two
//! batches each.

use std::collections::VecDeque;

use super::shared_batches::scatter_rows;
use super::{plan_batches, BertEmbedder, Embedder, Embeddings};
use crate::error::Result;

/// A call taken from the stream whose rows are not all read back yet.
struct OpenCall {
    ids: Vec<Vec<u32>>,
    batches: Vec<Vec<usize>>,
    data: Vec<f32>,
    /// Its batches not read back yet.
    out: usize,
}

/// The calls taken from the stream and not yet handed on, in order, and the batches queued
/// next.
struct Calls {
    open: VecDeque<OpenCall>,
    /// Calls handed on so far (the number of `open`'s first).
    handed: usize,
    /// (call number, batch) not yet queued on the model, in order.
    waiting: VecDeque<(usize, usize)>,
    dim: usize,
}

impl Calls {
    fn take(&mut self, ids: Vec<Vec<u32>>, model: &BertEmbedder) {
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        let batches = plan_batches(&lengths, model.batch_policy());
        let number = self.handed + self.open.len();
        self.waiting.extend((0..batches.len()).map(|batch| (number, batch)));
        self.open.push_back(OpenCall {
            data: vec![0f32; ids.len() * self.dim],
            out: batches.len(),
            ids,
            batches,
        });
    }

    fn call(&mut self, number: usize) -> &mut OpenCall {
        &mut self.open[number - self.handed]
    }

    /// Hands on the finished calls at the front; false when `sink` says to stop.
    fn hand_on(&mut self, sink: &mut dyn FnMut(Embeddings) -> bool) -> bool {
        while self.open.front().is_some_and(|call| call.out == 0) {
            let call = self.open.pop_front().expect("a front call");
            self.handed += 1;
            if !sink(Embeddings {
                dim: self.dim,
                data: call.data,
            }) {
                return false;
            }
        }
        true
    }
}

/// Runs every call of `calls` on `model`'s one lane, a batch always queued (see the module),
/// telling `done` each batch's texts as it is read back and handing each call's rows to
/// `sink` in order, until `sink` says to stop.
pub(super) fn run_streamed(
    model: &BertEmbedder,
    calls: &mut dyn Iterator<Item = Result<Vec<Vec<u32>>>>,
    done: &(dyn Fn(usize) + Sync),
    sink: &mut dyn FnMut(Embeddings) -> bool,
) -> Result<()> {
    let mut state = Calls {
        open: VecDeque::new(),
        handed: 0,
        waiting: VecDeque::new(),
        dim: model.info().dim,
    };
    let mut in_flight = None;
    let mut ended = false;
    loop {
        // The next batch to queue: from the calls taken, else from the next call (one with
        // no texts is finished at once).
        while state.waiting.is_empty() && !ended {
            match calls.next() {
                Some(ids) => state.take(ids?, model),
                None => ended = true,
            }
            if !state.hand_on(sink) {
                return Ok(());
            }
        }
        let queued = match state.waiting.pop_front() {
            Some((number, batch)) => {
                let call = state.call(number);
                let rows: Vec<&Vec<u32>> = call.batches[batch].iter().map(|&i| &call.ids[i]).collect();
                Some((number, batch, model.enqueue(&rows)?))
            }
            None => None,
        };
        let Some((number, batch, rows)) = std::mem::replace(&mut in_flight, queued) else {
            if in_flight.is_none() {
                return Ok(()); // nothing queued, nothing waiting, the stream ended
            }
            continue;
        };
        let vectors = BertEmbedder::collect(rows)?;
        let dim = state.dim;
        let call = state.call(number);
        scatter_rows(&mut call.data, dim, &call.batches[batch], &vectors);
        call.out -= 1;
        done(call.batches[batch].len());
        if !state.hand_on(sink) {
            return Ok(());
        }
    }
}
