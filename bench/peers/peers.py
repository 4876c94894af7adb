"""Peers for `quarry bench`, on the same data in the same run: faiss-cpu (the very index file
quarry wrote, same parameters), hnswlib (same M / efConstruction, efSearch sweep) and bm25s
(BM25 over the same chunk texts). Reads meta.json written by the harness, prints JSON."""
import json
import sys
import time

import numpy as np


def recall(meta, found, scores):
    """Recall@k as quarry counts it (ExactTruth::recall_of_answers): an answer is a true
    neighbour when it is one of the query's truth rows (its exact top k, then rows tied with
    the k-th) or, where the index's scores are exact inner products, when its score ties the
    k-th's; each query's distinct true answers, at most k, over k."""
    k, tolerance, exact = meta["recall_k"], meta["tie_tolerance"], meta["scores_exactly"]

    def one(truth, kth, rows, row_scores):
        wanted = min(k, len(truth))
        if wanted == 0:
            return 1.0
        true = {r for r, s in zip(rows, row_scores) if r in truth or (exact and s >= kth - tolerance)}
        return min(len(true), wanted) / wanted

    return float(np.mean([one(set(t), kth, r, s) for t, kth, r, s in zip(meta["truth"], meta["kth_scores"], found, scores)]))


MIN_WINDOW_SECS = 0.5  # the same window as the Rust side (ann_sweep::MIN_WINDOW_SECS)


def timed_queries(search, queries, repetitions):
    """QPS with the query set repeated until each window lasts MIN_WINDOW_SECS; best window kept."""
    found = [search(q) for q in queries]
    best = 0.0
    for _ in range(max(repetitions, 1)):
        start, done = time.perf_counter(), 0
        while done == 0 or time.perf_counter() - start < MIN_WINDOW_SECS:
            for q in queries:
                search(q)
            done += len(queries)
        best = max(best, done / (time.perf_counter() - start))
    return best, found


def ndcg_at_10(ranked, judged):
    gains = [judged.get(d, 0) for d in ranked[:10]]
    dcg = sum(g / np.log2(i + 2) for i, g in enumerate(gains) if g > 0)
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def main():
    meta = json.load(open(sys.argv[1]))
    d, reps = meta["dim"], meta["repetitions"]
    base = np.fromfile(meta["base"], dtype=np.float32).reshape(-1, d)
    queries = np.fromfile(meta["queries"], dtype=np.float32).reshape(-1, d)
    out = {}

    import faiss
    faiss.omp_set_num_threads(1)
    index = faiss.read_index(meta["faiss_index"])
    sweep = []
    for value in meta["sweep_values"]:
        if meta["sweep_parameter"] == "efSearch":
            faiss.ParameterSpace().set_index_parameter(index, "efSearch", value)
        elif meta["sweep_parameter"] == "nprobe":
            faiss.ParameterSpace().set_index_parameter(index, "nprobe", value)
        qps, answers = timed_queries(lambda q: index.search(q.reshape(1, -1), 10), queries, reps)
        found, scores = [a[1][0].tolist() for a in answers], [a[0][0].tolist() for a in answers]
        sweep.append({"engine": "faiss-cpu", "parameter": meta["sweep_parameter"], "value": value, "recall_at_10": recall(meta, found, scores), "qps": qps})
    out["faiss"] = {"version": faiss.__version__, "sweep": sweep}

    if meta.get("hnsw"):
        import hnswlib
        h = meta["hnsw"]
        start = time.perf_counter()
        graph = hnswlib.Index(space="ip", dim=d)
        graph.init_index(max_elements=len(base), M=h["m"], ef_construction=h["ef_construction"], random_seed=1)
        graph.set_num_threads(1)
        graph.add_items(base, np.arange(len(base)))
        build = time.perf_counter() - start
        sweep = []
        for value in meta["sweep_values"]:
            graph.set_ef(max(value, 10))
            qps, answers = timed_queries(lambda q: graph.knn_query(q, k=10), queries, reps)
            # hnswlib's "ip" space answers 1 - inner product.
            found, scores = [a[0][0].tolist() for a in answers], [(1.0 - a[1][0]).tolist() for a in answers]
            sweep.append({"engine": "hnswlib", "parameter": "efSearch", "value": value, "recall_at_10": recall(meta, found, scores), "qps": qps})
        out["hnswlib"] = {"build_secs": build, "sweep": sweep}

    if meta.get("texts"):
        import bm25s
        import Stemmer
        texts = [json.loads(line) for line in open(meta["texts"])]
        query_texts = [json.loads(line) for line in open(meta["query_texts"])]
        stemmer = Stemmer.Stemmer("english")
        start = time.perf_counter()
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize([t["text"] for t in texts], stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
        index_secs = time.perf_counter() - start
        k = min(100, len(texts))

        def run(q):
            tokens = bm25s.tokenize([q["text"]], stopwords="en", stemmer=stemmer, show_progress=False)
            if not tokens.vocab:
                return []
            ids, _ = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
            return [texts[i]["doc"] for i in ids[0]]

        qps, ranked = timed_queries(run, query_texts, reps)
        result = {"version": getattr(bm25s, "__version__", "?"), "index_secs": index_secs, "qps": qps}
        qrels = meta.get("qrels")
        if qrels:
            scores = []
            for q, docs in zip(query_texts, ranked):
                if q["id"] in qrels:
                    seen, unique = set(), []
                    for doc in docs:
                        if doc not in seen:
                            seen.add(doc)
                            unique.append(doc)
                    scores.append(ndcg_at_10(unique, qrels[q["id"]]))
            result["ndcg_at_10"] = float(np.mean(scores)) if scores else None
        out["bm25s"] = result
    print(json.dumps(out))


if __name__ == "__main__":
    main()
