#!/usr/bin/env bash
# Run the app locally: creates .venv on first use, then `streamlit run app.py` from the repo root
# (so .streamlit/config.toml is read). Extra arguments go to streamlit, e.g. --server.port 8600.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
source scripts/lib.sh
ensure_venv requirements.txt

exec .venv/bin/streamlit run app.py "$@"
