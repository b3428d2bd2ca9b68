from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(tmp_path: Path) -> Run:
    """Run ``focuscrawl ARGS...`` as a user would, in a subprocess, with its own home."""

    def run(
        *args: str,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
        environment["FOCUSCRAWL_HOME"] = str(tmp_path / "home")
        environment.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "focuscrawl", *args],
            env=environment,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
