#!/usr/bin/env bash
# The proof suite: kvcore's cache sizes against the caches of real Hugging Face transformers models.
# Installs requirements-proof.txt (requirements-dev.txt + torch CPU + transformers) into .venv, then runs
# pytest on tests/proof with KVLAB_PROOF=1 (without it the suite is not collected, see tests/proof/conftest.py).
# Nothing is downloaded but packages: tiny random models are built from config classes, the Hub is offline.
# Idempotent; works on a fresh Debian machine with Python 3.11, as root or with sudo. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

ensure_venv requirements-proof.txt

export KVLAB_PROOF=1 HF_HUB_OFFLINE=1
.venv/bin/python -m pytest tests/proof "$@"
