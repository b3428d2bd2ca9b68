"""Helpers for acceptance tests (imported by name; pytest puts this folder on sys.path)."""

from __future__ import annotations

import shutil

from focuscrawl.embedded import _bin_dir


def psql_binary() -> str:
    """psql from the embedded PostgreSQL, else the one on PATH."""
    bundled = _bin_dir() / "psql"
    return str(bundled) if bundled.exists() else (shutil.which("psql") or "psql")
