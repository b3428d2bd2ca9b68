"""Three machines on one: a Citus coordinator and two workers, each in a network
namespace of its own on a bridge this module creates, speaking TCP with password
(SCRAM) authentication between them and for every client, as
docs/how-to/several-machines.md sets up three real machines. (Not TLS: the PostgreSQL
that pgserver ships, which Citus is built against here, has no SSL support: "SSL is not
supported by this build".)

Every address is a private one of the namespaces made here (``SUBNET``); nothing is
aimed anywhere else. Needs root, ``ip`` and the kernel's bridge and veth devices: the
test is skipped without them, and fails under CI=true.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from focuscrawl.db.cluster import NODE_SHARED_BUFFERS, run_statement
from focuscrawl.db.embedded import EmbeddedServer

SUBNET = "10.231.7"  # the bridge is .1, node n is .(10 + n)
PORT = 5432  # each node on its own address: the same port everywhere, as on machines
PASSWORD = "crawl-secret-7f3a"
_CLONE_NEWNET = 0x40000000


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def network_or_skip() -> None:
    """Skip (fail under CI=true) where namespaces and bridges cannot be made here."""
    reason = None
    if os.geteuid() != 0:
        reason = "network namespaces need root"
    elif shutil.which("ip") is None:
        reason = "no ip command (iproute2)"
    else:
        probe = f"fcp{uuid.uuid4().hex[:8]}"
        try:
            _ip("link", "add", probe, "type", "bridge")
            _ip("link", "del", probe)
        except subprocess.CalledProcessError as exc:
            reason = f"cannot make a bridge: {exc.stderr.strip()}"
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@dataclass(frozen=True)
class Host:
    """A namespace standing in for a machine, and its address."""

    namespace: str
    address: str


@contextlib.contextmanager
def hosts(count: int) -> Iterator[list[Host]]:
    """``count`` namespaces on a new bridge (which the test's own namespace is on too, at
    SUBNET.1): they reach each other and are reached from here; removed after."""
    tag = uuid.uuid4().hex[:6]
    bridge = f"fcb{tag}"
    made: list[Host] = []
    try:
        _ip("link", "add", bridge, "type", "bridge")
        _ip("addr", "add", f"{SUBNET}.1/24", "dev", bridge)
        _ip("link", "set", bridge, "up")
        for n in range(count):
            host = Host(f"fcn{tag}{n}", f"{SUBNET}.{10 + n}")
            _ip("netns", "add", host.namespace)
            made.append(host)
            veth = f"fcv{tag}{n}"
            _ip(
                "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", host.namespace
            )
            _ip("link", "set", veth, "master", bridge)
            _ip("link", "set", veth, "up")
            inside = ["netns", "exec", host.namespace, "ip"]
            _ip(*inside, "addr", "add", f"{host.address}/24", "dev", "eth0")
            _ip(*inside, "link", "set", "eth0", "up")
            _ip(*inside, "link", "set", "lo", "up")
        yield made
    finally:
        for host in made:
            subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)


@contextlib.contextmanager
def entered(host: Host) -> Iterator[None]:
    """This thread in ``host``'s network namespace: what it starts runs there."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/thread-self/ns/net") as home, open(f"/run/netns/{host.namespace}") as ns:
        if libc.setns(ns.fileno(), _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {host.namespace}")
        try:
            yield
        finally:
            if libc.setns(home.fileno(), _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")


@dataclass
class NetworkCluster:
    """The coordinator (``nodes[0]``) and workers, up, each on its host's address."""

    hosts: list[Host]
    nodes: list[EmbeddedServer]

    def url(self, node: int = 0, password: str = PASSWORD) -> str:
        """Node ``node``'s URL as another machine uses it: TCP and the password."""
        return f"postgresql://postgres:{password}@{self.hosts[node].address}:{PORT}/focuscrawl"


#: every connection over the network must give the password; the local socket (the
#: machine's own administrator) is trusted, as the embedded server's is
HBA = f"""local all all trust
host all all {SUBNET}.0/24 scram-sha-256
"""


@contextlib.contextmanager
def network_cluster(home: Path, bin_dir: Path, workers: int = 2) -> Iterator[NetworkCluster]:
    """A coordinator and ``workers`` workers, each in a namespace of its own, on TCP with
    passwords between them and for every client; stopped after."""
    with hosts(workers + 1) as machines:
        nodes: list[EmbeddedServer] = []
        try:
            for host in machines:
                node = EmbeddedServer(
                    home / host.namespace,
                    NODE_SHARED_BUFFERS,
                    bin_dir=bin_dir,
                    port=PORT,
                    settings={
                        "shared_preload_libraries": "'citus'",
                        "max_connections": "200",
                        "wal_level": "logical",
                        "listen_addresses": f"'{host.address}'",
                        "password_encryption": "'scram-sha-256'",
                        # how this node reaches itself (Citus's default is localhost)
                        "citus.local_hostname": f"'{host.address}'",
                    },
                )
                with entered(host):
                    node.up()
                nodes.append(node)
                (node.pgdata / "pg_hba.conf").write_text(HBA)
                run_statement(node.url(), f"ALTER ROLE postgres PASSWORD '{PASSWORD}'")
                run_statement(node.url(), "SELECT pg_reload_conf()")
                run_statement(node.url(), "CREATE EXTENSION IF NOT EXISTS citus")
                # the password this node gives the others (Citus does not copy it: each
                # node needs its own)
                run_statement(
                    node.url(),
                    "INSERT INTO pg_dist_authinfo (nodeid, rolename, authinfo) "
                    f"VALUES (0, 'postgres', 'password={PASSWORD}')",
                )
            coordinator = nodes[0].url()
            run_statement(
                coordinator, f"SELECT citus_set_coordinator_host('{machines[0].address}', {PORT})"
            )
            for host in machines[1:]:
                run_statement(coordinator, f"SELECT citus_add_node('{host.address}', {PORT})")
            yield NetworkCluster(machines, nodes)
        finally:
            for node in reversed(nodes):
                node.down()
