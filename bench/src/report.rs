//! The Markdown summary of a benchmark run.

use std::fmt::Write;

use crate::harness::BenchResults;

pub fn markdown(r: &BenchResults) -> String {
    let mut md = String::new();
    let m = &r.machine;
    let _ = writeln!(md, "# quarry bench: {}\n", r.workload);
    let _ = writeln!(
        md,
        "- Date: {}\n- Machine: {} ({} CPUs, {}), model on {}\n- Command: `{}`\n",
        r.date, m.host, m.cpus, m.os, m.device, r.command
    );
    let i = &r.indexing;
    let _ = writeln!(
        md,
        "## Indexing\n\n{} documents, {} chunks, {} tokens in {:.2} s wall; peak RSS {:.0} MiB; snapshot {:.1} MiB.\n",
        i.documents,
        i.chunks,
        i.tokens,
        i.wall_secs,
        i.peak_rss_mib,
        i.snapshot_bytes as f64 / 1048576.0
    );
    if !i.stages.is_empty() {
        let _ = writeln!(md, "| stage | busy s | items | throughput |\n|---|---:|---:|---:|");
        for s in &i.stages {
            let _ = writeln!(
                md,
                "| {} | {:.2} | {} | {:.1} {}/s |",
                s.stage, s.busy_secs, s.items, s.per_sec, s.unit
            );
        }
        md.push('\n');
    }
    if let Some(q) = &r.quality {
        let _ = writeln!(md, "## Quality ({} judged queries)\n\n| mode | nDCG@10 | recall@10 | recall@100 | MRR@10 |\n|---|---:|---:|---:|---:|", q.queries);
        for mode in &q.modes {
            let s = &mode.summary;
            let _ = writeln!(
                md,
                "| {} | {:.4} | {:.4} | {:.4} | {:.4} |",
                mode.mode, s.ndcg_at_10, s.recall_at_10, s.recall_at_100, s.mrr_at_10
            );
        }
        let _ = writeln!(md, "\nANN recall@10 against exact search: {:.4}\n", q.ann_recall_at_10);
    }
    let _ = writeln!(md, "## Search load\n\n| path | mode | concurrency | completed | failed | QPS | p50 ms | p95 ms | p99 ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for p in &r.load {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.1} | {:.2} | {:.2} | {:.2} |",
            p.path, p.mode, p.concurrency, p.completed, p.failed, p.qps, p.p50_ms, p.p95_ms, p.p99_ms
        );
    }
    let _ = writeln!(
        md,
        "\nLanes alone (query already embedded, one thread): vector {:.0} QPS, keyword {:.0} QPS.\n",
        r.vector_lane_qps, r.keyword_lane_qps
    );
    let mut sweep: Vec<_> = r.ann.iter().collect();
    if let Some(peers) = &r.peers {
        sweep.extend(peers.faiss.iter().flat_map(|f| f.sweep.iter()));
        sweep.extend(peers.hnswlib.iter().flat_map(|h| h.sweep.iter()));
    }
    if !sweep.is_empty() {
        let _ = writeln!(md, "## ANN recall–QPS (single query at a time)\n\n| engine | parameter | value | recall@10 | QPS |\n|---|---|---:|---:|---:|");
        for p in sweep {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.4} | {:.0} |",
                p.engine, p.parameter, p.value, p.recall_at_10, p.qps
            );
        }
        md.push('\n');
    }
    if let Some(bm25s) = r.peers.as_ref().and_then(|p| p.bm25s.as_ref()) {
        let _ = writeln!(
            md,
            "bm25s {}: index {:.2} s, {:.0} QPS, nDCG@10 {}.\n",
            bm25s.version,
            bm25s.index_secs,
            bm25s.qps,
            bm25s
                .ndcg_at_10
                .map(|n| format!("{n:.4}"))
                .unwrap_or_else(|| "n/a".into())
        );
    }
    let ratio = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "n/a".into());
    let t = &r.ratios;
    let _ = writeln!(
        md,
        "## Ratios (quarry / peer)\n\n| what | ratio |\n|---|---:|\n| quarry's own overhead on top of its FAISS index, % (bar: < 10) | {} |\n| vector QPS vs faiss-cpu (same index file, same efSearch/nprobe) | {} |\n| lane vs faiss-cpu, % slower (overhead + FAISS build difference) | {} |\n| vector QPS vs hnswlib | {} |\n| keyword QPS vs bm25s | {} |\n| keyword nDCG@10 vs bm25s | {} |",
        ratio(t.overhead_vs_own_faiss_percent),
        ratio(t.vector_qps_vs_faiss),
        ratio(t.overhead_vs_faiss_cpu_percent),
        ratio(t.vector_qps_vs_hnswlib),
        ratio(t.keyword_qps_vs_bm25s),
        ratio(t.keyword_ndcg_vs_bm25s)
    );
    md
}
