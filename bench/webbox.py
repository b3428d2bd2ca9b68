"""Pages per second the web-in-a-box serves, and its memory on a 2,000,000-page web.

    python bench/webbox.py [--seconds 10] [--connections 32]

Starts ``focuscrawl webbox serve`` in a subprocess pinned to core 0 and drives it
from this process pinned to core 1 with a minimal asyncio HTTP/1.1 client (keep-alive,
proxy-form requests, many connections): the client must be faster than the server
for the number to mean anything. Measures the wikispeedia corpus (when
../shared/corpora is there) and synthetic webs of 100,000 and 2,000,000 pages; for
the latter it reports the server's peak RSS. Writes bench/results/webbox.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_results

from focuscrawl.webbox import load_corpus
from focuscrawl.webbox.process import start_server_process

REPO = Path(__file__).resolve().parents[1]


def _cli(home: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "focuscrawl", "--home", str(home), *args],
        check=True,
        capture_output=True,
        text=True,
    )


def _pin(core: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > core:
        os.sched_setaffinity(0, {core})


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _drive(
    port: int, urls: list[str], seconds: float, connections: int
) -> tuple[int, int, int]:
    done = errors = size = 0
    deadline = time.perf_counter() + seconds

    async def worker(offset: int) -> None:
        nonlocal done, errors, size
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        index = offset
        while time.perf_counter() < deadline:
            url = urls[index % len(urls)]
            index += connections
            host = url.split("/")[2]
            writer.write(f"GET {url} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = await reader.readexactly(length)
            size += len(body)
            if head.startswith(b"HTTP/1.1 200"):
                done += 1
            else:
                errors += 1
        writer.close()

    await asyncio.gather(*(worker(i) for i in range(connections)))
    return done, errors, size


def measure(home: Path, corpus: str, seconds: float, connections: int) -> dict[str, float]:
    web = load_corpus(corpus, home)
    urls = []
    for url in web.urls():
        urls.append(url)
        if len(urls) >= 20_000:
            break
    random.Random(1).shuffle(urls)
    server, proxy = start_server_process(home, corpus, "--no-faults", preexec_fn=lambda: _pin(0))
    try:
        port = int(proxy.rsplit(":", 1)[1])
        _pin(1)
        asyncio.run(_drive(port, urls, 1.0, connections))  # warm-up
        start = time.perf_counter()
        done, errors, size = asyncio.run(_drive(port, urls, seconds, connections))
        elapsed = time.perf_counter() - start
        rss = _peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.communicate(timeout=10)
    return {
        "pages_per_s": round(done / elapsed),
        "errors": errors,
        "mean_page_bytes": round(size / max(done, 1)),
        "server_peak_rss_mb": round(rss, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="focuscrawl-bench-webbox-") as tmp:
        home = Path(tmp)
        archive = REPO.parent / "shared" / "corpora" / "wikispeedia.tar.gz"
        if archive.exists():
            _cli(home, "webbox", "import-wikispeedia", "--archive", str(archive))
            results["wikispeedia"] = measure(home, "wikispeedia", args.seconds, args.connections)
        for pages in (100_000, 2_000_000):
            name = f"synthetic-{pages}"
            _cli(
                home,
                "webbox",
                "generate",
                "--pages",
                str(pages),
                "--hosts",
                str(pages // 100),
                "--name",
                name,
            )
            results[name] = measure(home, name, args.seconds, args.connections)
    print(f"{'corpus':<22}{'pages/s':>10}{'errors':>8}{'bytes/page':>12}{'peak RSS MB':>13}")
    for name, r in results.items():
        print(
            f"{name:<22}{r['pages_per_s']:>10,}{r['errors']:>8}{r['mean_page_bytes']:>12,}"
            f"{r['server_peak_rss_mb']:>13}"
        )
    print(
        "server pinned to one core, client to the other; "
        f"{args.connections} keep-alive connections, {args.seconds:g} s each"
    )
    print(f"wrote {write_results('webbox', {'connections': args.connections, 'results': results})}")


if __name__ == "__main__":
    main()
