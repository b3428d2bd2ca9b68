"""Connecting only to public addresses, checked at the moment of connecting.

A crawler must not be steered into the machine it runs on or its private network
(server-side request forgery): a link to ``http://10.0.0.5/admin`` or to a host whose
DNS answers ``127.0.0.1`` is refused. The check is made on the addresses the connection
then uses, from one lookup. Checking a host in one lookup and connecting after a
second would let a host answer a public address to the first and a private one to the
second (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from typing import Any

import httpcore

__all__ = ["PrivateAddress", "PublicOnlyBackend", "connect_error", "is_public"]

Resolver = Callable[..., list[tuple[Any, ...]]]

#: public addresses of one host tried in turn when a connection fails
MAX_ADDRESSES = 3


class PrivateAddress(httpcore.ConnectError):
    """The host resolves to private, loopback, link-local or otherwise non-global
    addresses only."""


def is_public(address: str) -> bool:
    """A globally routable IP address (``fe80::1%eth0`` style scopes are ignored)."""
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_global
    except ValueError:
        return False


class PublicOnlyBackend(httpcore.SyncBackend):
    """httpcore's network backend, connecting to a host's public addresses only.

    TLS still names the host (httpcore passes the origin's name to ``start_tls``), so
    certificates are checked against the host, not the address.
    """

    def __init__(
        self, resolve: Resolver = socket.getaddrinfo, allowed: Callable[[str], bool] = is_public
    ) -> None:
        self._resolve = resolve
        self._allowed = allowed

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            infos = self._resolve(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        public = [address for address in addresses if self._allowed(address)]
        if not public:
            raise PrivateAddress(f"{host} resolves to no public address ({', '.join(addresses)})")
        failure: httpcore.ConnectError | None = None
        for address in public[:MAX_ADDRESSES]:
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:  # the next address, as a browser would
                failure = exc
        assert failure is not None
        raise failure


def connect_error(exc: httpcore.ConnectError, proxied: bool) -> str:
    """The error class of a connection that failed, named as the web-in-a-box (and RFC
    9209's Proxy-Status) names them: the proxy itself unreachable, a host that does not
    resolve, a refused connection, or any other failure to connect."""
    if proxied:
        return "proxy_unreachable"
    text = str(exc).lower()
    if text.startswith("cannot resolve") or "name or service not known" in text:
        return "dns_error"
    if "refused" in text:
        return "connection_refused"
    return "connect"
