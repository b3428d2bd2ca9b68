"""Fixtures shared by every test layer.

One real PostgreSQL serves the whole session: the embedded server in a temp dir
(or the superuser URL in ``FOCUSCRAWL_TEST_ADMIN_URL``). A template database is
migrated to head once; each test that asks for ``db_url`` gets a fresh copy of it
(``CREATE DATABASE ... TEMPLATE``), dropped afterwards.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg2
import pytest
from psycopg2 import sql
from sqlalchemy.engine import Engine, make_url

from focuscrawl.db.database import make_engine
from focuscrawl.db.embedded import EmbeddedServer
from focuscrawl.db.migrate import upgrade
from focuscrawl.web.corpus import StaticCorpus, read_meta
from focuscrawl.webbox import WebBox, WebBoxThread

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
TEMPLATE = "focuscrawl_test_template"
_counter = itertools.count()


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``scripts/test``'s workers (pytest-xdist), the ``test_citus_*`` and
    ``test_debian_*`` modules all run in one worker, one after another: they share fixed
    resources (a Citus cluster's ports, the subnet of the network namespaces, the builds of
    Citus and of Debian's PostgreSQL); every other test goes
    to whichever worker is free. (xdist's own ``--dist loadgroup`` did not group them
    under pytest 9: each test went its own way.)"""
    from xdist.scheduler import LoadScopeScheduling

    class CitusInOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0].rpartition("/")[2]
            return "citus" if module.startswith(("test_citus_", "test_debian_")) else nodeid

    return CitusInOneWorker(config, log)


def _admin(url: str, statement: sql.Composable) -> None:
    connection = psycopg2.connect(url)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(statement)
    finally:
        connection.close()


def _database_url(admin_url: str, name: str) -> str:
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def admin_url() -> Iterator[str]:
    """A superuser URL on the session's PostgreSQL (its ``postgres`` database)."""
    external = os.environ.get("FOCUSCRAWL_TEST_ADMIN_URL")
    if external:
        yield external
        return
    # Not under pytest's basetemp: a second pytest session started meanwhile (another
    # terminal) prunes old basetemp directories, and would delete the running server's data.
    with tempfile.TemporaryDirectory(prefix="focuscrawl-test-pg-") as home:
        server = EmbeddedServer(Path(home))
        server.up()
        try:
            yield server.url("postgres")
        finally:
            server.down()


@pytest.fixture(scope="session")
def template_url(admin_url: str) -> str:
    """A database migrated to head, the template of every test database."""
    _admin(
        admin_url,
        sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(TEMPLATE)),
    )
    _admin(admin_url, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
    url = _database_url(admin_url, TEMPLATE)
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def _fresh_database(admin_url: str, template: str | None) -> Iterator[str]:
    name = f"focuscrawl_test_{os.getpid()}_{next(_counter)}"
    create = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template:
        create = sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
            sql.Identifier(name), sql.Identifier(template)
        )
    _admin(admin_url, create)
    try:
        yield _database_url(admin_url, name)
    finally:
        _admin(
            admin_url,
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)),
        )


@pytest.fixture
def db_url(admin_url: str, template_url: str) -> Iterator[str]:
    """A fresh database at the migrations' head."""
    yield from _fresh_database(admin_url, TEMPLATE)


@pytest.fixture
def empty_db_url(admin_url: str) -> Iterator[str]:
    """A fresh database with no schema at all."""
    yield from _fresh_database(admin_url, None)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """``../shared/corpora``: skipped when absent, a failure when ``CI=true``."""
    if not (CORPORA / "wikispeedia.tar.gz").exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the corpora are missing: {CORPORA}")
        pytest.skip(f"no corpora at {CORPORA}")
    return CORPORA


@pytest.fixture(scope="session")
def wikispeedia_home(corpora_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A FOCUSCRAWL_HOME whose wikispeedia corpus was built by the CLI from the real archive."""
    home = tmp_path_factory.mktemp("wikispeedia-home")
    archive = corpora_dir / "wikispeedia.tar.gz"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "focuscrawl",
            "--home",
            str(home),
            "webbox",
            "import-wikispeedia",
            "--archive",
            str(archive),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "4,604 pages, 119,882 links, 18 hosts" in done.stdout
    return home


@pytest.fixture(scope="module")
def topics_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made topic web of tests/classifier/topics.py, written once per module."""
    from tests.classifier.topics import write_corpus

    return write_corpus(tmp_path_factory.mktemp("topics"))


@pytest.fixture(scope="module")
def topics_web(topics_dir: Path) -> Iterator[WebBoxThread]:
    """The topic web served by a web-in-a-box."""
    corpus = StaticCorpus.load(topics_dir, read_meta(topics_dir))
    with WebBoxThread(WebBox(corpus, faults=False)) as running:
        yield running
