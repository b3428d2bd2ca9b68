"""``focuscrawl cluster``: a local Citus cluster (a coordinator and workers on this
machine, each an embedded server of its own under ``FOCUSCRAWL_HOME/cluster``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import Group, settings_from
from focuscrawl.db.cluster import BASE_PORT, LocalCluster, citus_bin_dir
from focuscrawl.db.database import libpq_url
from focuscrawl.errors import ConfigError

app = typer.Typer(
    cls=Group,
    help="A local Citus cluster for trying the distributed layout on one machine.",
    no_args_is_help=True,
)

Port = Annotated[
    int | None,
    typer.Option(
        "--port",
        min=1024,
        max=65000,
        help=f"The coordinator's port; worker n listens on PORT + n (default {BASE_PORT}, "
        "or what the cluster was made with).",
        show_default=False,
    ),
]


def _home(ctx: typer.Context) -> Path:
    return settings_from(ctx).home_path / "cluster"


def _existing(ctx: typer.Context) -> LocalCluster:
    cluster = LocalCluster.existing(_home(ctx))
    if cluster is None:
        raise ConfigError(f"no cluster under {_home(ctx)}; make one with: focuscrawl cluster up")
    return cluster


@app.command()
def up(
    ctx: typer.Context,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=16,
            help="Workers of a new cluster (default 2); an existing one keeps its own.",
            show_default=False,
        ),
    ] = None,
    port: Port = None,
) -> None:
    """Start the cluster (making it on first use: Citus is built once, about 90 s) and
    print the coordinator's URL for FOCUSCRAWL_DATABASE_URL."""
    home = _home(ctx)
    cluster = LocalCluster.existing(home)
    if cluster is None:
        cluster = LocalCluster(
            home, citus_bin_dir(), workers=workers or 2, base_port=port or BASE_PORT
        )
    elif (workers is not None and workers != cluster.workers) or (
        port is not None and port != cluster.base_port
    ):
        raise ConfigError(
            f"the cluster under {home} has {cluster.workers} worker(s) from port "
            f"{cluster.base_port}; omit --workers/--port (add workers with: focuscrawl "
            "cluster add-worker), or remove it first: focuscrawl cluster down --remove"
        )
    url = libpq_url(cluster.up())
    workers_up = f"{cluster.workers} worker{'s' if cluster.workers != 1 else ''}"
    typer.echo(f"coordinator and {workers_up} up, ports {_ports(cluster)}")
    typer.echo(url)
    typer.echo(
        f"next: export FOCUSCRAWL_DATABASE_URL='{url}'; "
        "focuscrawl db upgrade && focuscrawl db distribute"
    )


@app.command("add-worker")
def add_worker(ctx: typer.Context) -> None:
    """Start one more worker and add it to the cluster; its shards come with a
    rebalance (`SELECT citus_rebalance_start()` on the coordinator)."""
    cluster = _existing(ctx)
    if not cluster.coordinator.status().running:
        raise ConfigError("the cluster is down; start it with: focuscrawl cluster up")
    cluster.add_worker()
    node = cluster.nodes[-1]
    typer.echo(
        f"{node.home.name} added on port {node.port}; move shards to it with: "
        "psql -c 'SELECT citus_rebalance_start()'"
    )


@app.command()
def status(ctx: typer.Context) -> None:
    """Each node: running or not, and whether the coordinator uses and reaches it (exit
    1 when a node is down)."""
    cluster = _existing(ctx)
    down = 0
    for node in cluster.status():
        if not node.running:
            down += 1
            typer.echo(f"{node.name}: port {node.port}, DOWN")
            continue
        note = ""
        if node.serving is False:
            note = ", but the coordinator does not use or reach it"
            down += 1
        typer.echo(f"{node.name}: port {node.port}, running (pid {node.pid}){note}")
    if down:
        raise typer.Exit(1)


@app.command()
def down(
    ctx: typer.Context,
    remove: Annotated[
        bool, typer.Option(help="Also delete the cluster's data (every node's).")
    ] = False,
) -> None:
    """Stop every node, workers first; the data stays unless --remove."""
    cluster = _existing(ctx)
    stopped = cluster.down()
    typer.echo(f"stopped: {', '.join(stopped)}" if stopped else "not running")
    if remove:
        cluster.remove()
        typer.echo(f"removed {cluster.home}")


def _ports(cluster: LocalCluster) -> str:
    return f"{cluster.base_port}-{cluster.base_port + len(cluster.nodes) - 1}"
