#!/usr/bin/env bash
# Installs the Python tools the tests run into .venv. Idempotent.
# - moto_server: a real S3 API on loopback; tests start their own on a free port.
# - kubernetes-validate: Kubernetes' own resource schemas (shipped in the package), against
#   which tests/deploy_manifests.rs checks the files in deploy/.
# - openai: the OpenAI Python client, which server/tests/http_embeddings.rs points at
#   quarry's POST /v1/embeddings.
# - schemathesis: runs /openapi.json against a live server (server/tests/http_openapi.rs);
#   hypothesis is pinned to a release schemathesis 3.39 runs with.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/.venv/bin/moto_server" ]; then
  python3 -m venv "$root/.venv"
  "$root/.venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==5.*"
fi
if [ ! -x "$root/.venv/bin/kubernetes-validate" ]; then
  "$root/.venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==1.*"
fi
if ! "$root/.venv/bin/python" -c "import openai" 2>/dev/null; then
  "$root/.venv/bin/pip" install --quiet --disable-pip-version-check "openai==1.*"
fi
if [ ! -x "$root/.venv/bin/st" ]; then
  "$root/.venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==3.39.*" "hypothesis==6.122.*"
fi
echo "moto_server: $root/.venv/bin/moto_server; kubernetes-validate: $root/.venv/bin/kubernetes-validate"
