# Shared by scripts/app.sh and scripts/test.sh (sourced, not run).

# Run a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [[ "$(id -u)" -eq 0 ]]; then
        "$@"
    else
        sudo "$@"
    fi
}

# Create .venv with Python 3.11 (or python3) if it is missing, then install the given requirements file.
# Debian's python3 ships without venv support until python3-venv is installed: install it if needed.
ensure_venv() {
    local requirements="$1"
    local python_bin
    python_bin="$(command -v python3.11 || command -v python3)"
    if [[ ! -x .venv/bin/python ]]; then
        if ! "$python_bin" -m venv .venv 2>/dev/null; then
            rm -rf .venv
            as_root apt-get update
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv
            "$python_bin" -m venv .venv
        fi
    fi
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r "$requirements"
}
