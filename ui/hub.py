"""Fetch a model's config.json from the Hugging Face Hub, only when the user asks for it.

The app needs no network otherwise. A machine without internet, a gated or missing
repository, or a malformed id gives a ``HubError`` whose ``code`` the page
translates (and the paste/upload route stays open):

* ``bad_id`` — not an ``owner/name`` repository id;
* ``offline`` — the Hub cannot be reached (no network, DNS failure, ``HF_HUB_OFFLINE=1``);
* ``gated`` — the repository needs an accepted licence and a token (Llama, Gemma…);
* ``not_found`` — no such repository, or it has no config.json;
* ``too_large`` — the file is larger than ``MAX_CONFIG_BYTES``;
* ``failed`` — anything else the Hub answered (the detail says what).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import streamlit as st

HUB_HOST = "huggingface.co"
#: A config.json is a few kB; the page's upload limit is 1 MB too (.streamlit/config.toml).
MAX_CONFIG_BYTES = 1_000_000
CONNECT_TIMEOUT_S = 3.0


class HubError(Exception):
    """The Hub could not give the config; ``code`` says why (see the module docstring)."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(detail or code)
        self.code = code
        self.detail = detail


def fetch_config_text(repo_id: str) -> str:
    """The text of ``<repo_id>/config.json`` on the Hub (cached for an hour per id)."""
    repo_id = repo_id.strip()
    _check_id(repo_id)
    return _fetch(repo_id)


@st.cache_data(ttl=3600, show_spinner=False, max_entries=64)
def _fetch(repo_id: str) -> str:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on") or not hub_reachable():
        raise HubError("offline")
    from huggingface_hub import errors, hf_hub_download

    try:
        path = hf_hub_download(repo_id, "config.json", etag_timeout=10)
    except errors.GatedRepoError as error:
        raise HubError("gated", _first_line(error)) from None
    except (errors.RepositoryNotFoundError, errors.EntryNotFoundError, errors.RevisionNotFoundError) as error:
        if isinstance(error, errors.LocalEntryNotFoundError):
            raise HubError("offline", _first_line(error)) from None
        raise HubError("not_found", _first_line(error)) from None
    except errors.OfflineModeIsEnabled:
        raise HubError("offline") from None
    except (errors.HfHubHTTPError, OSError, ValueError) as error:
        raise HubError("failed", _first_line(error)) from None
    file = Path(path)
    if file.stat().st_size > MAX_CONFIG_BYTES:
        raise HubError("too_large")
    return file.read_text(encoding="utf-8", errors="replace")


def hub_reachable() -> bool:
    """True if a TCP connection to the Hub opens within a few seconds (fails at once without DNS)."""
    try:
        with socket.create_connection((HUB_HOST, 443), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


def _check_id(repo_id: str) -> None:
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    if repo_id.count("/") != 1:
        raise HubError("bad_id")
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        raise HubError("bad_id") from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
