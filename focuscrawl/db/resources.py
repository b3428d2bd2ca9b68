"""Where the files that ship beside the code live: ``sql/`` and ``migrations/``.

In a checkout (and an editable install) they sit at the top of the repository;
in a wheel they are copied into the package. Both are looked for, package first.
"""

from __future__ import annotations

from pathlib import Path

from focuscrawl.errors import FocuscrawlError

__all__ = ["resource_dir"]

_PACKAGE = Path(__file__).resolve().parents[1]  # focuscrawl/


def resource_dir(name: str) -> Path:
    """Return the directory ``name`` (``"sql"`` or ``"migrations"``)."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FocuscrawlError(f"focuscrawl is installed without its {name}/ directory; reinstall it")
