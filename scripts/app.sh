#!/usr/bin/env bash
# Run the app locally: creates .venv on first use, then `streamlit run app.py` from the repo root
# (so .streamlit/config.toml is read), through scripts/serve_app.py, which imports every module first so the
# server is warm before /_stcore/health answers. Extra arguments go to streamlit, e.g. --server.port 8600.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
source scripts/lib.sh
ensure_venv requirements.txt

exec .venv/bin/python scripts/serve_app.py "$@"
