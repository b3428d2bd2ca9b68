"""``focuscrawl console``: the web console, served by uvicorn."""

from __future__ import annotations

import socket
from typing import Annotated

import typer

from focuscrawl.cli.common import engine_from
from focuscrawl.errors import ConfigError, check_tcp_port


def console_command(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option(help="Address to serve on: loopback unless you ask for another.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0: any free one).")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="FOCUSCRAWL_CONSOLE_TOKEN",
            help="The token actions need (default: a new random one, printed in the URL).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve a web console of the crawl: live numbers and alarms, the harvest chart, the
    frontier, hubs and authorities, errors; label pages, mark categories good and set the
    scope. Every read and action needs the token (the printed URL carries it). Prometheus
    metrics at /metrics (beyond loopback: with the token, as a bearer token). Ctrl-C ends
    it."""
    import uvicorn

    from focuscrawl.console import LOOPBACK, create_app, new_token

    check_tcp_port("--port", port)
    token = token or None  # an empty FOCUSCRAWL_CONSOLE_TOKEN (compose's default): a new one
    if token is not None and len(token) < 8:
        raise ConfigError("--token: at least 8 characters")
    token = token or new_token()
    loopback = host in LOOPBACK
    app = create_app(
        engine_from(ctx), token, hosts=LOOPBACK if loopback else ("*",), open_metrics=loopback
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot serve the console on {host}:{port}: {exc.strerror}") from exc
    # listening before the URL is printed: a client that reads it and connects at once
    # waits in the backlog until uvicorn accepts, instead of being refused (a test was)
    sock.listen(socket.SOMAXCONN)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"console: http://{shown}:{bound}/#token={token}", err=True)
    if loopback:
        typer.echo(f"metrics: http://{shown}:{bound}/metrics", err=True)
    else:
        typer.echo(f"metrics: http://{shown}:{bound}/metrics (with the token)", err=True)
        typer.echo(
            f"warning: serving beyond loopback on {host}, unencrypted: the token, which "
            "every read and action needs, crosses the network in clear",
            err=True,
        )
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
