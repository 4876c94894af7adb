//! SVG plots of a run (plotters): the ANN recall–QPS curves, the latency CDF per mode, and
//! indexing throughput per stage.

use std::path::Path;

use plotters::prelude::*;

use crate::ann_sweep::SweepPoint;
use crate::harness::BenchResults;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("plot: {e}")
}

/// Writes `<stem>-recall_qps.svg`, `<stem>-latency_cdf.svg` and `<stem>-stage_throughput.svg`.
pub fn write_all(results: &BenchResults, out: &Path, stem: &str) -> anyhow::Result<()> {
    recall_qps(results, &out.join(format!("{stem}-recall_qps.svg")))?;
    latency_cdf(results, &out.join(format!("{stem}-latency_cdf.svg")))?;
    stage_throughput(results, &out.join(format!("{stem}-stage_throughput.svg")))?;
    Ok(())
}

fn recall_qps(results: &BenchResults, path: &Path) -> anyhow::Result<()> {
    let mut series: Vec<(String, Vec<&SweepPoint>)> = vec![("quarry".into(), results.ann.iter().collect())];
    if let Some(peers) = &results.peers {
        if let Some(f) = &peers.faiss {
            series.push(("faiss-cpu".into(), f.sweep.iter().collect()));
        }
        if let Some(h) = &peers.hnswlib {
            series.push(("hnswlib".into(), h.sweep.iter().collect()));
        }
    }
    let max_qps = series
        .iter()
        .flat_map(|(_, s)| s.iter().map(|p| p.qps))
        .fold(1.0, f64::max);
    let min_recall = series
        .iter()
        .flat_map(|(_, s)| s.iter().map(|p| p.recall_at_10))
        .fold(1.0, f64::min)
        .min(0.9);
    let root = SVGBackend::new(path, (720, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{}: recall@10 vs QPS", results.workload), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(min_recall..1.0, (1.0..max_qps * 1.5).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("recall@10")
        .y_desc("queries per second (one at a time)")
        .draw()
        .map_err(err)?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut points: Vec<(f64, f64)> = points.iter().map(|p| (p.recall_at_10, p.qps)).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        chart
            .draw_series(points.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

fn latency_cdf(results: &BenchResults, path: &Path) -> anyhow::Result<()> {
    let curves: Vec<_> = results
        .load
        .iter()
        .filter(|p| p.concurrency == 1 && !p.latencies_ms.is_empty())
        .collect();
    let max_ms = curves
        .iter()
        .flat_map(|p| p.latencies_ms.last().copied())
        .fold(1.0, f64::max);
    let root = SVGBackend::new(path, (720, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{}: search latency CDF at concurrency 1", results.workload),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((0.01..max_ms * 1.2).log_scale(), 0.0..1.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("latency, ms")
        .y_desc("fraction of requests")
        .draw()
        .map_err(err)?;
    for (i, point) in curves.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let n = point.latencies_ms.len() as f64;
        let cdf: Vec<(f64, f64)> = point
            .latencies_ms
            .iter()
            .enumerate()
            .map(|(j, ms)| (ms.max(0.01), (j + 1) as f64 / n))
            .collect();
        chart
            .draw_series(LineSeries::new(cdf, color.stroke_width(2)))
            .map_err(err)?
            .label(format!("{} {}", point.path, point.mode))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

fn stage_throughput(results: &BenchResults, path: &Path) -> anyhow::Result<()> {
    let stages: Vec<_> = results.indexing.stages.iter().filter(|s| s.per_sec > 0.0).collect();
    let root = SVGBackend::new(path, (720, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let max = stages.iter().map(|s| s.per_sec).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{}: indexing throughput per stage (items/s of busy time)",
                results.workload
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0..stages.len().max(1), (0.1..max * 2.0).log_scale())
        .map_err(err)?;
    let names: Vec<String> = stages.iter().map(|s| format!("{} ({})", s.stage, s.unit)).collect();
    chart
        .configure_mesh()
        .x_labels(stages.len().max(1))
        .x_label_formatter(&|i| names.get(*i).cloned().unwrap_or_default())
        .y_desc("per second")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(
            stages
                .iter()
                .enumerate()
                .map(|(i, s)| Rectangle::new([(i, 0.1), (i + 1, s.per_sec)], COLORS[i % COLORS.len()].filled())),
        )
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
