#!/usr/bin/env bash
# Run every check: lint, format, types, and all tests (browser tests included).
# Idempotent; works on a fresh Debian machine with Python 3.11, as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x /usr/bin/chromium ]]; then
    sudo_cmd=()
    if [[ "$(id -u)" -ne 0 ]]; then
        sudo_cmd=(sudo)
    fi
    "${sudo_cmd[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends chromium
fi

python_bin="$(command -v python3.11 || command -v python3)"
if [[ ! -x .venv/bin/python ]]; then
    "$python_bin" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements-dev.txt

# Playwright's browser profiles go to $TMPDIR: keep them inside the checkout (git-ignored).
mkdir -p .tmp
export TMPDIR="$PWD/.tmp"

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy kvcore
.venv/bin/python -m pytest "$@"
