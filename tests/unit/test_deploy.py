"""Operations files: systemd units and the compose file are valid."""

from __future__ import annotations

import shutil
import subprocess
from itertools import pairwise
from pathlib import Path

import pytest

from focuscrawl.db.embedded import server_settings

REPO = Path(__file__).resolve().parents[2]
UNITS = sorted(
    p for p in (REPO / "deploy" / "systemd").iterdir() if p.suffix in {".service", ".timer"}
)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
@pytest.mark.parametrize("unit", UNITS, ids=[u.name for u in UNITS])
def test_systemd_unit_verifies(unit: Path, tmp_path: Path) -> None:
    name = unit.name.replace("@.", "@1.")  # a template is verified as an instance
    copy = tmp_path / name
    copy.write_text(unit.read_text())
    done = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Unknown key" not in done.stderr and "Unknown section" not in done.stderr, done.stderr


def test_there_is_a_crawler_unit_and_an_environment_example() -> None:
    names = {u.name for u in UNITS}
    assert {
        "focuscrawl-crawler@.service",
        "focuscrawl-classifier.service",
        "focuscrawl-distiller.service",
        "focuscrawl-distiller.timer",
    } <= names
    env = (REPO / "deploy" / "systemd" / "focuscrawl.env.example").read_text()
    for unit in UNITS:
        for variable in ("FOCUSCRAWL_CRAWL_MODE",):
            if variable in unit.read_text():
                assert variable in env


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose not installed")
def test_compose_file_validates() -> None:
    done = subprocess.run(
        ["docker-compose", "-f", str(REPO / "docker" / "compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_compose_postgres_has_the_embedded_servers_crawl_settings() -> None:
    """The PostgreSQL of docker/compose.yaml is tuned as the embedded server is; only
    what differs in a container (shared_buffers from the environment, TCP, logging)
    may differ."""
    lines = (REPO / "docker" / "compose.yaml").read_text().splitlines()
    given = dict(
        line.strip().removeprefix("- ").split("=", 1)
        for before, line in pairwise(lines)
        if before.strip() == "- -c"
    )
    assert given.pop("shared_buffers") == "${FOCUSCRAWL_PG_SHARED_BUFFERS:-1GB}"
    container = {"shared_buffers", "listen_addresses", "logging_collector"}
    expected = {
        name: value.strip("'")
        for name, value in server_settings(None).items()
        if name not in container
    }
    assert given == expected
