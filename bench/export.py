"""Export memory: ``focuscrawl export`` of crawls of growing size, in bounded memory.

    python bench/export.py [--rows 100000,1000000,10000000] [--format jsonl]

Fills a throw-away embedded PostgreSQL (or --database-url) with fetched pages (a URL,
a title, a relevance, a status, a fetch time) up to each size in turn, then runs
``focuscrawl export --what fetched`` as a process of its own and reads its peak
resident memory (``wait4``), its time and the file's size. Bounded memory means the
peak does not grow with the rows. Writes bench/results/export.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import scratch_engine, write_results

GROW = """
INSERT INTO site (host, bucket)
SELECT h, host_bucket(h)
FROM generate_series(1, 1000) g, LATERAL (SELECT 'h' || g || '.example') t(h)
ON CONFLICT DO NOTHING;
INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, priority, state)
SELECT url_oid(u), oid_bucket(url_oid(u)), false, p, 1 + g %% 1000, url_bytehash(u),
       -random() * 20, 0, 2
FROM generate_series(%(first)s, %(last)s) g,
     LATERAL (SELECT '/page/' || g) AS t(p),
     LATERAL (SELECT doc_url(false, 'h' || (1 + g %% 1000) || '.example', p)) AS v(u);
INSERT INTO doc_fetch (oid, bucket, fetch_seq, fetched_at, http_status, content_type, title)
SELECT o, oid_bucket(o), g,
       now(), 200, 'text/html', 'Page number ' || g || ' of a benchmark crawl'
FROM generate_series(%(first)s, %(last)s) g,
     LATERAL (SELECT url_oid(doc_url(false, 'h' || (1 + g %% 1000) || '.example',
                                     '/page/' || g))) AS t(o);
VACUUM ANALYZE doc, doc_fetch;
"""


def _export(url: str, out: Path, fmt: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "focuscrawl", "--database-url", url, "export",
               "--what", "fetched", "--format", fmt, "--out", str(out)]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    assert process.stderr is not None
    said = process.stderr.read().decode().strip()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"export failed: {said}")
    return {
        "seconds": round(seconds, 1),
        "rows_per_s": None,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: kilobytes
        "file_mb": round(out.stat().st_size / 2**20, 1),
        "said": said,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000,10000000")
    parser.add_argument("--format", default="jsonl", choices=("jsonl", "csv"))
    parser.add_argument("--database-url")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.rows.split(","))
    results: dict[str, Any] = {"format": args.format, "sizes": {}}
    with scratch_engine(args.database_url) as engine, tempfile.TemporaryDirectory() as tmp:
        url = engine.url.render_as_string(hide_password=False)
        have = 0
        for rows in sizes:
            started = time.perf_counter()
            raw = engine.raw_connection()
            try:
                raw.driver_connection.autocommit = True  # type: ignore[union-attr]
                with raw.cursor() as cursor:
                    for statement in filter(str.strip, GROW.split(";\n")):
                        cursor.execute(statement, {"first": have + 1, "last": rows})
            finally:
                raw.close()
            fill = time.perf_counter() - started
            have = rows
            out = Path(tmp) / f"export.{args.format}"
            measured = _export(url, out, args.format)
            measured["rows_per_s"] = round(rows / measured["seconds"])
            measured["fill_seconds"] = round(fill, 1)
            out.unlink()
            results["sizes"][str(rows)] = measured
            print(f"{rows:>11,} rows: {measured['seconds']:7.1f} s, "
                  f"{measured['rows_per_s']:>9,} rows/s, peak RSS {measured['peak_rss_mb']} MB, "
                  f"file {measured['file_mb']} MB", flush=True)  # fmt: skip
    print(f"wrote {write_results('export', results)}")


if __name__ == "__main__":
    main()
