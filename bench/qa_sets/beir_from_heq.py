#!/usr/bin/env python3
"""HeQ (Cohen et al., 2023; CC BY 4.0) as a Hebrew retrieval set.

HeQ is a question-answering set in Modern Hebrew in SQuAD 2.0's layout, its paragraphs from
Hebrew Wikipedia and Geektime (a technology news site). Its test and validation files (v1.1)
together become one set in quarry's BEIR layout: 477 paragraphs, each answerable question a
query, relevant the one paragraph it was written about (squad_to_beir.py). The set is a
measurement only: no weight, threshold or rule of quarry is chosen on it.

    python3 bench/qa_sets/beir_from_heq.py HEQ_REPO OUT

HEQ_REPO: a checkout of github.com/NNLP-IL/Hebrew-Question-Answering-Dataset; OUT: where the
`heq-he/` folder is written.
"""

import os
import sys

from squad_to_beir import convert

FILES = ["data/data v1.1/test v1.1.json", "data/data v1.1/val v1.1.json"]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    repo, out = sys.argv[1], sys.argv[2]
    sources = [os.path.join(repo, name) for name in FILES]
    convert(sources, out, "heq-he", "a checkout of HeQ holds it")


if __name__ == "__main__":
    main()
