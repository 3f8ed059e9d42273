#!/usr/bin/env bash
# Run the app locally: creates .venv on first use, then `streamlit run app.py` from the repo root
# (so .streamlit/config.toml is read). Extra arguments go to streamlit, e.g. --server.port 8600.
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin="$(command -v python3.11 || command -v python3)"
if [[ ! -x .venv/bin/python ]]; then
    "$python_bin" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements.txt

exec .venv/bin/streamlit run app.py "$@"
