"""The evaluation's tasks and measures as plain functions: seeds d links from a topic,
what a crawl's requests found (failures counted), and the crawl's own verdict."""

from __future__ import annotations

import pytest

from focuscrawl.errors import CorpusError
from focuscrawl.evaluation.experiment import _measure
from focuscrawl.evaluation.runs import CrawlTrace
from focuscrawl.evaluation.summary import over_samples, sweep_summary
from focuscrawl.evaluation.truth import GroundTruth

# a -> b -> t1 (relevant); c -> t1; d -> a; e stands alone; t1 -> t2 (relevant)
GRAPH = {"a": ["b"], "b": ["t1"], "c": ["t1"], "d": ["a"], "e": [], "t1": ["t2"], "t2": []}
TRUTH = GroundTruth({u: ("x.topic",) if u.startswith("t") else ("x.other",) for u in GRAPH})


def test_seeds_at_a_distance_are_that_many_links_from_the_nearest_target() -> None:
    assert sorted(TRUTH.distant_seeds("x.topic", 2, 1, 1, GRAPH)) == ["b", "c"]
    assert TRUTH.distant_seeds("x.topic", 1, 1, 2, GRAPH) == ["a"]
    assert TRUTH.distant_seeds("x.topic", 1, 1, 3, GRAPH) == ["d"]
    with pytest.raises(CorpusError, match="1 pages lie 2 links"):
        TRUTH.distant_seeds("x.topic", 2, 1, 2, GRAPH)


def _trace(name: str, attempts: list[tuple[str, bool]], estimates: dict[str, float]) -> CrawlTrace:
    urls = [u for u, ok in attempts if ok]
    return CrawlTrace(
        name, urls, ["h"] * len(urls), [estimates.get(u, 0.0) for u in urls], 1.0,
        attempts=attempts,
    )  # fmt: skip


def test_requests_that_failed_count_against_a_crawl_and_its_verdict_is_checked() -> None:
    relevant = frozenset({"r1", "r2", "r3", "r4"})
    # soft: two dead links among its first four requests; every page it fetched relevant
    soft = _trace(
        "soft",
        [("dead1", False), ("r1", True), ("dead2", False), ("r2", True), ("r3", True)],
        {"r1": 0.9, "r2": 0.2, "r3": 0.8},
    )
    # bfs: no dead links, half its pages relevant; calls an irrelevant page relevant
    bfs = _trace(
        "bfs",
        [("r1", True), ("o1", True), ("r2", True), ("o2", True), ("r4", True)],
        {"r1": 0.7, "o1": 0.6},
    )
    soft.selection_cpu = 0.006  # 6 ms over its 3 pages
    measured = _measure("x.topic", relevant, 4, [], {"soft": soft, "bfs": bfs}, (1, 2))
    s, b = measured["strategies"]["soft"], measured["strategies"]["bfs"]
    assert s["harvest"] == 1.0 and b["harvest"] == 0.5  # among the pages that came back
    assert s["per_attempt"] == 0.5 and b["per_attempt"] == 0.5  # per request: a tie
    assert s["selection_ms_per_page"] == 2.0 and b["selection_ms_per_page"] == 0.0
    assert s["attempts"] == 5 and s["failed_attempts"] == 2 and b["failed_attempts"] == 0
    assert s["recall"] == 0.5 and s["recall_2n"] == 0.75 and b["recall_2n"] == 0.75
    assert (s["verdict_pages"], s["verdict_precision"], s["verdict_recall"]) == (2, 1.0, 0.667)
    assert (b["verdict_pages"], b["verdict_precision"], b["verdict_recall"]) == (2, 0.5, 0.333)
    summary = sweep_summary({"topics": [measured]})
    assert summary["soft"]["mean_per_attempt"] == 0.5 and summary["soft"]["wins"] == 0
    assert summary["soft"]["mean_harvest"] == 1.0
    assert summary["soft"]["mean_recall_2n"] == 0.75


def test_the_verdict_leaves_out_pages_that_are_mostly_links() -> None:
    """As export --what relevant does: a page whose text is mostly its links' anchors (a
    site's home page, an index) is not called relevant, whatever its R."""
    relevant = frozenset({"r1", "r2"})
    crawl = _trace("soft", [(u, True) for u in ("r1", "index", "r2")], dict.fromkeys(GRAPH, 0.0))
    crawl.estimates = [0.9, 1.0, 0.8]
    crawl.link_shares = [0.05, 0.8, None]  # None: measured before link shares were kept
    verdict = _measure("x.topic", relevant, 3, [], {"soft": crawl})["strategies"]["soft"]
    assert (verdict["verdict_pages"], verdict["verdict_precision"]) == (2, 1.0)
    crawl.link_shares = [0.05, 0.49, None]
    verdict = _measure("x.topic", relevant, 3, [], {"soft": crawl})["strategies"]["soft"]
    assert (verdict["verdict_pages"], verdict["verdict_precision"]) == (3, 0.667)


def test_a_sweep_over_seed_samples_gives_the_mean_ratio_of_each_sample() -> None:
    """Averaged over seed samples a topic's ratio hides how much the seeds decide; the
    summary gives each sample's mean ratio beside it, and none from one sample."""

    def sample(soft: float, bfs: float) -> dict[str, object]:
        measures = {"per_attempt": soft, "harvest": soft}
        return {"topic": "x.t", "seeds": [], "strategies": {
            "soft": dict(measures), "bfs": {"per_attempt": bfs, "harvest": bfs}}}  # fmt: skip

    topics = [
        over_samples([sample(0.6, 0.3), sample(0.4, 0.4)]),  # ratios 2.0 and 1.0
        over_samples([sample(0.3, 0.1), sample(0.2, 0.0)]),  # 3.0, and nothing to divide by
    ]
    summary = sweep_summary({"topics": topics})["soft"]
    assert summary["mean_ratio_to_bfs_by_sample"] == [2.5, 1.0]
    # the topics' means: 0.5 / 0.35 and 0.25 / 0.05
    assert summary["mean_ratio_to_bfs"] == round((0.5 / 0.35 + 0.25 / 0.05) / 2, 3)
    one = sweep_summary({"topics": [over_samples([sample(0.6, 0.3)])]})["soft"]
    assert "mean_ratio_to_bfs_by_sample" not in one and one["mean_ratio_to_bfs"] == 2.0


def test_a_ratio_to_a_strategy_that_found_nothing_is_no_number() -> None:
    """From seeds two links from the topic breadth-first may find nothing at all: the
    ratios to it are null, and the summary line says so (not a ratio to 1e-9)."""
    from focuscrawl.cli.evaluate import sweep_table

    topics = [
        {
            "topic": f"x.t{n}",
            "relevant_pages": 10,
            "seeds": [],
            "strategies": {
                "soft": {"per_attempt": 0.2, "harvest": 0.3, "recall_3n": 0.4},
                "bfs": {"per_attempt": 0.0, "harvest": 0.0, "recall_3n": 0.0},
            },
        }
        for n in range(2)
    ]
    summary = sweep_summary({"topics": topics})["soft"]
    assert summary["mean_ratio_to_bfs"] is None and summary["bfs_found_none"] == 2
    assert summary["ratio_of_means_to_bfs"] is None
    assert summary["recall_3n_ratio_of_means_to_bfs"] is None
    assert summary["wins"] == 2 and summary["recall_3n_wins"] == 2
    line = next(t for t in sweep_table({"topics": topics}).splitlines() if t.startswith("soft:"))
    assert "no ratio to bfs: bfs found none on 2 topics" in line
    assert "recall at 3N 0.400 (nothing found by bfs, ahead on 2/2)" in line


# the finalizer's KeyboardInterrupt is "ignored" by Python: what this test is about
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_ctrl_c_lost_in_a_finalizer_still_stops_the_sweep() -> None:
    """A KeyboardInterrupt raised inside a finalizer is dropped by Python (a sweep so
    interrupted ran on to its end): the evaluation's handler remembers the signal, and
    the check after each topic raises it; the handler before is back afterwards."""
    import gc
    import os
    import signal

    from focuscrawl.cli.evaluate import _remembered_interrupt

    class Collected:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)  # handled here, inside the finalizer

    before = signal.getsignal(signal.SIGINT)
    with _remembered_interrupt() as interrupt:
        interrupt.check()  # nothing yet
        Collected()  # collected at once: the KeyboardInterrupt is printed and dropped
        gc.collect()
        assert interrupt.seen
        with pytest.raises(KeyboardInterrupt):
            interrupt.check()
    assert signal.getsignal(signal.SIGINT) is before
