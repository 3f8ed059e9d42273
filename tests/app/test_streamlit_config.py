"""The hosted app's .streamlit/config.toml, read as Streamlit reads it: no secrets file, so no poller on one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".streamlit" / "config.toml"

#: Run in a fresh interpreter inside a project folder: Streamlit parses that folder's .streamlit/config.toml, then
#: st.secrets looks for its files; every poll watcher started on the way is recorded. Prints JSON.
PROBE = """
import json
from streamlit import config
from streamlit.runtime.secrets import Secrets
from streamlit.watcher import polling_path_watcher

watched = []
polling_path_watcher.PollingPathWatcher.__init__ = lambda self, path, *args, **kwargs: watched.append(str(path))
config.get_config_options(force_reparse=True)
loaded = Secrets().load_if_toml_exists()
print(json.dumps({"files": config.get_option("secrets.files"), "loaded": loaded, "watched": watched}))
"""


def probe(project: Path, config_text: str) -> dict:
    """What Streamlit makes of `config_text` in `project`, which also holds a secrets.toml (as a host could add)."""
    (project / ".streamlit").mkdir(parents=True, exist_ok=True)
    (project / ".streamlit" / "config.toml").write_text(config_text)
    (project / ".streamlit" / "secrets.toml").write_text('token = "not-a-secret"\n')
    env = {**os.environ, "HOME": str(project)}  # ~/.streamlit/ is looked at too: keep it inside the test's folder
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=project, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_config_names_no_secrets_file():
    assert tomllib.loads(CONFIG.read_text())["secrets"]["files"] == []


def test_with_the_apps_config_streamlit_reads_no_secrets_file_and_polls_none(tmp_path):
    seen = probe(tmp_path, CONFIG.read_text())
    assert seen["files"] == [] and seen["loaded"] is False
    assert not [path for path in seen["watched"] if path.endswith("secrets.toml")]


def test_without_that_line_streamlit_would_poll_the_secrets_file_it_found(tmp_path):
    # The control: the same config without [secrets] files = [] reads the secrets.toml and polls it.
    config = tomllib.loads(CONFIG.read_text())
    without = "\n".join(line for line in CONFIG.read_text().splitlines() if line.strip() != "files = []")
    assert "secrets" in config and "files = []" not in without
    seen = probe(tmp_path, without)
    assert seen["loaded"] is True
    assert str(tmp_path / ".streamlit" / "secrets.toml") in seen["watched"]


def test_the_cache_data_budget_is_a_size_streamlit_accepts():
    # Streamlit reads it once at start (runtime/caching/global_cache_budget.py); a typo would stop the server.
    from streamlit.byte_util import config_max_cache_data_size_to_bytes

    value = tomllib.loads(CONFIG.read_text())["server"]["maxCacheDataSize"]
    assert config_max_cache_data_size_to_bytes(value) == 64 * 1024**2
