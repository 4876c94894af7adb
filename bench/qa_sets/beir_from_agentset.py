#!/usr/bin/env python3
"""Two small retrieval sets of agentset-ai's embedding leaderboard, copied as they are.

github.com/agentset-ai/embedding-leaderboard keeps its evaluation sets in BEIR's layout
(`datasets/<set>/corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv`). Two are taken:
`dbpedia`, 5,000 entity abstracts of BEIR's DBPedia-Entity (English) with 50 of its queries
(40 with a relevant abstract, relevance graded 1-2), and `arcd`, the Arabic Reading
Comprehension Dataset's (Mozannar et al., 2019) 255 Wikipedia paragraphs and 50 questions.
Its `business-reports` set is not taken: 11 of its 50 queries are judged, each with every
chunk of one report relevant. The sets are measurements only: no weight, threshold or rule of
quarry is chosen on them.

    python3 bench/qa_sets/beir_from_agentset.py LEADERBOARD_REPO OUT

LEADERBOARD_REPO: a checkout of the leaderboard (measured at 7a1376c); OUT: where the
`dbpedia/` and `arcd/` folders are written.
"""

import os
import shutil
import sys

SETS = ["dbpedia", "arcd"]
FILES = ["corpus.jsonl", "queries.jsonl", os.path.join("qrels", "test.tsv")]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    repo, out = sys.argv[1], sys.argv[2]
    for name in SETS:
        for file in FILES:
            source = os.path.join(repo, "datasets", name, file)
            if not os.path.exists(source):
                sys.exit(f"{source}: no such file (a checkout of the leaderboard holds it)")
            target = os.path.join(out, name, file)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)
        with open(os.path.join(out, name, "queries.jsonl"), encoding="utf-8") as f:
            queries = sum(1 for _ in f)
        with open(os.path.join(out, name, "corpus.jsonl"), encoding="utf-8") as f:
            passages = sum(1 for _ in f)
        print(f"{name}: {passages} passages, {queries} queries")


if __name__ == "__main__":
    main()
