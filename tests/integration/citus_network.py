"""Three machines on one: a Citus coordinator and two workers, each in a network
namespace of its own on a bridge this module creates, speaking TCP with TLS and password
(SCRAM) authentication between them and for every client, as
docs/how-to/several-machines.md sets up three real machines. Each node has a
certificate for its address from a certificate authority made here, and every connection
over the network, the nodes' own among them, verifies it (``sslmode=verify-full``).

The nodes run Debian's PostgreSQL 15 with Citus built against it
(``scripts/citus-build-ssl``, from Debian's packages): the PostgreSQL that pgserver
ships has no SSL support.
Every address is a private one of the namespaces made here (``SUBNET``); nothing is
aimed anywhere else. Needs root, ``ip``, the kernel's bridge and veth devices, apt and
``openssl``: the test is skipped without them, and fails under CI=true.
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

from focuscrawl.db.cluster import NODE_SHARED_BUFFERS, run_statement
from focuscrawl.db.embedded import EmbeddedServer
from tests.integration.debian_postgresql import skip_or_fail

SUBNET = "10.231.7"  # the bridge is .1, node n is .(10 + n)
PORT = 5432  # each node on its own address: the same port everywhere, as on machines
PASSWORD = "crawl-secret-7f3a"
_CLONE_NEWNET = 0x40000000


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def network_or_skip() -> None:
    """Skip (fail under CI=true) where namespaces and bridges, or the nodes' certificates,
    cannot be made here."""
    reason = None
    if os.geteuid() != 0:
        reason = "network namespaces need root"
    elif shutil.which("ip") is None:
        reason = "no ip command (iproute2)"
    elif shutil.which("openssl") is None:
        reason = "no openssl command to make the nodes' certificates"
    else:
        probe = f"fcp{uuid.uuid4().hex[:8]}"
        try:
            _ip("link", "add", probe, "type", "bridge")
            _ip("link", "del", probe)
        except subprocess.CalledProcessError as exc:
            reason = f"cannot make a bridge: {exc.stderr.strip()}"
    if reason is not None:
        skip_or_fail(reason)


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


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, text=True)


def certificates(directory: Path, addresses: list[str]) -> Path:
    """A certificate authority and, for each address, a key and a certificate it signed
    for that IP address (``<address>.key``, ``<address>.crt``); returns the authority's
    certificate, which every client verifies the nodes against."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = directory / "ca.key", directory / "ca.crt"
    curve = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *curve, "-keyout", str(ca_key), "-out", str(ca),
             "-days", "2", "-subj", "/CN=focuscrawl test CA")  # fmt: skip
    for address in addresses:
        key, request = directory / f"{address}.key", directory / f"{address}.csr"
        san = directory / f"{address}.ext"
        san.write_text(f"subjectAltName=IP:{address}\n")
        _openssl("req", *curve, "-keyout", str(key), "-out", str(request),
                 "-subj", f"/CN={address}")  # fmt: skip
        _openssl("x509", "-req", "-in", str(request), "-CA", str(ca), "-CAkey", str(ca_key),
                 "-CAcreateserial", "-out", str(directory / f"{address}.crt"), "-days", "2",
                 "-extfile", str(san))  # fmt: skip
    return ca


@dataclass
class NetworkCluster:
    """The coordinator (``nodes[0]``) and workers, up, each on its host's address."""

    hosts: list[Host]
    nodes: list[EmbeddedServer]
    #: the certificate authority's certificate, which clients verify the nodes against
    ca: Path

    def url(self, node: int = 0, password: str = PASSWORD, sslmode: str = "verify-full") -> str:
        """Node ``node``'s URL as another machine uses it: TCP, TLS and the password."""
        return (
            f"postgresql://postgres:{password}@{self.hosts[node].address}:{PORT}/focuscrawl"
            f"?sslmode={sslmode}&sslrootcert={self.ca}"
        )


#: every connection over the network must use TLS and give the password; the local
#: socket (the machine's own administrator) is trusted, as the embedded server's is
HBA = f"""local all all trust
hostssl all all {SUBNET}.0/24 scram-sha-256
hostnossl all all {SUBNET}.0/24 reject
"""


def _tls_files(node: EmbeddedServer, ca: Path, address: str) -> dict[str, str]:
    """The node's key and certificate (``certificates`` made them beside ``ca``) and the
    authority's certificate copied into its data directory, owned by its server's user;
    the settings that use them."""
    owner = node.pgdata.stat()
    for name, source in (
        ("server.key", ca.parent / f"{address}.key"),
        ("server.crt", ca.parent / f"{address}.crt"),
        ("root.crt", ca),
    ):
        target = node.pgdata / name
        shutil.copyfile(source, target)
        target.chmod(0o600)
        os.chown(target, owner.st_uid, owner.st_gid)
    root = node.pgdata / "root.crt"
    return {
        "ssl": "on",
        "ssl_cert_file": "'server.crt'",
        "ssl_key_file": "'server.key'",
        # how this node reaches the others (and itself): TLS, their certificates verified
        "citus.node_conninfo": f"'sslmode=verify-full sslrootcert={root}'",
    }


@contextlib.contextmanager
def network_cluster(home: Path, bin_dir: Path, workers: int = 2) -> Iterator[NetworkCluster]:
    """A coordinator and ``workers`` workers, each in a namespace of its own, on TCP with
    TLS and passwords between them and for every client; stopped after."""
    with hosts(workers + 1) as machines:
        ca = certificates(home / "certificates", [host.address for host in machines])
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
                tls = _tls_files(node, ca, host.address)
                with open(node.pgdata / "postgresql.auto.conf", "a", encoding="utf-8") as conf:
                    conf.writelines(f"{name} = {value}\n" for name, value in tls.items())
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
            yield NetworkCluster(machines, nodes, ca)
        finally:
            for node in reversed(nodes):
                node.down()
