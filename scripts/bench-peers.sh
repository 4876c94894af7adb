#!/usr/bin/env bash
# Installs the peers `quarry bench` compares against (faiss-cpu, hnswlib, bm25s) into
# .venv-bench from PyPI. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv-bench"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import faiss, hnswlib, bm25s, numpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check numpy "faiss-cpu>=1.8" hnswlib "bm25s>=0.2" PyStemmer
fi
echo "peers: $venv/bin/python"
