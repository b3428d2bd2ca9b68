"""How the embedded server is sized to the machine it runs on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from focuscrawl.db import embedded
from focuscrawl.db.embedded import server_settings, shared_buffers_mb, usable_memory

GIB = 2**30


@pytest.mark.parametrize(
    ("memory", "expected_mb"),
    [
        (24 * GIB, 6144),  # a quarter of the machine
        (2 * GIB, 512),
        (256 * 2**20, 128),  # never below PostgreSQL's own default
        (256 * GIB, 8192),  # nor above 8 GB
        (None, 512),  # memory unknown
    ],
)
def test_shared_buffers_is_a_quarter_of_memory_within_bounds(
    memory: int | None, expected_mb: int
) -> None:
    assert shared_buffers_mb(memory) == expected_mb
    assert server_settings(memory)["shared_buffers"] == f"'{expected_mb}MB'"


def test_other_settings_do_not_depend_on_memory() -> None:
    small, large = server_settings(GIB), server_settings(64 * GIB)
    assert {k: v for k, v in small.items() if k != "shared_buffers"} == {
        k: v for k, v in large.items() if k != "shared_buffers"
    }
    assert small["listen_addresses"] == "''"  # Unix socket only, whatever the size


def test_a_container_limit_below_the_machine_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    monkeypatch.setattr(embedded, "_CGROUP_MEMORY_LIMITS", (v2, v1))
    assert usable_memory() == physical  # neither file: the machine's memory
    v2.write_text("max\n")
    assert usable_memory() == physical  # cgroup v2 without a limit
    v2.write_text(f"{2 * GIB}\n")
    assert usable_memory() == 2 * GIB
    v1.write_text(f"{physical * 4}\n")  # a v1 "limit" above the machine changes nothing
    assert usable_memory() == 2 * GIB
    v2.unlink()
    assert usable_memory() == physical
