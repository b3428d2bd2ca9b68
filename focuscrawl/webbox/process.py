"""Running ``focuscrawl webbox serve`` as a child process (benchmarks, demo, tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from focuscrawl.errors import CorpusError

__all__ = ["start_server_process"]


def start_server_process(
    home: Path,
    corpus: str,
    *options: str,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """Start a web-in-a-box on a free loopback port; return the process and its proxy URL.

    Stop it with ``terminate()`` (SIGTERM) and read its remaining output with
    ``communicate()``.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    command = [sys.executable, "-m", "focuscrawl", "--home", str(home), "webbox", "serve"]
    process = subprocess.Popen(
        [*command, "--corpus", corpus, "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=preexec_fn,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    if not first.startswith("serving"):
        _, err = process.communicate(timeout=10)
        raise CorpusError(f"the web-in-a-box did not start: {(err or first).strip()[-300:]}")
    return process, first.split(" on ", 1)[1].split(" ", 1)[0]
