"""Watching a crawl and taking its results away: the live monitor's snapshots and
alarms, Prometheus metrics, exports."""
