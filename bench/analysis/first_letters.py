"""Does cutting words to their first letters help where a language has no stemmer?

Plain BM25 (k1 1.2, b 0.75) over a BEIR-layout set, each word lower-cased and read one way:
left whole (`whole`), cut to its first N letters (`first4`, `first5`, `first6`) or stemmed by
Snowball's stemmer of the set's language (`snowball`; `pip install snowballstemmer`), accents
folded after. nDCG@10 per way. Run on sets whose languages Snowball stems, it compares
truncation with a real stemmer and with no stemmer at all, which is the choice for the
languages quarry has no stemmer for (it cuts their words to five letters from the analyzer's
ninth revision; the length comes from McNamee, Nicholas and Mayfield, SIGIR 2009, not from
these runs).

    python3 bench/analysis/first_letters.py /tmp/xq/xquad-ru russian
"""

import collections
import json
import math
import os
import re
import sys
import unicodedata

WAYS = ["whole", "first4", "first5", "first6", "snowball"]


def read_set(folder: str):
    docs, queries, relevant = {}, {}, collections.defaultdict(set)
    with open(os.path.join(folder, "corpus.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            docs[row["_id"]] = f"{row.get('title', '')} {row['text']}"
    with open(os.path.join(folder, "queries.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            queries[row["_id"]] = row["text"]
    with open(os.path.join(folder, "qrels", "test.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            query, doc, score = line.rstrip("\n").split("\t")
            if float(score) > 0:
                relevant[query].add(doc)
    return docs, queries, relevant


def reader(way: str, language: str):
    stemmer = None
    if way == "snowball":
        import snowballstemmer

        stemmer = snowballstemmer.stemmer(language)
    cache = {}

    def term(word: str) -> str:
        if word not in cache:
            if stemmer is not None:
                cut = stemmer.stemWord(word)
            elif way.startswith("first"):
                cut = word[: int(way[len("first") :])]
            else:
                cut = word
            folded = unicodedata.normalize("NFKD", cut)
            cache[word] = "".join(c for c in folded if not unicodedata.combining(c))
        return cache[word]

    return lambda text: [term(word) for word in re.findall(r"\w+", text.lower())]


def ndcg_at_10(docs, queries, relevant, read) -> float:
    k1, b = 1.2, 0.75
    postings = collections.defaultdict(dict)
    lengths = {}
    for doc, text in docs.items():
        terms = read(text)
        lengths[doc] = len(terms)
        for term, count in collections.Counter(terms).items():
            postings[term][doc] = count
    n = len(docs)
    mean_length = sum(lengths.values()) / n
    total = 0.0
    for query, text in queries.items():
        scores = collections.Counter()
        for term in read(text):
            rows = postings.get(term)
            if not rows:
                continue
            idf = math.log(1 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
            for doc, f in rows.items():
                scores[doc] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * lengths[doc] / mean_length))
        ranked = [doc for doc, _ in scores.most_common(10)]
        gain = sum(1 / math.log2(at + 2) for at, doc in enumerate(ranked) if doc in relevant[query])
        ideal = sum(1 / math.log2(at + 2) for at in range(min(10, len(relevant[query]))))
        total += gain / ideal if ideal else 0.0
    return total / len(queries)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: first_letters.py BEIR_FOLDER SNOWBALL_LANGUAGE")
    folder, language = sys.argv[1], sys.argv[2]
    docs, queries, relevant = read_set(folder)
    figures = [f"{ndcg_at_10(docs, queries, relevant, reader(way, language)):.4f}" for way in WAYS]
    print(os.path.basename(folder.rstrip("/")), *(f"{way} {figure}" for way, figure in zip(WAYS, figures)))


if __name__ == "__main__":
    main()
