"""The embedded PostgreSQL server: a private server under ``FOCUSCRAWL_HOME``.

When no database URL is configured, focuscrawl runs the PostgreSQL binaries that
the ``pgserver`` package ships, with its data in ``<home>/pgdata``. The server
listens on a Unix socket only (nobody else on the network can reach it), keeps
running between commands, and is stopped by ``focuscrawl db down``.

PostgreSQL refuses to run as root. When root starts it, the server runs as the
system user ``focuscrawl`` (created on first use) and the directories above the
data directory are made traversable (``o+x``, never readable) for that user.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import psycopg2
from psycopg2 import sql

from focuscrawl.errors import DatabaseError

__all__ = [
    "DATABASE_NAME",
    "EmbeddedServer",
    "ServerStatus",
    "server_settings",
    "shared_buffers_mb",
    "usable_memory",
]

DATABASE_NAME = "focuscrawl"
SUPERUSER = "postgres"
SYSTEM_USER = "focuscrawl"
PORT = 5432  # only names the socket file; the server opens no TCP port
START_TIMEOUT_S = 60
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes, with room for ".s.PGSQL.5432"

# Written to postgresql.auto.conf when the cluster is created, with shared_buffers
# sized to the machine (``server_settings``). Sized for a crawl: the frontier, link and
# text tables are hot and written in bulk.
SERVER_SETTINGS = {
    "listen_addresses": "''",
    "max_connections": "200",
    "work_mem": "'32MB'",
    "maintenance_work_mem": "'256MB'",
    "max_wal_size": "'4GB'",
    "checkpoint_timeout": "'15min'",
    "autovacuum_naptime": "'10s'",
    "logging_collector": "off",
}


#: shared_buffers is a quarter of the memory the server may use, PostgreSQL's own
#: starting advice, within these bounds (MB); 512 MB when the memory cannot be read
SHARED_BUFFERS_MB = (128, 8192)
SHARED_BUFFERS_UNKNOWN_MB = 512
_CGROUP_MEMORY_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2, as a container sees its own
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),  # cgroup v1
)


def usable_memory() -> int | None:
    """Bytes of memory this machine has, or its container's limit when that is lower;
    None when neither can be read."""
    try:
        memory: int | None = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        memory = None
    for path in _CGROUP_MEMORY_LIMITS:
        try:
            limit = path.read_text(encoding="ascii").strip()
        except OSError:
            continue
        if limit.isdigit():  # "max" (v2) means no limit
            memory = int(limit) if memory is None else min(memory, int(limit))
    return memory


def shared_buffers_mb(memory: int | None) -> int:
    """shared_buffers for a server on a machine with ``memory`` bytes."""
    if memory is None:
        return SHARED_BUFFERS_UNKNOWN_MB
    low, high = SHARED_BUFFERS_MB
    return max(low, min(high, memory // 4 // 2**20))


def server_settings(memory: int | None) -> dict[str, str]:
    """What a new cluster is configured with on a machine with ``memory`` bytes.

    A frontier of 10,000,000 URLs is about 2 GB of heap and indexes, and a claim
    touches 64 random rows of it: with 512 MB of shared_buffers each claim reads and
    evicts pages through the OS (bench/checkout.py: 3.8 ms a claim against 2.7 with
    6 GB, measured from a checkpoint).
    """
    return {**SERVER_SETTINGS, "shared_buffers": f"'{shared_buffers_mb(memory)}MB'"}


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    pgdata: Path
    url: str | None


def _bin_dir() -> Path:
    spec = find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise DatabaseError(
            "the embedded PostgreSQL needs the 'pgserver' package: pip install pgserver, "
            "or set FOCUSCRAWL_DATABASE_URL to use another server"
        )
    path = Path(spec.origin).parent / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise DatabaseError(f"pgserver is installed but has no PostgreSQL binaries in {path}")
    return path


def _is_root() -> bool:
    return os.geteuid() == 0


def _ensure_system_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    try:
        subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
            check=True,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise DatabaseError(
            f"running as root, focuscrawl needs a system user {SYSTEM_USER!r} for PostgreSQL "
            f"and could not create it: {detail.strip()}"
        ) from exc
    return pwd.getpwnam(SYSTEM_USER)


def _make_traversable(path: Path) -> None:
    """Let other users pass through (not list) every directory above ``path``."""
    for parent in path.resolve().parents:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)


class EmbeddedServer:
    """A PostgreSQL cluster in ``<home>/pgdata``, started and stopped on demand.

    ``shared_buffers`` (a PostgreSQL size such as ``2GB``) overrides, at each start, the
    size the cluster was created with.
    """

    def __init__(
        self,
        home: Path,
        shared_buffers: str | None = None,
        *,
        bin_dir: Path | None = None,
        port: int = PORT,
        settings: dict[str, str] | None = None,
    ) -> None:
        self.home = home.expanduser().resolve()
        self.shared_buffers = shared_buffers
        self.pgdata = self.home / "pgdata"
        #: another build of pgserver's PostgreSQL (a Citus node's: focuscrawl.db.cluster)
        self._bin_dir = bin_dir
        #: names the socket file; several servers may share a socket directory
        self.port = port
        #: written to the new cluster's configuration after the crawl settings
        self.settings = settings or {}
        self.logfile = self.pgdata / "server.log"

    # -- paths and identity ---------------------------------------------------

    @property
    def bin_dir(self) -> Path:
        return self._bin_dir or _bin_dir()

    def socket_dir(self) -> Path:
        """Where the server's Unix socket lives (its data directory, unless that path is
        too long for a socket)."""
        if len(str(self.pgdata / f".s.PGSQL.{self.port}")) <= _MAX_SOCKET_PATH:
            return self.pgdata
        digest = hashlib.sha256(str(self.pgdata).encode()).hexdigest()[:12]
        return Path("/tmp") / f"focuscrawl-{os.geteuid()}-{digest}"

    def _run(self, tool: str, *args: str, timeout: float = START_TIMEOUT_S) -> str:
        command = [str(self.bin_dir / tool), *args]
        # As root, drop to the system user entirely: uid, gid and supplementary groups,
        # or root's group bits would decide access to root's directories.
        uid: int | None = None
        gid: int | None = None
        groups: list[int] | None = None
        if _is_root():
            user = _ensure_system_user()
            uid, gid, groups = user.pw_uid, user.pw_gid, []
        try:
            done = subprocess.run(
                command,
                user=uid,
                group=gid,
                extra_groups=groups,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                cwd=self.pgdata if self.pgdata.exists() else None,
            )
        except subprocess.TimeoutExpired as exc:
            raise DatabaseError(
                f"{tool} did not finish in {timeout:.0f} s; see {self.logfile}"
            ) from exc
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            last = detail[-1] if detail else f"exit status {done.returncode}"
            raise DatabaseError(f"{tool} failed: {last} (log: {self.logfile})")
        return str(done.stdout)

    @contextmanager
    def _lock(self) -> Iterator[None]:
        """Serialise start/stop between processes sharing this home."""
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / "embedded.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- state ----------------------------------------------------------------

    def _postmaster(self) -> tuple[int, Path] | None:
        """(pid, socket dir) of a live server on this data directory, else None."""
        try:
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
            pid = int(lines[0])
            socket_dir = Path(lines[4])
        except (OSError, ValueError, IndexError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, owned by the system user
        return pid, socket_dir

    def url(self, database: str = DATABASE_NAME) -> str:
        info = self._postmaster()
        if info is None:
            raise DatabaseError(
                "the embedded PostgreSQL is not running; start it with: focuscrawl db up"
            )
        return f"postgresql://{SUPERUSER}@/{database}?host={info[1]}&port={self.port}"

    def status(self) -> ServerStatus:
        info = self._postmaster()
        if info is None:
            return ServerStatus(False, None, self.pgdata, None)
        return ServerStatus(True, info[0], self.pgdata, self.url())

    # -- lifecycle ------------------------------------------------------------

    def _initdb(self) -> None:
        self.pgdata.mkdir(parents=True, exist_ok=True)
        self.pgdata.chmod(0o700)
        if _is_root():
            user = _ensure_system_user()
            _make_traversable(self.pgdata)
            _make_traversable(self.bin_dir)
            os.chown(self.pgdata, user.pw_uid, user.pw_gid)
        self._run(
            "initdb",
            "-D", str(self.pgdata),
            "-U", SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
        )  # fmt: skip
        with open(self.pgdata / "postgresql.auto.conf", "a", encoding="utf-8") as conf:
            for name, value in {**server_settings(usable_memory()), **self.settings}.items():
                conf.write(f"{name} = {value}\n")

    def up(self) -> ServerStatus:
        """Start the server (creating the cluster and database on first use); idempotent."""
        with self._lock():
            if not (self.pgdata / "PG_VERSION").exists():
                self._initdb()
            if self._postmaster() is None:
                socket_dir = self.socket_dir()
                socket_dir.mkdir(parents=True, exist_ok=True)
                if _is_root() and socket_dir != self.pgdata:
                    user = _ensure_system_user()
                    os.chown(socket_dir, user.pw_uid, user.pw_gid)
                self._run(
                    "pg_ctl", "start", "-w",
                    "-t", str(START_TIMEOUT_S),
                    "-D", str(self.pgdata),
                    "-l", str(self.logfile),
                    "-o", self._start_options(socket_dir),
                    timeout=START_TIMEOUT_S + 5,
                )  # fmt: skip
                self._wait_ready()
            self._ensure_database(DATABASE_NAME)
        return self.status()

    def down(self) -> bool:
        """Stop the server if it runs; return whether it was running."""
        with self._lock():
            if self._postmaster() is None:
                return False
            self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.pgdata))
            return True

    def _start_options(self, socket_dir: Path) -> str:
        options = f"-k {socket_dir} -p {self.port}"
        if self.shared_buffers:
            options += f" -c shared_buffers={self.shared_buffers}"
        return options

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                psycopg2.connect(self.url("postgres")).close()
                return
            except (psycopg2.OperationalError, DatabaseError) as exc:
                if time.monotonic() > deadline:
                    raise DatabaseError(
                        f"embedded PostgreSQL did not accept connections: {exc}"
                    ) from exc
                time.sleep(0.1)

    def _ensure_database(self, name: str) -> None:
        connection = psycopg2.connect(self.url("postgres"))
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cursor.fetchone() is None:
                    cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        finally:
            connection.close()
