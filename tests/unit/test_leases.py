"""LeaseShelf: which host leases a crawler keeps between requests, and which it gives
back to the database."""

from __future__ import annotations

from focuscrawl.crawler.leases import HOLD_S, MAX_HOLD_S, Lease, LeaseShelf
from focuscrawl.crawler.store import Claim


def lease(sid: int, delay: float, acquired_at: float = 0.0) -> Lease:
    claim = Claim(oid=sid, url=f"http://h{sid}.test/", sid=sid, num_tries=0, depth=0)
    return Lease(claim, delay=delay, acquired_at=acquired_at)


def test_an_idle_host_is_given_back_once_its_delay_has_passed() -> None:
    shelf = LeaseShelf()
    host = lease(1, delay=1.0, acquired_at=9.5)  # held until 13.5 s at most
    host.requested(10.0)  # a request ended at 10 s: the next not before 11 s
    shelf.put(host)
    assert shelf.due(10.5, in_use=set()) == []  # nobody may ask the host yet: kept
    assert shelf.due(11.0, in_use={1}) == []  # URLs of it queued here: kept
    assert shelf.due(11.0, in_use=set()) == [host]
    assert len(shelf) == 0 and shelf.take(1) is None


def test_a_busy_host_is_given_back_after_its_hold() -> None:
    shelf = LeaseShelf()
    slow, quick = lease(1, delay=1.0), lease(2, delay=0.0)
    assert slow.hold == 4.0 and quick.hold == HOLD_S
    assert lease(3, delay=60.0).hold == MAX_HOLD_S  # within the database's lease
    for host in (slow, quick):
        host.requested(0.5)
        shelf.put(host)
    assert shelf.due(HOLD_S - 0.01, in_use={1, 2}) == []
    assert shelf.due(HOLD_S, in_use={1, 2}) == [quick]  # its hold is over, though queued
    assert shelf.due(4.0, in_use={1}) == [slow]


def test_a_lease_taken_off_the_shelf_is_no_longer_due() -> None:
    shelf = LeaseShelf()
    shelf.put(lease(1, delay=0.0))
    shelf.put(lease(2, delay=0.0))
    taken = shelf.take(1)
    assert taken is not None and taken.sid == 1
    assert [held.sid for held in shelf.due(100.0, in_use=set())] == [2]
    shelf.put(taken)
    assert [held.sid for held in shelf.drain()] == [1]
    assert len(shelf) == 0


def test_the_wait_is_what_remains_of_the_delay() -> None:
    host = lease(1, delay=0.25)
    assert host.wait(0.0) == 0.0  # freshly acquired: the database said it was free
    host.requested(2.0)
    assert abs(host.wait(2.1) - 0.15) < 1e-9
    assert host.wait(3.0) == 0.0
