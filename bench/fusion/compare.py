#!/usr/bin/env python3
"""Lane fusions compared offline on the runs `quarry eval --runs DIR` writes.

For each dataset: the vector and keyword runs (top 100 documents with their scores), the
per-query weight `auto` gave the vector lane (DIR/<set>.auto-weights.tsv), and the set's
qrels. Prints one markdown table of nDCG@10 (trec_eval's formula, as quarry eval): the single
lanes, RRF (k = 60) equal and weighted by auto's weights, min-max convex combination equal and
weighted, z-score CombSUM equal and weighted (auto's own fusion, here at document level), and
quarry's own `hybrid` and `auto` runs. No parameter is fitted: the weights are auto's.

usage: bench/fusion/compare.py RUNS_DIR DATASET_DIR [DATASET_DIR ...]
"""
import collections
import math
import os
import sys


def load_run(path):
    run = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            query, _, doc, _, score, _ = line.split()
            run[query].append((doc, float(score)))
    return run


def load_qrels(dataset):
    qrels = collections.defaultdict(dict)
    with open(os.path.join(dataset, "qrels", "test.tsv")) as f:
        next(f)
        for line in f:
            query, doc, grade = line.strip().split("\t")
            qrels[query][doc] = int(grade)
    return qrels


def ndcg_at_10(ranked, judged):
    dcg = sum(judged.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if judged.get(doc, 0) > 0)
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best > 0 else 0.0


def rrf(lanes, k=60.0):
    scores = collections.defaultdict(float)
    for rows, weight in lanes:
        for rank, (doc, _) in enumerate(rows):
            scores[doc] += weight / (k + rank + 1)
    return scores


def min_max(lanes):
    scores = collections.defaultdict(float)
    for rows, weight in lanes:
        if not rows:
            continue
        values = [s for _, s in rows]
        low, span = min(values), (max(values) - min(values)) or 1.0
        for doc, s in rows:
            scores[doc] += weight * (s - low) / span
    return scores


def z_scores(lanes):
    """Each lane standardized over its rows and shifted so its lowest is 0 (auto's fusion)."""
    scores = collections.defaultdict(float)
    for rows, weight in lanes:
        if not rows:
            continue
        values = [s for _, s in rows]
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        low = min(values)
        for doc, s in rows:
            scores[doc] += weight * ((s - low) / sd if sd > 0 else 1.0)
    return scores


def ranked(scores):
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs_dir, datasets = sys.argv[1], sys.argv[2:]
    methods = [
        "vector", "keyword", "RRF", "RRF, auto's weights", "min-max", "min-max, auto's weights",
        "z-score", "z-score, auto's weights", "quarry hybrid (RRF)", "quarry auto",
    ]
    table = {}
    for dataset in datasets:
        name = os.path.basename(os.path.normpath(dataset))
        vector = load_run(os.path.join(runs_dir, f"{name}.vector.trec"))
        keyword = load_run(os.path.join(runs_dir, f"{name}.keyword.trec"))
        hybrid = load_run(os.path.join(runs_dir, f"{name}.hybrid.trec"))
        auto = load_run(os.path.join(runs_dir, f"{name}.auto.trec"))
        weights = {}
        with open(os.path.join(runs_dir, f"{name}.auto-weights.tsv")) as f:
            for line in f:
                query, weight = line.split()
                weights[query] = float(weight)
        qrels = load_qrels(dataset)
        totals = collections.defaultdict(float)
        queries = [q for q in qrels if q in vector]
        for query in queries:
            v, k = vector[query][:100], keyword.get(query, [])[:100]
            w = weights[query]
            judged = qrels[query]
            rankings = {
                "vector": [d for d, _ in v],
                "keyword": [d for d, _ in k],
                "RRF": ranked(rrf([(v, 1.0), (k, 1.0)])),
                "RRF, auto's weights": ranked(rrf([(v, w), (k, 1.0 - w)])),
                "min-max": ranked(min_max([(v, 1.0), (k, 1.0)])),
                "min-max, auto's weights": ranked(min_max([(v, w), (k, 1.0 - w)])),
                "z-score": ranked(z_scores([(v, 1.0), (k, 1.0)])),
                "z-score, auto's weights": ranked(z_scores([(v, w), (k, 1.0 - w)])),
                "quarry hybrid (RRF)": [d for d, _ in hybrid.get(query, [])],
                "quarry auto": [d for d, _ in auto.get(query, [])],
            }
            for method, docs in rankings.items():
                totals[method] += ndcg_at_10(docs, judged)
        table[name] = {m: totals[m] / len(queries) for m in methods}
        table[name]["queries"] = len(queries)
    names = list(table)
    print("| nDCG@10 | " + " | ".join(f"{n} ({table[n]['queries']} q)" for n in names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for method in methods:
        print(f"| {method} | " + " | ".join(f"{table[n][method]:.4f}" for n in names) + " |")


if __name__ == "__main__":
    main()
