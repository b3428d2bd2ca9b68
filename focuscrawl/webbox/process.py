"""Running ``focuscrawl webbox serve`` as a child process (benchmarks, demo, tests), or
in the background for a user (``webbox serve --background``, ``webbox stop``)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from focuscrawl.errors import ConfigError, CorpusError
from focuscrawl.pids import alive

__all__ = ["background_server", "start_background", "start_server_process", "stop_background"]

PID_FILE = "webbox.pid"
LOG_FILE = "webbox.log"
PR_SET_PDEATHSIG = 1  # prctl(2)


def _serve_command(home: Path, corpus: str, *options: str) -> list[str]:
    """``focuscrawl webbox serve`` of ``corpus`` in ``home``, as a child process runs it."""
    command = [sys.executable, "-m", "focuscrawl", "--home", str(home), "webbox", "serve"]
    return [*command, "--corpus", corpus, *options]


def _proxy_of(ready: str) -> str:
    """The proxy URL in the server's first line ("serving NAME on URL (...)")."""
    return ready.split(" on ", 1)[1].split(" ", 1)[0]


def _die_with_parent(then: Callable[[], None] | None) -> Callable[[], None]:
    """What a child runs before it executes the server: on Linux, ask for SIGTERM when the
    thread that started it ends (an evaluation killed, not stopped, left its
    web-in-a-box serving), then ``then``. prctl is looked up here, in the parent: between
    fork and exec the child only calls it."""
    prctl = ctypes.CDLL(None).prctl if sys.platform.startswith("linux") else None

    def prepare() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if then is not None:
            then()

    return prepare


def start_server_process(
    home: Path,
    corpus: str,
    *options: str,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """Start a web-in-a-box on a free loopback port; return the process and its proxy URL.

    Stop it with ``terminate()`` (SIGTERM) and read its remaining output with
    ``communicate()``. It stops by itself when the thread that started it ends.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    process = subprocess.Popen(
        _serve_command(home, corpus, "--port", "0", *options),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_die_with_parent(preexec_fn),
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    if not first.startswith("serving"):
        _, err = process.communicate(timeout=10)
        raise CorpusError(f"the web-in-a-box did not start: {(err or first).strip()[-300:]}")
    return process, _proxy_of(first)


def _serving(pid: int) -> bool:
    """Whether ``pid`` is alive and (where /proc tells) a web-in-a-box, not a reused PID."""
    if not alive(pid):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        return b"webbox" in cmdline.read_bytes()
    except OSError:
        return not cmdline.parent.parent.is_dir()  # no /proc: trust the PID


def background_server(home: Path) -> tuple[int, str] | None:
    """(pid, proxy URL) of the web-in-a-box serving in the background, or None (a file
    left by one that died is removed)."""
    pidfile = home / PID_FILE
    try:
        pid_text, proxy = pidfile.read_text(encoding="utf-8").split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    if _serving(pid):
        return pid, proxy
    pidfile.unlink(missing_ok=True)
    return None


def start_background(
    home: Path, corpus: str, address: str, port: int, options: list[str], timeout: float = 60.0
) -> tuple[int, str]:
    """Start ``webbox serve`` detached from this terminal, its output in
    ``home/webbox.log``; (pid, proxy URL) once it listens."""
    running = background_server(home)
    if running is not None:
        raise ConfigError(
            f"a web-in-a-box already serves in the background (pid {running[0]}, "
            f"{running[1]}); stop it with: focuscrawl webbox stop"
        )
    home.mkdir(parents=True, exist_ok=True)
    log = home / LOG_FILE
    command = _serve_command(home, corpus, "--address", address, "--port", str(port), *options)
    with open(log, "w", encoding="utf-8") as out:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,  # a Ctrl-C in this terminal does not stop it
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        first = log.read_text(encoding="utf-8", errors="replace").partition("\n")[0]
        if first.startswith("serving"):
            proxy = _proxy_of(first)
            (home / PID_FILE).write_text(f"{process.pid} {proxy}\n", encoding="utf-8")
            return process.pid, proxy
        if process.poll() is not None:
            lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            raise CorpusError(
                f"the web-in-a-box did not start: {lines[-1] if lines else 'no output'}"
            )
        time.sleep(0.1)
    process.terminate()
    raise CorpusError(f"the web-in-a-box did not start within {timeout:.0f} s (see {log})")


def stop_background(home: Path, timeout: float = 10.0) -> int | None:
    """Stop the web-in-a-box serving in the background; its pid, or None if none ran."""
    running = background_server(home)
    if running is None:
        return None
    pid = running[0]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
    (home / PID_FILE).unlink(missing_ok=True)
    return pid
