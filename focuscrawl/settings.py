"""One declarative table of settings, and how their values are resolved.

Precedence, lowest first: the default, the config file, the environment
(``FOCUSCRAWL_<NAME>``), then a command-line flag. The config file is TOML,
``$FOCUSCRAWL_HOME/focuscrawl.toml`` unless ``FOCUSCRAWL_CONFIG`` names another;
its keys are the setting names below.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import platformdirs
from annotated_types import Ge, Le
from pydantic import AfterValidator, Field, TypeAdapter, ValidationError

from focuscrawl.errors import ConfigError, first_invalid

__all__ = [
    "SETTINGS",
    "Setting",
    "Settings",
    "default_of",
    "load_settings",
    "parse_memory_size",
]


@dataclass(frozen=True)
class Setting:
    """A setting's name, default, accepted values and the help a user reads.

    ``kind`` is a type that pydantic validates every value against, wherever it comes
    from: a string (the environment, or a string in the config file) is parsed as
    pydantic parses strings; any other value (a TOML number, boolean or array, or a
    flag) must already be of the type (strict: ``true`` is no number, ``2.7`` no
    integer). Ranges are part of the type (``Field(ge=..., le=...)``).
    """

    name: str
    default: Any
    help: str
    kind: Any = str

    @property
    def env_var(self) -> str:
        return "FOCUSCRAWL_" + self.name.upper()

    @property
    def adapter(self) -> TypeAdapter[Any]:
        return _adapter(self.kind)

    @property
    def accepts(self) -> str:
        """What values the setting takes, for a person: its type and range."""
        return _describe(self.kind)

    def validate(self, value: Any, source: str) -> Any:
        """``value`` as the setting holds it, or a one-line ConfigError that names the
        setting, where the value came from (``source``) and what is accepted."""
        try:
            if isinstance(value, str):
                return self.adapter.validate_strings(value)
            return self.adapter.validate_python(value, strict=True)
        except ValidationError as exc:
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise ConfigError(
                f"{source}: {self.name} = {shown}: {first_invalid(exc)} (accepted: {self.accepts})"
            ) from None


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def _describe(kind: Any) -> str:
    """``kind`` in words, from its type, ``Field`` bounds and description: 'finite
    seconds, 0 to 3600', 'an integer, 1 to 512, or unset' and the like."""
    args = get_args(kind)
    base, extras = (args[0], args[1:]) if get_origin(kind) is Annotated else (kind, ())
    optional = False
    if get_origin(base) in (Union, UnionType):
        members = [a for a in get_args(base) if a is not type(None)]
        optional = len(members) < len(get_args(base))
        base = members[0]
        if get_origin(base) is Annotated:
            base, extras = get_args(base)[0], (*get_args(base)[1:], *extras)
    words = {int: "an integer", float: "a finite number", bool: "a boolean (true/false, 1/0)"}
    low = high = None
    notes: list[str] = []
    for extra in extras:
        for item in getattr(extra, "metadata", [extra]):
            if isinstance(item, Ge):
                low = f"{item.ge}"
            elif isinstance(item, Le):
                high = f"{item.le}"
        described = getattr(extra, "description", None)
        if described:
            notes.append(str(described))
    # a description says what the value looks like, in place of its type's name
    text = notes.pop() if notes else words.get(base, "text")
    if low is not None and high is not None:
        notes.insert(0, f"{low} to {high}")
    elif low is not None:
        notes.insert(0, f"at least {low}")
    elif high is not None:
        notes.insert(0, f"at most {high}")
    text += (", " + ", ".join(notes)) if notes else ""
    return text + (", or unset" if optional else "")


def _default_home() -> str:
    return str(platformdirs.user_data_path("focuscrawl", appauthor=False))


_MEMORY_SIZE = re.compile(r"\s*([0-9]+)\s*(kB|MB|GB|TB)\s*")


def parse_memory_size(raw: str) -> str:
    """A PostgreSQL memory size such as ``512MB`` or ``2GB``, of at least 128 kB."""
    match = _MEMORY_SIZE.fullmatch(raw)
    if match is None:
        raise ValueError("not a PostgreSQL memory size such as 512MB or 2GB (units kB, MB, GB, TB)")
    number, unit = int(match.group(1)), match.group(2)
    if number * {"kB": 1, "MB": 2**10, "GB": 2**20, "TB": 2**30}[unit] < 128:
        raise ValueError("PostgreSQL needs at least 128kB")
    return f"{number}{unit}"


def _http_proxy(raw: str) -> str:
    """An ``http://host[:port]`` forward proxy (the web-in-a-box is one)."""
    scheme, _, rest = raw.partition("://")
    if scheme.lower() != "http" or not rest.strip("/"):
        raise ValueError("expected an http:// proxy such as http://127.0.0.1:8399")
    return raw


def _one_line(raw: str) -> str:
    if not raw.strip():
        raise ValueError("must not be blank")
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise ValueError("control characters are not allowed")
    return raw


#: a path or a URL: not empty, one line
_Text = Annotated[str, AfterValidator(_one_line)]
#: seconds, finite, within a range
_Seconds = partial(Field, allow_inf_nan=False, description="finite seconds")

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "database_url",
        None,
        "PostgreSQL URL (postgresql://user:pass@host/db). Unset: focuscrawl starts and "
        "uses its own embedded server, with data under FOCUSCRAWL_HOME.",
        _Text | None,
    ),
    Setting(
        "database",
        None,
        "Name of the database to use on the server, in place of the URL's (unset: the "
        "URL's; on the embedded server, focuscrawl). The demo leaves its soft crawl in "
        "focuscrawl_demo_soft.",
        Annotated[
            str,
            Field(
                pattern=r"^[A-Za-z_][A-Za-z0-9_$-]{0,62}$",
                description="a database name: a letter or _, then letters, digits, _ $ -",
            ),
        ]
        | None,
    ),
    Setting(
        "home",
        None,
        "Directory for the embedded server's data, corpora and reports "
        "(default: the user data dir, e.g. ~/.local/share/focuscrawl).",
        _Text | None,
    ),
    Setting(
        "corpora",
        None,
        "Directory holding corpus archives such as wikispeedia.tar.gz; when set, the only "
        "place looked (default: ../shared/corpora beside the project checkout, or beside "
        "the current directory).",
        _Text | None,
    ),
    Setting(
        "proxy",
        None,
        "HTTP proxy for every fetch, e.g. the web-in-a-box at http://127.0.0.1:8399. "
        "Hosts are then resolved by the proxy, not checked for private addresses.",
        Annotated[_Text, AfterValidator(_http_proxy), Field(description="an http://host:port URL")]
        | None,
    ),
    Setting(
        "user_agent",
        "focuscrawl/0.1 (+https://example.invalid/focuscrawl)",
        "User-Agent header of every request; its first word is the robots.txt agent name.",
        Annotated[
            _Text, Field(max_length=512, description="one line of text, at most 512 characters")
        ],
    ),
    Setting(
        "host_delay",
        1.0,
        "Minimum seconds between two requests to one host (robots.txt Crawl-delay may raise it).",
        Annotated[float, _Seconds(ge=0, le=3600)],
    ),
    Setting(
        "threads", 16, "Worker threads of a crawler process.", Annotated[int, Field(ge=1, le=512)]
    ),
    Setting(
        "allow_private_hosts",
        False,
        "Crawl hosts that resolve to private, loopback or link-local addresses (0/1).",
        bool,
    ),
    Setting(
        "max_crawl_delay",
        300.0,
        "The longest robots.txt Crawl-delay honoured; a site asking more is asked at this "
        "delay (a cap on what a remote server can ask for).",
        Annotated[float, _Seconds(ge=0, le=86_400)],
    ),
    Setting(
        "max_retry_after",
        86_400.0,
        "The longest Retry-After (of a 429 or 503) honoured before a host is asked again; "
        "a longer one counts as this.",
        Annotated[float, _Seconds(ge=0, le=7 * 86_400)],
    ),
    Setting(
        "max_robots_bytes",
        500_000,
        "robots.txt is read up to this many bytes (RFC 9309 asks for at least 500 KiB); "
        "rules past it are ignored.",
        Annotated[int, Field(ge=1_000, le=10_000_000)],
    ),
    Setting(
        "max_robots_redirects",
        5,
        "Redirects of a robots.txt followed, one each turn of the host (RFC 9309: at least "
        "five); past them the file counts as unavailable, like a 404: everything allowed.",
        Annotated[int, Field(ge=0, le=20)],
    ),
    Setting(
        "pg_shared_buffers",
        None,
        "shared_buffers of the embedded server, e.g. 2GB, applied at its next start "
        "(default: a quarter of the machine's or container's memory, 128MB to 8GB).",
        Annotated[
            str,
            AfterValidator(parse_memory_size),
            Field(description="a PostgreSQL size of at least 128kB, such as 512MB or 2GB"),
        ]
        | None,
    ),
)

_BY_NAME = {s.name: s for s in SETTINGS}


def default_of(name: str) -> Any:
    """A setting's default: the one place it is written (configs take it from here)."""
    return _BY_NAME[name].default


@dataclass(frozen=True)
class Settings:
    """Resolved settings; build with :func:`load_settings`."""

    values: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def home_path(self) -> Path:
        return Path(self.values["home"] or _default_home()).expanduser()


def _config_path(env: Mapping[str, str]) -> Path:
    explicit = env.get("FOCUSCRAWL_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    home = env.get("FOCUSCRAWL_HOME") or _default_home()
    return Path(home).expanduser() / "focuscrawl.toml"


def _read_config(path: Path, required: bool) -> dict[str, Any]:
    if not path.exists():
        if required:
            raise ConfigError(f"config file {path} does not exist")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    unknown = sorted(set(data) - set(_BY_NAME))
    if unknown:
        raise ConfigError(
            f"config file {path}: unknown setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(_BY_NAME))}"
        )
    return data


def load_settings(
    overrides: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    """Resolve every setting: default < config file < environment < ``overrides``.

    ``overrides`` holds command-line flags; ``None`` values mean "not given". Every
    value is validated against its setting's type and range where it comes from: a bad
    one is a one-line ConfigError naming the setting, its source and what is accepted.
    """
    env = os.environ if env is None else env
    config = _read_config(_config_path(env), required="FOCUSCRAWL_CONFIG" in env)
    path = _config_path(env)
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        value = setting.default
        if setting.name in config:
            value = setting.validate(config[setting.name], f"config file {path}")
        raw = env.get(setting.env_var)
        if raw not in (None, ""):
            value = setting.validate(raw, f"environment {setting.env_var}")
        if overrides and overrides.get(setting.name) is not None:
            value = setting.validate(overrides[setting.name], "command line")
        values[setting.name] = value
    return Settings(values)
