"""The embedded server the tests run on is configured as a user's would be."""

from __future__ import annotations

import os

import psycopg2
import pytest

from focuscrawl.embedded import shared_buffers_mb, usable_memory


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
