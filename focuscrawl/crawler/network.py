"""Connecting only to public addresses, checked at the moment of connecting.

A crawler must not be steered into the machine it runs on or its private network
(server-side request forgery): a link to ``http://10.0.0.5/admin`` or to a host whose
DNS answers ``127.0.0.1`` is refused. The check is made on the addresses the connection
then uses, from one lookup. Checking a host in one lookup and connecting after a
second would let a host answer a public address to the first and a private one to the
second (DNS rebinding): libcurl resolves a host once and asks for a socket for each
address it is about to connect to, and the address is checked there.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

__all__ = ["is_public", "public_socket"]


def is_public(address: str) -> bool:
    """A globally routable IP address (``fe80::1%eth0`` style scopes are ignored)."""
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_global
    except ValueError:
        return False


def public_socket(address: Any) -> socket.socket | None:
    """A new socket for libcurl to connect to ``address`` (its ``curl_sockaddr``: family,
    type, protocol and the address itself, resolved once, as curl's
    OPENSOCKETFUNCTION gives it), or None when that address is not public. TLS still
    names the host, so certificates are checked against the host, not the address."""
    family, kind, protocol, where = address
    if not is_public(str(where[0])):
        return None
    return socket.socket(family, kind, protocol)
