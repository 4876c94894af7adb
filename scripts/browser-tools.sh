#!/usr/bin/env bash
# Installs the browser the dashboard test drives: Debian's chromium and chromium-driver
# (server/tests/dashboard_browser.rs). Idempotent. Where they cannot be installed (no apt, no
# root) it says so and the test reports itself skipped.
set -uo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
if command -v apt-get >/dev/null \
  && $SUDO apt-get update -qq \
  && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null)"
else
  echo "chromium could not be installed: the dashboard's browser test will be skipped" >&2
fi
