#!/usr/bin/env bash
# Installs moto_server (a real S3 API on loopback, for tests) into .venv. Idempotent.
# Tests start their own server from .venv/bin/moto_server on a free port.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/.venv/bin/moto_server" ]; then
  python3 -m venv "$root/.venv"
  "$root/.venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==5.*"
fi
echo "moto_server: $root/.venv/bin/moto_server"
