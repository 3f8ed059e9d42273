"""scripts/serve.sh finds its Python from a checkout, a git worktree without .venv, or KVLAB_PYTHON (dry runs only)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("scripts/serve.sh", "scripts/lib.sh")


def serve_sh(checkout: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`bash scripts/serve.sh ARGS` in `checkout`, from a folder outside it (as a user in another shell would be)."""
    return subprocess.run(
        ["bash", str(checkout / "scripts" / "serve.sh"), *args],
        cwd=checkout.parent,
        env={**{k: v for k, v in os.environ.items() if k != "KVLAB_PYTHON"}, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def found_python(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0].removeprefix("serve.sh: python ")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture
def worktree(tmp_path) -> tuple[Path, Path]:
    """(main checkout with a .venv, a git worktree of it without one): a scratch repository holding serve.sh."""
    main = tmp_path / "main"
    (main / "scripts").mkdir(parents=True)
    for script in SCRIPTS:
        shutil.copy(ROOT / script, main / script)
    git("init", "-q", cwd=main)
    git("add", *SCRIPTS, cwd=main)
    git("commit", "-q", "-m", "serve.sh", cwd=main)
    (main / ".venv" / "bin").mkdir(parents=True)
    (main / ".venv" / "bin" / "python").symlink_to(sys.executable)  # untracked, as a real .venv is
    git("worktree", "add", "-q", str(tmp_path / "feature"), cwd=main)
    return main, tmp_path / "feature"


def test_help_prints_the_usage_and_starts_nothing():
    done = serve_sh(ROOT, "--help")
    assert done.returncode == 0
    assert "scripts/serve.sh [--procs N]" in done.stdout and "--dry-run" in done.stdout


def test_a_dry_run_in_the_checkout_uses_its_own_venv_and_lists_every_process():
    done = serve_sh(ROOT, "--dry-run", "--no-install", "--procs", "3", "--port", "8700")
    assert found_python(done) == str(ROOT / ".venv" / "bin" / "python")
    ports = [line.split("--server.port ")[1].split()[0] for line in done.stdout.splitlines() if "serve_app.py" in line]
    assert ports == ["8701", "8702", "8703"]
    assert not (ROOT / ".tmp" / "serve" / "8700").exists()  # a dry run writes no PID files


def test_a_worktree_without_a_venv_uses_the_main_checkouts(worktree):
    main, feature = worktree
    assert not (feature / ".venv").exists()
    done = serve_sh(feature, "--dry-run", "--no-install")
    assert found_python(done) == str(main / ".venv" / "bin" / "python")
    assert f"{main / '.venv' / 'bin' / 'python'} scripts/serve_app.py" in done.stdout


def test_kvlab_python_wins_over_any_venv(worktree):
    _main, feature = worktree
    done = serve_sh(feature, "--dry-run", "--no-install", env={"KVLAB_PYTHON": sys.executable})
    assert found_python(done) == sys.executable


def test_without_any_python_and_no_install_it_says_so_instead_of_failing_later(tmp_path):
    lonely = tmp_path / "copy"  # a copy of the scripts outside any git checkout, no .venv anywhere
    (lonely / "scripts").mkdir(parents=True)
    for script in SCRIPTS:
        shutil.copy(ROOT / script, lonely / script)
    # GIT_CEILING_DIRECTORIES: git must not find a checkout above tmp_path (scripts/test.sh puts TMPDIR inside ours).
    done = serve_sh(
        lonely, "--no-install", "--procs", "1", "--port", "8700", env={"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    )
    assert done.returncode == 1
    assert "no Python found" in done.stderr
    assert not (lonely / ".tmp").exists()
