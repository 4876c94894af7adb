#!/usr/bin/env python3
"""XQuAD (Artetxe et al., 2020; CC BY-SA 4.0) as BEIR retrieval sets, one per language.

XQuAD is 240 paragraphs of SQuAD v1.1's development set and their 1,190 questions,
translated by professionals into ten languages (Arabic, Chinese, German, Greek, Hindi,
Romanian, Russian, Spanish, Thai, Turkish, Vietnamese) beside the English originals. Each
language becomes a set in quarry's BEIR layout: the paragraphs are the corpus, each question
a query, relevant the one paragraph it was written about (squad_to_beir.py). The sets are
measurements only: no weight, threshold or rule of quarry is chosen on them.

    python3 bench/qa_sets/beir_from_xquad.py XQUAD_REPO OUT [LANGUAGE ...]

XQUAD_REPO: a checkout of github.com/google-deepmind/xquad (its `xquad.<language>.json`);
OUT: where `xquad-<language>/` folders are written; no languages named: all twelve.
"""

import os
import sys

from squad_to_beir import convert

LANGUAGES = ["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    repo, out = sys.argv[1], sys.argv[2]
    for language in sys.argv[3:] or LANGUAGES:
        source = os.path.join(repo, f"xquad.{language}.json")
        convert([source], out, f"xquad-{language}", f"languages: {', '.join(LANGUAGES)}")


if __name__ == "__main__":
    main()
