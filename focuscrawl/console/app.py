"""``focuscrawl console``: a small Starlette app that watches and steers a running crawl.

Read-only endpoints (``GET /api/...``) return JSON built from the named statements the
live view and the report use (``monitor/dashboard``, ``report_relevance_by_fetch``,
``monitor/next_urls``, ``monitor/frontier``, ``monitor/errors``, the distiller's
``top_hubs`` and ``top_authorities``, the label suggestions). Actions (``POST``) change
the database only through the library functions the CLI calls (``label``, ``set_good``,
``save_scope``). Every ``/api`` request, read or action, needs the console's token in an
``Authorization: Bearer`` header: a header, not a cookie, so another site's page cannot
read or act through the browser. The page itself (no data in it) reads the token from
its URL's fragment, which browsers never send. ``/metrics`` needs the token too unless
the console listens on loopback only (Prometheus sends it as a bearer token).

Handlers are plain functions: Starlette runs them in its thread pool, so a slow query
never blocks the event loop. ``/metrics`` serves :class:`focuscrawl.monitor.metrics.CrawlMetrics`.
"""

from __future__ import annotations

import secrets
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, ValidationError
from sqlalchemy.engine import Engine
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as Scope_

from focuscrawl.crawler.scope import Scope, load_scope, save_scope
from focuscrawl.db.database import execute, plain_value, unreachable
from focuscrawl.db.queries import queries
from focuscrawl.distiller import latest_run, top
from focuscrawl.errors import FocuscrawlError, TaxonomyError, first_invalid
from focuscrawl.evaluation.metrics import moving_average, thin
from focuscrawl.monitor.dashboard import Watch, snapshot
from focuscrawl.monitor.metrics import CrawlMetrics
from focuscrawl.topics.labels import label, suggest
from focuscrawl.topics.taxonomy import load_tree, set_good

__all__ = ["ENDPOINTS", "LOOPBACK", "Console", "create_app", "new_token"]

LOOPBACK = ("127.0.0.1", "::1", "localhost")
PAGE = Path(__file__).with_name("page.html")
#: points of each harvest series sent to the page
CHART_POINTS = 600


#: (method, path, Console method): the routes, and the reference's list of them
ENDPOINTS: tuple[tuple[str, str, str], ...] = (
    ("GET", "/", "page"),
    ("GET", "/api/status", "status"),
    ("GET", "/api/harvest", "harvest"),
    ("GET", "/api/frontier", "frontier"),
    ("GET", "/api/errors", "errors"),
    ("GET", "/api/distiller", "distiller"),
    ("GET", "/api/suggestions", "suggestions"),
    ("GET", "/api/taxonomy", "taxonomy"),
    ("GET", "/api/scope", "scope"),
    ("POST", "/api/scope", "set_scope"),
    ("POST", "/api/label", "label"),
    ("POST", "/api/good", "mark_good"),
    ("GET", "/metrics", "metrics"),
)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _rows(engine: Engine, name: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    with engine.connect() as connection:
        result = execute(connection, queries[name], params or {})
        columns = list(result.keys())
        rows = [[plain_value(v) for v in row] for row in result.fetchmany(50)]
    return {"columns": columns, "rows": rows}


class Console:
    """The console's state: the database, the token, and the live view's watch."""

    def __init__(self, engine: Engine, token: str, window_s: float = 60.0) -> None:
        if not token:
            raise FocuscrawlError("the console's token must not be empty")
        self.engine = engine
        self.token = token
        self.watch = Watch(window_s=window_s)
        self.crawl_metrics = CrawlMetrics(engine)
        self._lock = threading.Lock()

    # -- reads --------------------------------------------------------------------------

    def page(self, request: Request) -> Response:
        """The console's page (open it with `#token=...` to act)."""
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    def status(self, request: Request) -> Response:
        """The live view's numbers (`monitor/dashboard`), rates over the last minute, the alarms,
        the newest model, the topic (the good categories) and the database."""
        snap = snapshot(self.engine)
        with self._lock:
            self.watch.add(snap)
            alarms = self.watch.alarms()
            pages_per_s = self.watch.pages_per_s()
            relevant_per_s = self.watch.acquisition_rate()
        with self.engine.connect() as connection:
            model = execute(connection, queries["newest_model_id"]).scalar()
            topic = list(execute(connection, queries["good_categories"]).scalars())
        return JSONResponse(
            {
                "database": self.engine.url.database,
                "topic": topic,
                "fetched": snap.fetched,
                "failed": snap.failed,
                "errors": snap.errors,
                "frontier": snap.frontier,
                "backlog": snap.unscored,
                "harvest_100": snap.avg_100,
                "harvest_1000": snap.avg_1000,
                "pages_per_s": pages_per_s,
                "relevant_per_s": relevant_per_s,
                "model": model,
                "alarms": {
                    "stagnation": alarms.stagnation,
                    "diffusion": alarms.diffusion,
                    "harvest": alarms.harvest,
                },
            }
        )

    def harvest(self, request: Request) -> Response:
        """R of every scored page in fetch order (`report_relevance_by_fetch`), thinned, with its
        moving averages over 100 and 1,000."""
        with self.engine.connect() as connection:
            values = [
                float(r)
                for r in execute(connection, queries["report_relevance_by_fetch"]).scalars()
            ]
        return JSONResponse(
            {
                "scored": len(values),
                "pages": thin(values, CHART_POINTS),
                "average_100": thin(moving_average(values, 100), CHART_POINTS),
                "average_1000": thin(moving_average(values, 1000), CHART_POINTS),
            }
        )

    def frontier(self, request: Request) -> Response:
        """The next URLs in claim order (`monitor/next_urls`) and documents by state
        (`monitor/frontier`)."""
        return JSONResponse(
            {
                "next": _rows(self.engine, "monitor/next_urls"),
                "states": _rows(self.engine, "monitor/frontier"),
            }
        )

    def errors(self, request: Request) -> Response:
        """Failures by HTTP status and error class (`monitor/errors`)."""
        return JSONResponse(_rows(self.engine, "monitor/errors"))

    def distiller(self, request: Request) -> Response:
        """The best hubs and authorities of the latest distiller run (`top_hubs`,
        `top_authorities`)."""
        try:
            run = latest_run(self.engine)
        except FocuscrawlError as exc:  # no distiller run yet
            return JSONResponse({"note": str(exc), "hubs": [], "authorities": []})
        hubs = top(self.engine, hubs=True, limit=15, run=run)
        authorities = top(self.engine, hubs=False, limit=15, run=run)
        return JSONResponse(
            {
                "note": None,
                "hubs": [[plain_value(v) for v in row] for row in hubs],
                "authorities": [[plain_value(v) for v in row] for row in authorities],
            }
        )

    def suggestions(self, request: Request) -> Response:
        """The pages whose labels would teach the most, as `label suggest` lists them."""
        return JSONResponse(
            [
                {"url": s.url, "title": s.title, "relevance": s.relevance, "why": s.why}
                for s in suggest(self.engine, 12)
            ]
        )

    def taxonomy(self, request: Request) -> Response:
        """Every category with its good mark, given or inherited."""
        with self.engine.connect() as connection:
            try:
                tree = load_tree(connection)
            except TaxonomyError:
                return JSONResponse([])  # none imported yet
        return JSONResponse(
            [
                {
                    "kcid": kcid,
                    "path": tree.path(kcid),
                    "good": tree.nodes[kcid].good,
                    "inherited": tree.is_good(kcid) and not tree.nodes[kcid].good,
                }
                for kcid in sorted(tree.nodes, key=tree.path)
                if kcid != 0
            ]
        )

    def scope(self, request: Request) -> Response:
        """The crawl's scope, as `crawl scope show` prints it."""
        with self.engine.connect() as connection:
            scope = load_scope(connection)
        return JSONResponse({"scope": scope.as_dict(), "lines": scope.describe()})

    def metrics(self, request: Request) -> Response:
        """The crawl's Prometheus metrics, read from the database."""
        return Response(
            generate_latest(self.crawl_metrics.registry), media_type=CONTENT_TYPE_LATEST
        )

    # -- actions ----------------------------------------------------------------------------

    def allowed(self, request: Request) -> bool:
        """Whether the request carries the console's token."""
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            value.strip().encode(), self.token.encode()
        )

    async def _act(self, request: Request, action: Any) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body must be JSON"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        try:
            result = await run_in_threadpool(action, body)
        except (FocuscrawlError, TypeError, ValueError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(result)

    async def label(self, request: Request) -> Response:
        """Label pages: `{"urls": [...], "good": true|false, "category": optional}`, as `focuscrawl
        label` does."""

        def run(body: dict[str, Any]) -> Any:
            urls, good = body.get("urls"), body.get("good")
            if not isinstance(urls, list) or not urls or not isinstance(good, bool):
                raise ValueError('give {"urls": [...], "good": true|false}')
            done = label(self.engine, [str(u) for u in urls], good, body.get("category"))
            return [{"url": d.url, "good": d.good, "category": d.category} for d in done]

        return await self._act(request, run)

    async def mark_good(self, request: Request) -> Response:
        """Mark a category good or not: `{"category": "path or kcid", "good": true|false}`."""

        def run(body: dict[str, Any]) -> Any:
            category, good = body.get("category"), body.get("good", True)
            if not isinstance(category, str | int) or not isinstance(good, bool):
                raise ValueError('give {"category": "path.or.kcid", "good": true|false}')
            return {"marked": set_good(self.engine, [str(category)], good), "good": good}

        return await self._act(request, run)

    async def set_scope(self, request: Request) -> Response:
        """Change the scope: fields of `crawl scope set` (`allow_domains`, `deny_domains`,
        `include`, `exclude`, `max_depth`, `max_pages_per_site`, `clear`)."""

        def run(body: dict[str, Any]) -> Any:
            known = set(Scope().as_dict())
            unknown = set(body) - known - {"clear"}
            if unknown:
                raise ValueError(f"unknown scope fields: {', '.join(sorted(unknown))}")
            change = _checked(ScopeChange, body)
            with self.engine.connect() as connection:
                scope = Scope() if change.clear else load_scope(connection)
            given = change.model_dump(exclude={"clear"}, exclude_unset=True)
            scope = scope.merged(**given)
            save_scope(self.engine, scope)
            return {"scope": scope.as_dict(), "lines": scope.describe()}

        return await self._act(request, run)


class ScopeChange(BaseModel):
    """The body of ``POST /api/scope``: the fields of ``crawl scope set``, each of its
    JSON type (a list of strings, a whole number), checked before anything changes."""

    model_config = ConfigDict(extra="forbid", strict=True)

    allow_domains: list[str] | None = None
    deny_domains: list[str] | None = None
    include: list[str] | None = None
    exclude: list[str] | None = None
    max_depth: int | None = None
    max_pages_per_site: int | None = None
    clear: bool = False


def _checked(model: type[ScopeChange], body: dict[str, Any]) -> ScopeChange:
    """``body`` as ``model``, or a ValueError naming the first field that is not of its
    type, in one line."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise ValueError(first_invalid(exc)) from None


class _TokenGuard:
    """Every ``/api`` request needs the console's token, and ``/metrics`` too unless it is
    open (the console listens on loopback): 401 with one line of JSON otherwise."""

    def __init__(self, app: ASGIApp, console: Console, open_metrics: bool) -> None:
        self.app = app
        self.console = console
        self.open_metrics = open_metrics

    async def __call__(self, scope: Scope_, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            guarded = path.startswith("/api/") or (path == "/metrics" and not self.open_metrics)
            if guarded and not self.console.allowed(Request(scope)):
                what = "the metrics need" if path == "/metrics" else "this needs"
                response = JSONResponse(
                    {"error": f"{what} the console's token (Authorization: Bearer ...)"},
                    status_code=401,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _HostGuard:
    """Requests whose Host header names another host than ``hosts`` get 400 (a page of
    another site cannot reach a loopback console by DNS rebinding). Unlike Starlette's
    TrustedHostMiddleware it reads an IPv6 literal's brackets (``[::1]:8765``)."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.hosts = {h.lower().strip("[]") for h in hosts}

    async def __call__(self, scope: Scope_, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and "*" not in self.hosts:
            given = Headers(scope=scope).get("host", "").lower()
            host = given[1:].partition("]")[0] if given.startswith("[") else given.partition(":")[0]
            if host not in self.hosts:
                await PlainTextResponse("Invalid host header", status_code=400)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


async def _refused(request: Request, exc: Exception) -> Response:
    """A FocuscrawlError (409) or a database away (503) as one line of JSON."""
    if isinstance(exc, FocuscrawlError):
        return JSONResponse({"error": str(exc)}, status_code=409)
    return JSONResponse({"error": str(unreachable(exc))}, status_code=503)


def create_app(
    engine: Engine, token: str, hosts: tuple[str, ...] = LOOPBACK, open_metrics: bool = True
) -> Starlette:
    """The console's ASGI app. Requests naming another Host than ``hosts`` are refused
    (a page of another site cannot reach a loopback console by DNS rebinding); every
    ``/api`` request needs ``token``, and ``/metrics`` too unless ``open_metrics``."""
    console = Console(engine, token)
    routes = [
        Route(path, getattr(console, handler), methods=[method])
        for method, path, handler in ENDPOINTS
    ]
    middleware = [
        Middleware(_HostGuard, hosts=hosts),
        Middleware(_TokenGuard, console=console, open_metrics=open_metrics),
    ]
    handlers = {
        FocuscrawlError: _refused,
        sa.exc.OperationalError: _refused,
        sa.exc.InterfaceError: _refused,
    }
    return Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)
