#!/usr/bin/env python3
"""XQuAD (Artetxe et al., 2020; CC BY-SA 4.0) as BEIR retrieval sets, one per language.

XQuAD is 240 paragraphs of SQuAD v1.1's development set and their 1,190 questions,
translated by professionals into ten languages (Arabic, Chinese, German, Greek, Hindi,
Romanian, Russian, Spanish, Thai, Turkish, Vietnamese) beside the English originals. Each
language becomes a set in quarry's BEIR layout: the paragraphs are the corpus, each question
a query, relevant the one paragraph it was written about (as jsquad-ja is built). The sets
are measurements only: no weight, threshold or rule of quarry is chosen on them.

    python3 bench/xquad/beir_from_xquad.py XQUAD_REPO OUT [LANGUAGE ...]

XQUAD_REPO: a checkout of github.com/google-deepmind/xquad (its `xquad.<language>.json`);
OUT: where `xquad-<language>/` folders are written; no languages named: all twelve.
"""

import json
import os
import sys

LANGUAGES = ["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]


def convert(source: str, out: str) -> tuple[int, int]:
    with open(source, encoding="utf-8") as f:
        data = json.load(f)["data"]
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    passages = queries = 0
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as corpus, open(
        os.path.join(out, "queries.jsonl"), "w", encoding="utf-8"
    ) as questions, open(os.path.join(out, "qrels", "test.tsv"), "w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for article_at, article in enumerate(data):
            for paragraph_at, paragraph in enumerate(article["paragraphs"]):
                passage_id = f"p{article_at}-{paragraph_at}"
                corpus.write(json.dumps({"_id": passage_id, "title": "", "text": paragraph["context"]}, ensure_ascii=False) + "\n")
                passages += 1
                for qa in paragraph["qas"]:
                    questions.write(json.dumps({"_id": qa["id"], "text": qa["question"]}, ensure_ascii=False) + "\n")
                    qrels.write(f"{qa['id']}\t{passage_id}\t1\n")
                    queries += 1
    return passages, queries


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    repo, out = sys.argv[1], sys.argv[2]
    for language in sys.argv[3:] or LANGUAGES:
        source = os.path.join(repo, f"xquad.{language}.json")
        if not os.path.exists(source):
            sys.exit(f"{source}: no such file (languages: {', '.join(LANGUAGES)})")
        passages, queries = convert(source, os.path.join(out, f"xquad-{language}"))
        print(f"xquad-{language}: {passages} passages, {queries} queries")


if __name__ == "__main__":
    main()
