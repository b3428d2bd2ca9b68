"""A local Citus cluster (a coordinator and workers on this machine), for tests and
benchmarks of the crawl's distributed layout (docs/discussions/scale-out.md).

Each node is an :class:`~focuscrawl.db.embedded.EmbeddedServer` of its own under
``<home>/<node>``, run from a PostgreSQL build that has the Citus extension
(``../shared/tools/citus-build`` makes one from pgserver's PostgreSQL), with
``citus`` preloaded. Nodes speak over Unix sockets only, as the embedded server does:
no TCP port is opened. :func:`citus_bin_dir` finds or builds that PostgreSQL.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
from psycopg2.extensions import parse_dsn

from focuscrawl.db.database import make_engine
from focuscrawl.db.distribute import worker_health
from focuscrawl.db.embedded import DATABASE_NAME, EmbeddedServer, _bin_dir
from focuscrawl.errors import DatabaseError

__all__ = ["CITUS_BUILD", "LocalCluster", "NodeState", "citus_bin_dir", "run_statement"]

#: the build script beside the checkout (../shared/tools/citus-build)
CITUS_BUILD = Path(__file__).resolve().parents[3] / "shared" / "tools" / "citus-build"
BASE_PORT = 9700
#: each node's shared_buffers: three nodes on one machine must not each take a quarter
NODE_SHARED_BUFFERS = "512MB"
#: what a cluster was made with (its nodes' count and ports), kept beside its nodes
LAYOUT_FILE = "cluster.json"


def citus_bin_dir(build: Path = CITUS_BUILD, timeout: float = 900) -> Path:
    """The bin directory of a PostgreSQL with Citus: built by ``build`` against pgserver's
    PostgreSQL on first use (about 90 s), then cached. A DatabaseError says why not."""
    if not build.exists():
        raise DatabaseError(f"no Citus build script at {build}")
    try:
        done = subprocess.run(
            [str(build), str(_bin_dir() / "pg_config")],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DatabaseError(f"citus-build could not run: {exc}") from exc
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise DatabaseError(f"citus-build failed: {detail[-1] if detail else done.returncode}")
    path = Path(lines[-1])
    if not (path / "postgres").exists():
        raise DatabaseError(f"citus-build printed {path}, which holds no postgres")
    return path


@dataclass(frozen=True)
class NodeState:
    """One node of a local cluster as :meth:`LocalCluster.status` sees it."""

    name: str  # coordinator, worker1, ...
    port: int
    running: bool
    pid: int | None
    #: whether the coordinator lists it as an active worker and reaches it now (None:
    #: the coordinator is down, or this is the coordinator)
    serving: bool | None


@dataclass
class LocalCluster:
    """A coordinator and ``workers`` workers under ``home``, started by :meth:`up`; node
    ``n`` listens on port ``base_port + n``. :meth:`up` writes the layout to
    ``home/cluster.json``, and :meth:`existing` reads it back (``focuscrawl cluster``)."""

    home: Path
    bin_dir: Path
    workers: int = 2
    base_port: int = BASE_PORT
    nodes: list[EmbeddedServer] = field(init=False)

    def __post_init__(self) -> None:
        self.nodes = [self._node(n) for n in range(self.workers + 1)]

    def _node(self, n: int) -> EmbeddedServer:
        """Node ``n`` (0: the coordinator), not yet started."""
        # wal_level logical: Citus moves and splits shards without blocking writes
        # (its rebalancer's default) by logical replication
        settings = {
            "shared_preload_libraries": "'citus'",
            "max_connections": "200",
            "wal_level": "logical",
        }
        node = EmbeddedServer(
            self.home / ("coordinator" if n == 0 else f"worker{n}"),
            NODE_SHARED_BUFFERS,
            bin_dir=self.bin_dir,
            port=self.base_port + n,
            settings=settings,
        )
        # how a node reaches itself when it moves a shard: its socket, as no TCP port is
        # open (Citus's default is localhost)
        node.settings["citus.local_hostname"] = f"'{node.socket_dir()}'"
        return node

    @classmethod
    def existing(cls, home: Path) -> LocalCluster | None:
        """The cluster made under ``home`` before (None: none was), run from the PostgreSQL
        its layout names (``citus_bin_dir`` when that is gone)."""
        layout = home / LAYOUT_FILE
        if not layout.exists():
            return None
        try:
            made = json.loads(layout.read_text(encoding="utf-8"))
            workers, base_port = int(made["workers"]), int(made["base_port"])
            recorded = Path(made["bin_dir"]) if made.get("bin_dir") else None
        except (ValueError, KeyError, TypeError) as exc:
            raise DatabaseError(f"{layout} is not a cluster layout ({exc}); remove it") from exc
        bin_dir = recorded if recorded and recorded.exists() else citus_bin_dir()
        return cls(home, bin_dir, workers=workers, base_port=base_port)

    def _save(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        layout = {
            "workers": self.workers,
            "base_port": self.base_port,
            "bin_dir": str(self.bin_dir),
        }
        (self.home / LAYOUT_FILE).write_text(json.dumps(layout, indent=2) + "\n", encoding="utf-8")

    @property
    def coordinator(self) -> EmbeddedServer:
        return self.nodes[0]

    def url(self, database: str = DATABASE_NAME) -> str:
        return self.coordinator.url(database)

    def up(self) -> str:
        """Start every node, create the Citus extension in the database on each, and
        register the workers with the coordinator (idempotent); the coordinator's URL."""
        self._save()
        for node in self.nodes:
            node.up()
            run_statement(node.url(), "CREATE EXTENSION IF NOT EXISTS citus")
        host, port = _socket(self.coordinator.url())
        run_statement(self.url(), f"SELECT citus_set_coordinator_host('{host}', {port})")
        for worker in self.nodes[1:]:
            host, port = _socket(worker.url())
            run_statement(
                self.url(),
                "SELECT citus_add_node(%s, %s) WHERE NOT EXISTS "
                "(SELECT FROM pg_dist_node WHERE nodename = %s AND nodeport = %s)",
                (host, port, host, port),
            )
        return self.url()

    def start_worker(self) -> EmbeddedServer:
        """Start one more node with Citus, not yet a worker of the cluster
        (``add_worker`` makes it one)."""
        node = self._node(len(self.nodes))
        self.nodes.append(node)
        node.up()
        run_statement(node.url(), "CREATE EXTENSION IF NOT EXISTS citus")
        return node

    def add_worker(self, node: EmbeddedServer | None = None) -> str:
        """Register ``node`` (else one more started now) with the running coordinator
        as a worker (its shards come with a rebalance: ``citus_rebalance_start()``);
        its URL."""
        node = node or self.start_worker()
        self.workers += 1
        host, port = _socket(node.url())
        run_statement(self.url(), "SELECT citus_add_node(%s, %s)", (host, port))
        self._save()
        return node.url()

    def down(self) -> list[str]:
        """Stop every node, workers first; the names of those that were running."""
        stopped = []
        for node in reversed(self.nodes):
            if node.down():
                stopped.append(node.home.name)
        return stopped

    def remove(self) -> None:
        """Delete every node's data (the cluster must be down)."""
        if any(node.status().running for node in self.nodes):
            raise DatabaseError(f"the cluster under {self.home} runs; stop it first")
        shutil.rmtree(self.home)

    def status(self) -> list[NodeState]:
        """Each node: running or not, and whether the coordinator uses and reaches it
        (``sql/distribute.sql``: citus_nodes)."""
        states = [node.status() for node in self.nodes]
        serving: set[str] | None = None
        if states[0].running:
            engine = make_engine(self.url())
            try:
                with engine.connect() as connection:
                    serving = {w.node for w in worker_health(connection) if w.up}
            finally:
                engine.dispose()
        result = []
        for n, (node, state) in enumerate(zip(self.nodes, states, strict=True)):
            used = None
            if n > 0 and serving is not None:
                used = f"{node.socket_dir()}:{node.port}" in serving
            result.append(NodeState(node.home.name, node.port, state.running, state.pid, used))
        return result


def _socket(url: str) -> tuple[str, int]:
    """(socket directory, port) of a node's URL: how the other nodes reach it."""
    dsn = parse_dsn(url)
    return dsn["host"], int(dsn["port"])


def run_statement(url: str, statement: str, params: tuple[object, ...] | None = None) -> None:
    """Run one statement on the server at ``url``, outside a transaction (as a cluster's
    set-up must: CREATE EXTENSION, citus_add_node)."""
    connection = psycopg2.connect(url)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
    finally:
        connection.close()
