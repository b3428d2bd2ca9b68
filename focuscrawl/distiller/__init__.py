"""The distiller program: weighted HITS over cross-site links, in SQL, and the boost
of neglected neighbours of the best hubs. It meets the crawler and the classifier
only in tables."""

from focuscrawl.distiller.hits import (
    DEFAULT_ITERATIONS,
    DEFAULT_SHARE,
    DEFAULT_TOLERANCE,
    HitsRun,
    boost,
    latest_run,
    run_hits,
    top,
)

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_SHARE",
    "DEFAULT_TOLERANCE",
    "HitsRun",
    "boost",
    "latest_run",
    "run_hits",
    "top",
]
