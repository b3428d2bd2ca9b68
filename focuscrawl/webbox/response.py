"""What the web-in-a-box answers: a status, headers and a body, perhaps late or never."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Response", "html_page"]


@dataclass(frozen=True)
class Response:
    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    #: seconds to wait before answering (slow servers)
    delay: float = 0.0
    #: never answer; the client's read timeout has to end it
    hang: bool = False
    #: set when the response stands for a connection the origin refused
    meta: dict[str, str] = field(default_factory=dict)


def html_page(title: str, body_html: str, charset: str = "utf-8") -> bytes:
    """A small well-formed page (``title`` must already be escaped)."""
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="{charset}"><title>{title}</title></head>\n'
        f"<body><h1>{title}</h1>\n{body_html}\n</body></html>\n"
    ).encode(charset)
