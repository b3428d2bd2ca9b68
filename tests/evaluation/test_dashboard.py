"""The live view's alarms on made-up snapshot series."""

from __future__ import annotations

from focuscrawl.monitor.dashboard import Snapshot, Watch, render


def snap(at: float, fetched: int, relevance_sum: float, avg_100: float, frontier: int = 500):  # type: ignore[no-untyped-def]
    return Snapshot(at, fetched, 0, frontier, 0, 0, relevance_sum, avg_100, avg_100)


def test_a_steady_focused_crawl_raises_no_alarm() -> None:
    watch = Watch(window_s=10, patience=50)
    for t in range(60):
        watch.add(snap(t, 10 * t, 5.0 * t, 0.5))
    assert watch.alarms().stagnation is None and watch.alarms().diffusion is None
    assert abs((watch.pages_per_s() or 0) - 10) < 1e-9
    assert abs((watch.acquisition_rate() or 0) - 5) < 1e-9
    assert "stagnation alarm   no" in render(watch)


def test_stagnation_when_relevant_pages_stop_coming() -> None:
    watch = Watch(window_s=10, stall_share=0.2)
    total = 0.0
    for t in range(40):
        total += 5.0 if t < 20 else 0.2  # pages still come, relevant ones do not
        watch.add(snap(t, 10 * t, total, 0.5))
    assert watch.alarms().stagnation is not None
    assert "below 20% of the best" in (watch.alarms().stagnation or "")


def test_stagnation_when_nothing_is_fetched_but_not_when_the_frontier_is_empty() -> None:
    stalled, finished = Watch(window_s=10), Watch(window_s=10)
    for t in range(30):
        fetched = min(10 * t, 100)
        stalled.add(snap(t, fetched, fetched / 2, 0.5))
        finished.add(snap(t, fetched, fetched / 2, 0.5, frontier=0))
    assert "nothing fetched" in (stalled.alarms().stagnation or "")
    assert finished.alarms().stagnation is None


def test_diffusion_needs_a_fall_that_lasts() -> None:
    watch = Watch(window_s=10, drop=0.3, patience=300)
    averages = [0.6] * 20 + [0.2] * 20  # a dip of 200 fetches, then recovery
    averages += [0.6] * 10 + [0.3] * 40  # a fall that stays
    seen = []
    for t, avg in enumerate(averages):
        watch.add(snap(t, 100 + 10 * t, 0.5 * t, avg))
        seen.append(watch.alarms().diffusion)
    assert all(a is None for a in seen[:50])  # the dip recovered within patience
    assert seen[-1] is not None and "below 70% of its best 0.600" in seen[-1]
