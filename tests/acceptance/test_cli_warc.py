"""``crawl run --warc``: every exchange as WARC records that warcio reads back, bodies
byte-identical to what the server sent, revisits as revisit records, files rotated."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.crawler.warc import Exchange, WarcFiles
from focuscrawl.errors import ConfigError
from focuscrawl.web.corpus import StaticCorpus, read_meta
from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import page_url, write_corpus

#: PREFIX-TIMESTAMP17-SERIAL-PID~HOST~PORT.warc.gz, as Heritrix names its files
HERITRIX = re.compile(r"^FOCUSCRAWL-\d{17}-\d{5}-\d+~[^~]+~0\.warc\.gz$")


def _warcio(*args: str) -> subprocess.CompletedProcess[str]:
    warcio = shutil.which("warcio", path=os.path.dirname(sys.executable)) or "warcio"
    return subprocess.run([warcio, *args], capture_output=True, text=True, timeout=60)


def _records(path: Path) -> list[tuple[str, str, int | None, bytes]]:
    """(type, target URI, HTTP status, raw payload) of every record of a file."""
    out = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            answer = record.rec_type in ("response", "revisit")
            status = record.http_headers.get_statuscode() if answer else None
            uri = record.rec_headers.get_header("WARC-Target-URI") or ""
            out.append((record.rec_type, uri, status and int(status), record.raw_stream.read()))
    return out


def test_crawl_writes_warc_that_reads_back_byte_identical(
    cli, db_url: str, engine: sa.Engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    corpus_dir = write_corpus(tmp_path / "web")
    corpus = StaticCorpus.load(corpus_dir, read_meta(corpus_dir))
    warc = tmp_path / "warc"
    process, proxy = start_server_process(tmp_path, str(corpus_dir), "--no-faults")
    try:
        seeds = [page_url("topics.sports.cycling", 1), page_url("topics.science.biology", 1)]
        assert cli("seed", "add", *seeds, env=env).returncode == 0
        crawl = ("crawl", "run", "--mode", "bfs", "--proxy", proxy, "--host-delay", "0",
                 "--idle-exit", "1", "--quiet", "--warc", str(warc))  # fmt: skip
        first = cli(*crawl, "--max-pages", "40", env=env)
        assert first.returncode == 0, first.stderr
        # nothing is left unfetched on the hosts? revisit some: conditional, 304
        again = cli(*crawl, "--max-pages", "10", "--revisit-after", "0", "--revisit-share", "1",
                    env=env)  # fmt: skip
        assert again.returncode == 0, again.stderr
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)

    files = sorted(warc.iterdir())
    assert len(files) == 2 and all(HERITRIX.match(f.name) for f in files), files
    records = []
    for path in files:
        checked = _warcio("check", "-v", str(path))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        index = _warcio("index", str(path))
        assert index.returncode == 0 and index.stdout.count("\n") == len(_records(path))
        records += _records(path)
    with engine.connect() as c:
        pages = (
            c.exec_driver_sql(
                "SELECT d.url FROM doc AS d JOIN doc_fetch AS f USING (oid) "
                "WHERE f.http_status = 200"
            )
            .scalars()
            .all()
        )
        revisited = c.exec_driver_sql(
            "SELECT count(*) FROM doc_fetch WHERE fetch_seq > 40"
        ).scalar_one()
    responses = {uri: body for kind, uri, status, body in records if kind == "response"}
    # every page stored is a response record, its body the very bytes the server sent
    assert set(pages) <= set(responses)
    for url in pages:
        page = corpus.page(url)
        assert page is not None and responses[url] == page.body
    robots = [uri for uri in responses if uri.endswith("/robots.txt")]
    assert robots  # robots.txt is fetched, so it is recorded
    kinds = [kind for kind, *_ in records]
    assert kinds.count("warcinfo") == 2
    assert kinds.count("request") == kinds.count("response") + kinds.count("revisit")
    revisits = [(uri, status) for kind, uri, status, _ in records if kind == "revisit"]
    assert revisited > 0 and len(revisits) >= revisited
    assert all(status == 304 for _, status in revisits)


def test_warc_files_rotate_and_refuse_a_directory_they_cannot_write(tmp_path: Path) -> None:
    files = WarcFiles(tmp_path / "out", max_bytes=1_000_000)
    body = os.urandom(300_000)  # random bytes do not compress: four fill a file
    for n in range(10):
        files.record(
            Exchange(
                f"http://a.example/{n}",
                [(b"Host", b"a.example")],
                "HTTP/1.1",
                200,
                "OK",
                [(b"Content-Type", b"application/octet-stream")],
                body,
            )
        )
    assert any(p.name.endswith(".open") for p in (tmp_path / "out").iterdir())
    files.close()
    written = sorted((tmp_path / "out").iterdir())
    assert len(written) == 3 and all(HERITRIX.match(p.name) for p in written)
    bodies = [b for p in written for kind, _, _, b in _records(p) if kind == "response"]
    assert bodies == [body] * 10

    blocked = tmp_path / "blocked"
    blocked.mkdir()
    blocked.chmod(0o500)
    try:
        if not os.access(blocked, os.W_OK):  # root writes anywhere: then /proc below
            with pytest.raises(ConfigError, match="not a directory this user can write to"):
                WarcFiles(blocked)
    finally:
        blocked.chmod(0o700)
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(ConfigError, match="--warc"):
        WarcFiles(tmp_path / "a-file")
    with pytest.raises(ConfigError, match="--warc /proc/forbidden"):
        WarcFiles(Path("/proc/forbidden"))


def test_crawl_run_with_an_unwritable_warc_directory_stores_nothing(
    cli, db_url: str, engine: sa.Engine
) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    assert cli("seed", "add", page_url("topics.sports.cycling", 1), env=env).returncode == 0
    bad = cli("crawl", "run", "--warc", "/proc/forbidden", "--max-pages", "1", env=env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "--warc /proc/forbidden" in bad.stderr
    with engine.connect() as c:
        assert c.exec_driver_sql("SELECT count(*) FROM doc_fetch").scalar_one() == 0


def test_the_next_crawl_closes_the_warc_file_a_killed_crawler_left_open(tmp_path: Path) -> None:
    """A crawler killed with -9 leaves its file ``.open``; the next writer into the
    directory closes it (cut after its last whole record, as a kill mid-record leaves
    half a one) and leaves a live writer's file alone."""
    out = tmp_path / "out"
    writer = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from focuscrawl.crawler.warc import Exchange, WarcFiles\n"
        "files = WarcFiles(Path(sys.argv[1]))\n"
        "for n in range(3):\n"
        "    files.record(Exchange(f'http://a.example/{n}', [(b'Host', b'a.example')],\n"
        "        'HTTP/1.1', 200, 'OK', [(b'Content-Type', b'text/plain')], b'body %d' % n))\n"
        "files._stream.flush()\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", writer, str(out)], timeout=60)
    assert killed.returncode == -signal.SIGKILL
    (left,) = out.iterdir()
    assert left.name.endswith(".warc.gz.open")
    with left.open("ab") as stream:  # half a record, as a kill in mid-write leaves
        stream.write(b"\x1f\x8b\x08\x00" + os.urandom(40))
    live = out / left.name.replace(f"-{left.name.split('-')[3].split('~')[0]}~", f"-{os.getpid()}~")
    shutil.copy(left, live)  # the same, by a live process (this one): not touched

    files = WarcFiles(out)
    files.close()
    closed = out / left.name.removesuffix(".open")
    assert files.closed_orphans == [closed] and not left.exists() and live.exists()
    assert HERITRIX.match(closed.name)
    records = _records(closed)
    assert [kind for kind, *_ in records] == ["warcinfo"] + ["response", "request"] * 3
    assert [body for kind, _, _, body in records if kind == "response"][-1].endswith(b"body 2")
    assert _warcio("check", str(closed)).returncode == 0
