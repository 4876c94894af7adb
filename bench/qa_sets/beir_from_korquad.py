#!/usr/bin/env python3
"""KorQuAD 1.0 (Lim et al., 2019; CC BY-ND 2.0 KR) as a Korean retrieval set.

KorQuAD 1.0 is a question-answering set in Korean in SQuAD 1.1's layout, its paragraphs from
Korean Wikipedia. Its development file becomes one set in quarry's BEIR layout, written to a
local folder for a measurement only (the licence allows no derived set to be shared): 964
paragraphs, each question a query, relevant the one paragraph it was written
about (squad_to_beir.py). No weight, threshold or rule of quarry is chosen on it.

    python3 bench/qa_sets/beir_from_korquad.py KORQUAD_REPO OUT

KORQUAD_REPO: a checkout of github.com/korquad/korquad.github.io (its
`dataset/KorQuAD_v1.0_dev.json`); OUT: where the `korquad-ko/` folder is written.
"""

import os
import sys

from squad_to_beir import convert

DEV = "dataset/KorQuAD_v1.0_dev.json"


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    repo, out = sys.argv[1], sys.argv[2]
    convert([os.path.join(repo, DEV)], out, "korquad-ko", "a checkout of korquad.github.io holds it")


if __name__ == "__main__":
    main()
