from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


def user_environment(home: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment focuscrawl gets from a user's shell: none of this one's
    FOCUSCRAWL_ settings, its own home, then ``env``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    environment["FOCUSCRAWL_HOME"] = str(home)
    environment.update(env or {})
    return environment


@pytest.fixture
def cli(tmp_path: Path) -> Run:
    """Run ``focuscrawl ARGS...`` as a user would, in a subprocess, with its own home."""

    def run(
        *args: str,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "focuscrawl", *args],
            env=user_environment(tmp_path / "home", env),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
