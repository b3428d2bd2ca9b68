"""The embedded server the tests run on is configured as a user's would be."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg2
import pytest

from focuscrawl.db.embedded import EmbeddedServer, shared_buffers_mb, usable_memory


@pytest.mark.skipif(
    bool(os.environ.get("FOCUSCRAWL_TEST_ADMIN_URL")), reason="tests run on an external server"
)
def test_embedded_server_sizes_shared_buffers_to_the_machine(admin_url: str) -> None:
    connection = psycopg2.connect(admin_url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_size_bytes(current_setting('shared_buffers')) / 1048576")
            (megabytes,) = cursor.fetchone()
    finally:
        connection.close()
    assert megabytes == shared_buffers_mb(usable_memory())


def _shared_buffers_mb(url: str) -> int:
    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_size_bytes(current_setting('shared_buffers')) / 1048576")
            (megabytes,) = cursor.fetchone()
    finally:
        connection.close()
    return int(megabytes)


def test_shared_buffers_setting_overrides_the_cluster_at_each_start(tmp_path: Path) -> None:
    home = tmp_path / "pg"
    server = EmbeddedServer(home, shared_buffers="128MB")
    try:
        assert _shared_buffers_mb(server.up().url or "") == 128
        server.down()
        assert _shared_buffers_mb(EmbeddedServer(home, "160MB").up().url or "") == 160
        server.down()
        # without the setting, the size the cluster was created with
        computed = shared_buffers_mb(usable_memory())
        assert _shared_buffers_mb(EmbeddedServer(home).up().url or "") == computed
    finally:
        server.down()
