#!/usr/bin/env bash
# Run every check: lint, format, types, and all tests — kvcore, course, AppTest, browser and the proof suite
# (kvcore's cache sizes against real Hugging Face transformers caches, on tiny models built on the CPU).
# Idempotent; works on a fresh Debian machine with Python 3.11, as root or with sudo. Extra arguments go to
# pytest, e.g. `bash scripts/test.sh tests/proof` for the proof suite alone.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

if [[ ! -x /usr/bin/chromium ]]; then
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi
# HAProxy for tests/serving/test_balancer.py (scripts/serve.sh).
if ! command -v haproxy >/dev/null; then
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy
fi

# requirements-proof.txt = requirements-dev.txt + torch (CPU) + transformers.
ensure_venv requirements-proof.txt

# Playwright's browser profiles go to $TMPDIR: keep them inside the checkout (git-ignored).
mkdir -p .tmp
export TMPDIR="$PWD/.tmp"
# The proof suite is collected only with KVLAB_PROOF=1 (tests/proof/conftest.py); nothing comes from the Hub.
export KVLAB_PROOF=1 HF_HUB_OFFLINE=1

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy kvcore course charts ui
.venv/bin/python -m pytest "$@"
