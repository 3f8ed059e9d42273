#!/usr/bin/env bash
# Run every check: lint, format, types, and all tests (browser tests included).
# Idempotent; works on a fresh Debian machine with Python 3.11, as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

if [[ ! -x /usr/bin/chromium ]]; then
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi

ensure_venv requirements-dev.txt

# Playwright's browser profiles go to $TMPDIR: keep them inside the checkout (git-ignored).
mkdir -p .tmp
export TMPDIR="$PWD/.tmp"

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy kvcore
.venv/bin/python -m pytest "$@"
