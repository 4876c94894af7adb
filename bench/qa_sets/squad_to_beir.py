"""A question-answering set in SQuAD's layout as a retrieval set in quarry's BEIR layout.

The paragraphs are the corpus, each question a query, relevant the one paragraph it was
written about (as jsquad-ja is built). A question its set marks unanswerable (SQuAD 2.0's
`is_impossible`) is left out: its paragraph does not hold what it asks for. Used by
beir_from_xquad.py, beir_from_heq.py and beir_from_korquad.py; the sets are measurements only,
no weight, threshold or rule of quarry is chosen on them.
"""

import json
import os
import sys


def convert(sources: list[str], out: str, name: str, hint: str) -> None:
    """Writes the set `name` under `out` from the SQuAD files `sources`, and says how large it
    is; exits naming the first source that is missing (`hint`: where it is found)."""
    for source in sources:
        if not os.path.exists(source):
            sys.exit(f"{source}: no such file ({hint})")
    passages, queries = write_set(sources, os.path.join(out, name))
    print(f"{name}: {passages} passages, {queries} queries")


def write_set(sources: list[str], out: str) -> tuple[int, int]:
    """Writes `out/corpus.jsonl`, `out/queries.jsonl` and `out/qrels/test.tsv` from the SQuAD
    files `sources` (their paragraphs and questions together); returns (passages, queries)."""
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    passages = queries = 0
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as corpus, open(
        os.path.join(out, "queries.jsonl"), "w", encoding="utf-8"
    ) as questions, open(os.path.join(out, "qrels", "test.tsv"), "w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for source_at, source in enumerate(sources):
            with open(source, encoding="utf-8") as f:
                data = json.load(f)["data"]
            prefix = f"s{source_at}-" if len(sources) > 1 else ""
            for article_at, article in enumerate(data):
                for paragraph_at, paragraph in enumerate(article["paragraphs"]):
                    passage_id = f"{prefix}p{article_at}-{paragraph_at}"
                    record = {"_id": passage_id, "title": "", "text": paragraph["context"]}
                    corpus.write(json.dumps(record, ensure_ascii=False) + "\n")
                    passages += 1
                    for qa in paragraph["qas"]:
                        if qa.get("is_impossible"):
                            continue
                        query_id = f"{prefix}{qa['id']}"
                        questions.write(json.dumps({"_id": query_id, "text": qa["question"]}, ensure_ascii=False) + "\n")
                        qrels.write(f"{query_id}\t{passage_id}\t1\n")
                        queries += 1
    return passages, queries
