"""Every timing constant of a crawler process, in one place: how often it looks, how
long it waits, how much it keeps in hand. Each says what it bounds and why."""

from __future__ import annotations

__all__ = [
    "CLAIM_BACKOFF_S",
    "CLAIM_SCAN",
    "CLASSIFIER_WAIT_S",
    "DUE_S",
    "FOCUSED_SITE_S",
    "FREE_POLL_S",
    "IN_HAND_RATE",
    "LOCKSTEP_POLL_S",
    "RATE_WINDOW_S",
    "RECOVER_EVERY_S",
    "RELEASE_EVERY_S",
    "SCOPE_EVERY_S",
    "SCORED_FALLBACK_S",
    "TAKE_TIMEOUT",
]

#: a worker waits at most this long for a URL to come due before it looks again whether
#: the crawl is stopping
TAKE_TIMEOUT = 0.2
SCOPE_EVERY_S = 5.0  # how often a crawler reads the crawl's scope again
#: how often a crawler gives back the URLs whose lease ran out (a crawler that died)
RECOVER_EVERY_S = 30.0
#: a lockstep crawl (the evaluation's) looks this often whether its round is scored
LOCKSTEP_POLL_S = 0.002
#: a free crawl looks whether to claim this often: the work it keeps in hand lasts DUE_S,
#: and each look reads the queues of every host it holds (a few hundred µs for 1,000)
FREE_POLL_S = 0.01
#: waiting for the classifier, woken by its notification: the poll if none comes
SCORED_FALLBACK_S = 0.05
#: a queued URL counts as work in hand (against the claim size and the backlog) when
#: its host's turn comes within this many seconds; later ones wait on politeness
DUE_S = 0.25
#: under politeness, the work in hand is also at least this many times what the crawl
#: fetched in the last DUE_S (over the last RATE_WINDOW_S): a host is asked once a
#: delay, so URLs due within DUE_S are hosts, and a fixed number of them would cap the
#: crawl at that number each DUE_S however many hosts have work
IN_HAND_RATE = 2.0
RATE_WINDOW_S = 2.0
#: a focused crawl holds at most this many seconds of a site's work (at its delay), so
#: that under politeness its claims reach the best URLs of many sites, not a queue of one,
#: and a site's next URL is chosen as late as its delay allows (at a 1 s delay, one URL:
#: holding two took the second on estimates up to a second older, and found fewer
#: relevant pages, docs/discussions/benchmarks.md "A polite crawl's start, again")
FOCUSED_SITE_S = 1.0
#: a claim whose scan of the frontier found fewer URLs than it asked for while it
#: skipped sites at their cap: the next waits this long (at least; a quarter of the
#: host delay), rather than scan the frontier again every few milliseconds
CLAIM_BACKOFF_S = 0.05
#: a claim that takes at most a few URLs of one site reads this many times as many
#: URLs off the frontier's index as it asks for (claim_batch)
CLAIM_SCAN = 8
#: how often the leases kept no more go back to the database (crawler.leases)
RELEASE_EVERY_S = 0.1
#: a free crawl (not lockstep) that has waited this long for a classifier with no page
#: scored crawls on without waiting (and says so), until a classifier scores again
CLASSIFIER_WAIT_S = 3.0
