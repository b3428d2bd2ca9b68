"""Where a process's CPU goes: each stage's thread CPU (``time.thread_time``), summed over
the threads that run it.

A process's CPU says what a page costs; this says where. Sampling profilers mislead in a
crawler: it runs dozens of threads that take turns at the GIL, and a sampler that charges
whoever holds it made the crawler's store look three times its cost.

A crawler's stages (``CRAWLER_STAGES``):

* ``claim``: reading URLs off the frontier (a batch at a time);
* ``fetch``: the requests, robots.txt's among them (libcurl's work on the worker's thread);
* ``parse``: what a response is read into: sniffed, decoded, parsed, its links and the
  words around them;
* ``store``: a batch's rows written, the link learner's check-in estimates among them.

A classifier's (``CLASSIFIER_STAGES``), its own Python and not PostgreSQL's work:

* ``claim``: the next batch of pages read, with the models and the taxonomy;
* ``score``: the pages judged and their scores written;
* ``estimates``: their out-links estimated, the link learner's lessons queued;
* ``learn``: the link learner's new versions;
* ``frontier``: every unvisited URL estimated again after a version fitted afresh;
* ``self_train``: the page classifier trained again on the crawl's surest pages.

What no stage holds is the rest: threads waiting and waking, the process's start.
"""

from __future__ import annotations

import threading
import time

from prometheus_client import Counter

__all__ = ["CLASSIFIER_STAGES", "CRAWLER_STAGES", "StageCpu"]

CRAWLER_STAGES = ("claim", "fetch", "parse", "store")
CLASSIFIER_STAGES = ("claim", "score", "estimates", "learn", "frontier", "self_train")


class StageCpu:
    """Thread CPU seconds by stage, added to from any thread."""

    def __init__(self, stages: tuple[str, ...], counter: Counter | None = None) -> None:
        """``counter``: the process's metric (a Prometheus counter labelled ``stage``),
        which each addition moves too."""
        self._lock = threading.Lock()
        self._seconds = dict.fromkeys(stages, 0.0)
        self._served = {} if counter is None else {s: counter.labels(s) for s in stages}

    def add(self, stage: str, since: float) -> float:
        """Count the CPU this thread spent since ``since`` (a ``time.thread_time()``);
        return the time now, where the next stage starts."""
        now = time.thread_time()
        spent = now - since
        with self._lock:
            self._seconds[stage] += spent
        if self._served:
            self._served[stage].inc(spent)
        return now

    def seconds(self) -> dict[str, float]:
        """Each stage's seconds so far, in the order of the stages."""
        with self._lock:
            return dict(self._seconds)

    def describe(self, pages: int, process_seconds: float) -> str:
        """One line: each stage's milliseconds a page, and the process's in all."""
        per_page = 1e3 / max(pages, 1)
        stages = ", ".join(f"{s} {v * per_page:.2f}" for s, v in self.seconds().items())
        return f"CPU a page, ms: {stages}; {process_seconds * per_page:.2f} in all"
