#!/usr/bin/env bash
# Serve the app on every core: N Streamlit processes (each started warm by scripts/serve_app.py) behind HAProxy
# with sticky sessions (deploy/haproxy.cfg says why HAProxy and what it does).
#
#   scripts/serve.sh [--procs N] [--port P] [--bind ADDR] [--backend-port B] [--no-install] [--dry-run]
#                    [-- STREAMLIT FLAGS]
#   scripts/serve.sh stop [--port P]
#   scripts/serve.sh --help
#
# --procs N        Streamlit processes (default: the number of cores)
# --port P         the port students open (default 8501), on --bind ADDR (default 0.0.0.0: the whole room)
# --backend-port B the processes listen on 127.0.0.1:B, B+1, ... (default P+1)
# --no-install     skip the apt-get / pip steps (everything is installed already: tests, images)
# --dry-run        print the Python found and the commands it would run, then exit (starts and stops nothing)
# The Python: $KVLAB_PYTHON if set (a command or an absolute path); else this checkout's .venv; else, in a git
# worktree without one, the main checkout's .venv; else (unless --no-install) a new .venv here.
# Runs in the foreground; Ctrl-C, or `scripts/serve.sh stop` from another shell, stops HAProxy and every process.
# PIDs, the generated HAProxy config and the logs are under .tmp/serve/P/.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

usage() {
    sed -n '2,/^set -euo/p' scripts/serve.sh | sed '$d' | sed 's/^# \{0,1\}//'
}

# The interpreter to serve with, as an absolute path (empty when none is found; see the header for the order).
# A git worktree shares the main checkout's history but not its untracked .venv: `git rev-parse --git-common-dir`
# names the main checkout's .git, whose parent holds that .venv.
find_python() {
    local common
    if [[ -n "${KVLAB_PYTHON:-}" ]]; then
        command -v "$KVLAB_PYTHON" || { echo "serve.sh: KVLAB_PYTHON=$KVLAB_PYTHON is not a program" >&2; return 1; }
        return 0
    fi
    if [[ -x .venv/bin/python ]]; then
        echo "$PWD/.venv/bin/python"
        return 0
    fi
    if common="$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" \
        && [[ -x "$(dirname "$common")/.venv/bin/python" ]]; then
        echo "$(dirname "$common")/.venv/bin/python"
    fi
}

# Stop what a `serve.sh` started: the PIDs written under .tmp/serve/PORT/ (every port when none is given).
stop_served() {
    local dir="$1" pid_file pid
    for pid_file in "$dir"/*.pid; do
        [[ -e "$pid_file" ]] || continue
        pid="$(<"$pid_file")"
        [[ "$pid" == "$$" ]] || kill -TERM "$pid" 2>/dev/null || true
    done
    for pid_file in "$dir"/*.pid; do
        [[ -e "$pid_file" ]] || continue
        pid="$(<"$pid_file")"
        [[ "$pid" == "$$" ]] && { rm -f "$pid_file"; continue; }
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        rm -f "$pid_file"
    done
}

if [[ "${1:-}" == "stop" ]]; then
    shift
    port=""
    if [[ "${1:-}" == "--port" ]]; then port="$2"; fi
    for dir in .tmp/serve/${port:-*}/; do
        [[ -d "$dir" ]] && stop_served "${dir%/}"
    done
    exit 0
fi

procs="$(nproc)"
port=8501
bind=0.0.0.0
backend_port=""
install=1
dry_run=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --procs) procs="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --bind) bind="$2"; shift 2 ;;
        --backend-port) backend_port="$2"; shift 2 ;;
        --no-install) install=0; shift ;;
        --dry-run) dry_run=1; shift ;;
        -h | --help) usage; exit 0 ;;
        --) shift; break ;;
        *) echo "serve.sh: unknown argument $1 (see scripts/serve.sh --help)" >&2; exit 2 ;;
    esac
done
backend_port="${backend_port:-$((port + 1))}"
python="$(find_python)"

if [[ "$dry_run" -eq 1 ]]; then
    echo "serve.sh: python ${python:-none found (without --no-install: a new .venv here)}"
    for ((i = 1; i <= procs; i++)); do
        echo "serve.sh: would run ${python:-.venv/bin/python} scripts/serve_app.py --server.headless true" \
            "--server.address 127.0.0.1 --server.port $((backend_port + i - 1)) $*"
    done
    echo "serve.sh: would run haproxy -db -f .tmp/serve/$port/haproxy.cfg (students at http://$bind:$port)"
    exit 0
fi

if [[ "$install" -eq 1 ]]; then
    if ! command -v haproxy >/dev/null; then
        as_root apt-get update
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy
    fi
    # This checkout's own .venv is created or brought up to date; a Python found elsewhere is used as it is.
    if [[ -z "$python" || "$python" == "$PWD/.venv/bin/python" ]]; then
        ensure_venv requirements.txt
        python="$PWD/.venv/bin/python"
    fi
fi
if [[ -z "$python" ]]; then
    echo "serve.sh: no Python found (no .venv here or in the main checkout, no KVLAB_PYTHON); run without" \
        "--no-install to create .venv" >&2
    exit 1
fi

run_dir=".tmp/serve/$port"
mkdir -p "$run_dir"
stop_served "$run_dir"  # what an earlier run on this port left behind
echo $$ >"$run_dir/serve.pid"
trap 'stop_served "$run_dir"; exit 0' INT TERM
trap 'stop_served "$run_dir"' EXIT

# One secret for every process, so a cookie one of them signed (the upload form's XSRF token) is valid on all.
# Through the environment, not a flag: flags show in `ps`.
STREAMLIT_SERVER_COOKIE_SECRET="$("$python" -c 'import secrets; print(secrets.token_hex(32))')"
export STREAMLIT_SERVER_COOKIE_SECRET

sticky="" plain=""
for ((i = 1; i <= procs; i++)); do
    app_port=$((backend_port + i - 1))
    "$python" scripts/serve_app.py --server.headless true --server.address 127.0.0.1 \
        --server.port "$app_port" "$@" >"$run_dir/app$i.log" 2>&1 &
    echo $! >"$run_dir/app$i.pid"
    sticky+="    server app$i 127.0.0.1:$app_port check cookie app$i\n"
    plain+="    server app$i 127.0.0.1:$app_port check\n"
done
# Every process, at each `#@ servers` line of the config: sticky by cookie for sessions, plain for static files.
config="$run_dir/haproxy.cfg"
awk -v sticky="$sticky" -v plain="$plain" \
    '/#@ servers sticky/ { printf "%s", sticky; next } /#@ servers plain/ { printf "%s", plain; next } { print }' \
    deploy/haproxy.cfg >"$config"

# HAProxy starts once every process answers its health check (each imports the whole app first), so the
# port students open answers only when the app is warm.
for ((i = 1; i <= procs; i++)); do
    app_port=$((backend_port + i - 1))
    until "$python" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$app_port/_stcore/health', timeout=5)" 2>/dev/null; do
        if ! kill -0 "$(<"$run_dir/app$i.pid")" 2>/dev/null; then
            echo "serve.sh: process app$i exited; its log: $run_dir/app$i.log" >&2
            exit 1
        fi
        sleep 0.5
    done
done

export KVLAB_BIND="$bind" KVLAB_PORT="$port"
haproxy -c -q -f "$config"
haproxy -db -f "$config" >"$run_dir/haproxy.log" 2>&1 &
echo $! >"$run_dir/haproxy.pid"
echo "serve.sh: $procs Streamlit processes behind HAProxy at http://$bind:$port (logs in $run_dir; Ctrl-C stops)"

# Until Ctrl-C or `serve.sh stop`: the traps stop everything; if HAProxy dies, stop the processes too.
wait "$(<"$run_dir/haproxy.pid")"
