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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from focuscrawl.errors import ConfigError

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
    """A setting's name, default, parser and the help a user reads."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    @property
    def env_var(self) -> str:
        return "FOCUSCRAWL_" + self.name.upper()


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


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "database_url",
        None,
        "PostgreSQL URL (postgresql://user:pass@host/db). Unset: focuscrawl starts and "
        "uses its own embedded server, with data under FOCUSCRAWL_HOME.",
    ),
    Setting(
        "home",
        None,
        "Directory for the embedded server's data, corpora and reports "
        "(default: the user data dir, e.g. ~/.local/share/focuscrawl).",
    ),
    Setting(
        "corpora",
        None,
        "Directory holding corpus archives such as wikispeedia.tar.gz (default: "
        "../shared/corpora beside the project checkout, or beside the current directory).",
    ),
    Setting(
        "proxy",
        None,
        "HTTP proxy for every fetch, e.g. the web-in-a-box at http://127.0.0.1:8399. "
        "Hosts are then resolved by the proxy, not checked for private addresses.",
    ),
    Setting(
        "user_agent",
        "focuscrawl/0.1 (+https://example.invalid/focuscrawl)",
        "User-Agent header of every request; its first word is the robots.txt agent name.",
    ),
    Setting(
        "host_delay",
        1.0,
        "Minimum seconds between two requests to one host (robots.txt Crawl-delay may raise it).",
        float,
    ),
    Setting("threads", 16, "Worker threads of a crawler process.", int),
    Setting(
        "allow_private_hosts",
        False,
        "Crawl hosts that resolve to private, loopback or link-local addresses (0/1).",
        lambda raw: raw.strip().lower() in ("1", "true", "yes", "on"),
    ),
    Setting(
        "pg_shared_buffers",
        None,
        "shared_buffers of the embedded server, e.g. 2GB, applied at its next start "
        "(default: a quarter of the machine's or container's memory, 128MB to 8GB).",
        parse_memory_size,
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

    ``overrides`` holds command-line flags; ``None`` values mean "not given".
    """
    env = os.environ if env is None else env
    config = _read_config(_config_path(env), required="FOCUSCRAWL_CONFIG" in env)
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        value = setting.default
        if setting.name in config:
            value = config[setting.name]
            if isinstance(value, str) and setting.parse is not str:
                try:
                    value = setting.parse(value)
                except ValueError as exc:
                    raise ConfigError(
                        f"config file {_config_path(env)}: {setting.name} = {value!r}: {exc}"
                    ) from exc
        raw = env.get(setting.env_var)
        if raw not in (None, ""):
            try:
                value = setting.parse(raw)
            except ValueError as exc:
                raise ConfigError(f"{setting.env_var}={raw!r}: {exc}") from exc
        if overrides and overrides.get(setting.name) is not None:
            value = overrides[setting.name]
        values[setting.name] = value
    return Settings(values)
