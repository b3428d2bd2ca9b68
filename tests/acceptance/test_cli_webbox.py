"""The web-in-a-box from the command line."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from focuscrawl.pids import alive
from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import write_corpus


def test_urls_sample_of_a_category_is_served(cli, wikispeedia_home: Path) -> None:  # type: ignore[no-untyped-def]
    args = ("webbox", "urls", "--corpus", "wikispeedia", "--category", "subject.Science.Biology")
    sample = cli(
        *args, "--sample", "10", "--seed", "1", env={"FOCUSCRAWL_HOME": str(wikispeedia_home)}
    )
    assert sample.returncode == 0, sample.stderr
    urls = sample.stdout.split()
    assert len(urls) == 10 and len(set(urls)) == 10
    again = cli(
        *args, "--sample", "10", "--seed", "1", env={"FOCUSCRAWL_HOME": str(wikispeedia_home)}
    )
    assert again.stdout.split() == urls
    everything = cli(*args, env={"FOCUSCRAWL_HOME": str(wikispeedia_home)}).stdout.split()
    assert set(urls) <= set(everything) and len(everything) > 500

    process, proxy = start_server_process(wikispeedia_home, "wikispeedia")
    try:
        with httpx.Client(proxy=proxy) as http:
            for url in urls:
                page = http.get(url)
                assert page.status_code == 200 and "<a href" in page.text
                assert "Related subjects" not in page.text
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert "stopped" in out


def test_unknown_category_and_missing_corpus_are_one_line_errors(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = cli("webbox", "urls", "--corpus", "wikispeedia")
    assert missing.returncode == 2 and "import-wikispeedia" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    bad_archive = cli("webbox", "import-wikispeedia", "--archive", str(tmp_path / "nope.tar.gz"))
    assert bad_archive.returncode == 2 and "no archive at" in bad_archive.stderr
    # a thinned import: wrong shares, or a name that would replace wikispeedia or leave
    # the corpora directory, are refused before anything is read or written
    for args, said in (
        (["--dead-share", "0.3"], "needs a --name of its own"),
        (["--name", "w", "--dead-share", "0.8", "--offsite-share", "0.5"], "sum to at most 1"),
        (["--name", "w", "--unlinked-share", "-0.1"], "must each lie in [0, 1]"),
        (["--name", "../w", "--dead-share", "0.3"], "one plain path segment"),
    ):
        refused = cli("webbox", "import-wikispeedia", *args)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "home" / "corpora").exists()


def test_generate_then_serve_a_synthetic_web(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    made = cli("webbox", "generate", "--pages", "5000", "--hosts", "50", "--seed", "3")
    assert made.returncode == 0, made.stderr
    sample = cli(
        "webbox", "urls", "--corpus", "synthetic", "--sample", "3", "--seed", "2"
    ).stdout.split()
    biology = cli(
        "webbox", "urls", "--corpus", "synthetic", "--category", "subject.Science.Biology"
    )
    assert len(sample) == 3 and len(biology.stdout.split()) > 100
    process, proxy = start_server_process(tmp_path / "home", "synthetic")
    try:
        with httpx.Client(proxy=proxy) as http:
            assert all(http.get(url).status_code == 200 for url in sample)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert process.returncode == 0
    refused = cli("webbox", "generate", "--pages", "0")
    assert refused.returncode == 2 and "at least 1 page" in refused.stderr


def test_serve_refuses_a_non_loopback_address(cli, wikispeedia_home: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "webbox", "serve", "--address", "0.0.0.0", env={"FOCUSCRAWL_HOME": str(wikispeedia_home)}
    )
    assert result.returncode == 2 and "loopback only" in result.stderr
    for port in ("99999", "-1"):  # a port bind() cannot take was a traceback
        bad = cli("webbox", "serve", "--port", port, env={"FOCUSCRAWL_HOME": str(wikispeedia_home)})
        assert bad.returncode == 2 and "not a TCP port" in bad.stderr, bad.stderr
        assert len(bad.stderr.splitlines()) == 1


def test_a_web_in_a_box_stops_when_the_process_that_started_it_is_killed(
    tmp_path: Path,
) -> None:
    """An evaluation killed (SIGKILL, not stopped) used to leave its web-in-a-box serving."""
    corpus = write_corpus(tmp_path / "web")
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from focuscrawl.webbox.process import start_server_process\n"
            "server, _ = start_server_process(Path(sys.argv[1]), sys.argv[2], '--no-faults')\n"
            "print(server.pid, flush=True)\n"
            "time.sleep(120)\n",
            str(tmp_path / "home"),
            str(corpus),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    with parent, parent.stdout:
        server = int(parent.stdout.readline())
        assert alive(server)
        parent.kill()
    deadline = time.monotonic() + 10
    while _serving(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _serving(server), "the web-in-a-box outlived the process that started it"


def _serving(pid: int) -> bool:
    """Alive and not a zombie waiting for a parent that does not reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return alive(pid)
    return state != "Z"
