from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.crawler.config import BACKLOG_SHARE, POLITE_BACKLOG_SHARE, CrawlConfig, Mode
from focuscrawl.errors import ConfigError
from focuscrawl.settings import load_settings

REPO = Path(__file__).resolve().parents[2]


def test_precedence_is_default_then_file_then_env_then_flag(tmp_path: Path) -> None:
    config = tmp_path / "focuscrawl.toml"
    config.write_text('database_url = "postgresql://file/db"\n')
    env = {"FOCUSCRAWL_HOME": str(tmp_path)}
    assert load_settings(env=env).database_url == "postgresql://file/db"
    env["FOCUSCRAWL_DATABASE_URL"] = "postgresql://env/db"
    assert load_settings(env=env).database_url == "postgresql://env/db"
    flag = load_settings({"database_url": "postgresql://flag/db"}, env=env)
    assert flag.database_url == "postgresql://flag/db"
    assert load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path / "none")}).database_url is None


def test_home_defaults_to_user_data_dir_and_follows_env(tmp_path: Path) -> None:
    assert load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)}).home_path == tmp_path
    assert load_settings(env={}).home_path.name == "focuscrawl"


def test_unknown_key_in_config_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "focuscrawl.toml").write_text('databse_url = "x"\n')
    with pytest.raises(ConfigError, match=r"unknown setting.*databse_url"):
        load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)})


def test_broken_config_file_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "focuscrawl.toml").write_text("database_url = \n")
    with pytest.raises(ConfigError, match="not valid TOML") as info:
        load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)})
    assert "\n" not in str(info.value)


def test_explicit_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(env={"FOCUSCRAWL_CONFIG": str(tmp_path / "missing.toml")})


@pytest.mark.parametrize(
    ("raw", "size"), [("512MB", "512MB"), (" 2GB ", "2GB"), ("128kB", "128kB"), ("1TB", "1TB")]
)
def test_shared_buffers_takes_postgresql_sizes(raw: str, size: str) -> None:
    assert load_settings(env={"FOCUSCRAWL_PG_SHARED_BUFFERS": raw}).pg_shared_buffers == size


@pytest.mark.parametrize("raw", ["2G", "512", "1.5GB", "12XB", "64kB", "-1MB"])
def test_shared_buffers_rejects_what_postgresql_would_not_start_with(raw: str) -> None:
    with pytest.raises(ConfigError, match="FOCUSCRAWL_PG_SHARED_BUFFERS") as info:
        load_settings(env={"FOCUSCRAWL_PG_SHARED_BUFFERS": raw})
    assert "\n" not in str(info.value)


def test_config_file_strings_are_parsed_like_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "focuscrawl.toml"
    config.write_text('pg_shared_buffers = "1GB"\nallow_private_hosts = "0"\nthreads = "8"\n')
    settings = load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)})
    assert settings.pg_shared_buffers == "1GB"
    assert settings.allow_private_hosts is False  # the string "0", not a true value
    assert settings.threads == 8
    config.write_text('pg_shared_buffers = "lots"\n')
    with pytest.raises(ConfigError, match=r"focuscrawl.toml: pg_shared_buffers = 'lots'"):
        load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)})


def test_a_polite_crawl_lets_its_backlog_grow_faster_unless_told(tmp_path: Path) -> None:
    env = {"FOCUSCRAWL_HOME": str(tmp_path)}
    polite = CrawlConfig.from_settings(load_settings(env=env), mode=Mode.SOFT)
    assert polite.host_delay == 1.0  # the default
    assert polite.backlog_share == POLITE_BACKLOG_SHARE > BACKLOG_SHARE
    env["FOCUSCRAWL_HOST_DELAY"] = "0"
    assert CrawlConfig.from_settings(load_settings(env=env)).backlog_share == BACKLOG_SHARE
    told = CrawlConfig.from_settings(load_settings(env=env), backlog_share=0.5)
    assert told.backlog_share == 0.5
    flag = CrawlConfig.from_settings(load_settings({"host_delay": 2.0}, env=env))
    assert flag.backlog_share == POLITE_BACKLOG_SHARE


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_backlog_share_outside_0_to_1_is_a_one_line_error(tmp_path: Path, share: float) -> None:
    config = CrawlConfig.from_settings(
        load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)}), backlog_share=share
    )
    with pytest.raises(
        ConfigError, match=rf"^--backlog-share must be between 0 and 1, not {share}$"
    ):
        config.check()
