"""A process's CPU by stage: each thread's own CPU, summed over threads, once each."""

from __future__ import annotations

import threading
import time

import pytest
from prometheus_client import CollectorRegistry, Counter

from focuscrawl.monitor.cpu import CLASSIFIER_STAGES, CRAWLER_STAGES, StageCpu


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_each_thread_adds_its_own_cpu_to_its_stage() -> None:
    registry = CollectorRegistry()
    served = Counter("cpu_seconds", "CPU by stage", ["stage"], registry=registry)
    cpu = StageCpu(CRAWLER_STAGES, served)

    def work(stage: str) -> None:
        for _ in range(5):
            start = time.thread_time()
            _burn(0.004)
            cpu.add(stage, start)

    threads = [threading.Thread(target=work, args=(s,)) for s in ("fetch", "parse", "parse")]
    for thread in threads:
        thread.start()
    idle = time.thread_time()
    time.sleep(0.05)  # waiting costs no CPU: a stage timed around a sleep stays near 0
    cpu.add("claim", idle)
    for thread in threads:
        thread.join()
    spent = cpu.seconds()
    assert list(spent) == list(CRAWLER_STAGES)
    assert spent["fetch"] >= 0.02 and spent["parse"] >= 0.04  # 5 and 10 bursts of 4 ms
    assert spent["parse"] == pytest.approx(2 * spent["fetch"], rel=0.5)
    assert spent["claim"] < 0.01 and spent["store"] == 0.0
    for stage, seconds in spent.items():  # each addition served once, to its stage
        value = registry.get_sample_value("cpu_seconds_total", {"stage": stage})
        assert value == pytest.approx(seconds, abs=1e-12), stage


def test_the_line_gives_milliseconds_a_page() -> None:
    cpu = StageCpu(CRAWLER_STAGES)
    start = time.thread_time()
    _burn(0.02)
    assert cpu.add("parse", start) >= start + 0.02  # where the next stage starts
    line = cpu.describe(pages=10, process_seconds=0.05)
    assert line.startswith("CPU a page, ms: claim 0.00, fetch 0.00, parse ")
    assert line.endswith("store 0.00; 5.00 in all")
    assert 2.0 <= float(line.split("parse ")[1].split(",")[0]) < 4.0


def test_stages_follow_one_another_from_one_clock() -> None:
    cpu = StageCpu(CLASSIFIER_STAGES)
    clock = time.thread_time()
    _burn(0.01)
    clock = cpu.add("score", clock)
    _burn(0.02)
    cpu.add("learn", clock)
    spent = cpu.seconds()
    assert list(spent) == list(CLASSIFIER_STAGES)
    assert 0.01 <= spent["score"] < spent["learn"]
    assert spent["claim"] == spent["frontier"] == 0.0
