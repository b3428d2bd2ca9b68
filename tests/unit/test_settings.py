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


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("threads = [1, 2]", "threads = [1, 2]: input should be a valid integer"),
        ("threads = 2.7", "threads = 2.7: input should be a valid integer"),
        ("threads = 0", "threads = 0: input should be greater than or equal to 1"),
        ("proxy = 5", "proxy = 5: input should be a valid string"),
        ('proxy = "ftp://x"', "expected an http:// proxy"),
        ("host_delay = true", "host_delay = True: input should be a valid number"),
        ('host_delay = "inf"', "host_delay = 'inf': input should be a finite number"),
        ("host_delay = -1.0", "greater than or equal to 0"),
        ('allow_private_hosts = "maybe"', "input should be a valid boolean"),
        ('user_agent = ""', "user_agent = '': must not be blank"),
        ('user_agent = "a\\nb"', "control characters"),
        ("max_crawl_delay = 1e300", "less than or equal to 86400"),
        ("max_robots_redirects = -1", "greater than or equal to 0"),
    ],
)
def test_a_bad_config_value_is_one_line_naming_setting_source_and_range(
    tmp_path: Path, line: str, says: str
) -> None:
    (tmp_path / "focuscrawl.toml").write_text(line + "\n")
    with pytest.raises(ConfigError) as info:
        load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"config file {tmp_path / 'focuscrawl.toml'}: "), message
    assert says in message and "(accepted: " in message, message


@pytest.mark.parametrize(
    ("name", "raw"),
    [("HOST_DELAY", "nan"), ("HOST_DELAY", "inf"), ("HOST_DELAY", "1e999"), ("THREADS", "2.7"),
     ("THREADS", "many"), ("ALLOW_PRIVATE_HOSTS", "maybe"), ("MAX_RETRY_AFTER", "-1")],
)  # fmt: skip
def test_a_bad_environment_value_is_one_line_naming_the_variable(name: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=rf"^environment FOCUSCRAWL_{name}: ") as info:
        load_settings(env={f"FOCUSCRAWL_{name}": raw})
    assert "\n" not in str(info.value) and "(accepted: " in str(info.value)


def test_a_flag_is_checked_like_the_rest() -> None:
    with pytest.raises(ConfigError, match=r"^command line: host_delay = inf: .*finite"):
        load_settings({"host_delay": float("inf")}, env={})
    assert load_settings({"host_delay": 0.5}, env={}).host_delay == 0.5


def test_good_values_keep_their_meaning(tmp_path: Path) -> None:
    (tmp_path / "focuscrawl.toml").write_text(
        'threads = 8\nhost_delay = 2\nallow_private_hosts = true\nproxy = "http://127.0.0.1:8399"\n'
    )
    settings = load_settings(env={"FOCUSCRAWL_HOME": str(tmp_path)})
    assert (settings.threads, settings.host_delay, settings.allow_private_hosts) == (8, 2.0, True)
    assert settings.proxy == "http://127.0.0.1:8399"
    env = {"FOCUSCRAWL_HOME": str(tmp_path), "FOCUSCRAWL_ALLOW_PRIVATE_HOSTS": "off"}
    assert load_settings(env=env).allow_private_hosts is False


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("lease_seconds", 0.0, "--lease-seconds must be between 1 and"),
        ("lease_seconds", -5.0, "--lease-seconds must be between 1 and"),
        ("lease_seconds", float("nan"), "--lease-seconds must be between 1 and"),
        ("max_depth", -1, "--max-depth must be between 0 and 32767"),
        ("idle_exit_seconds", -1.0, "--idle-exit must be between 0 and"),
        ("idle_exit_seconds", float("inf"), "--idle-exit must be between 0 and"),
        ("host_delay", float("inf"), "host_delay must be between 0 and 3600"),
        ("revisit_after_seconds", float("nan"), "--revisit-after must be between 0 and"),
    ],
)
def test_a_crawl_refuses_values_that_would_stall_it(option: str, value: float, says: str) -> None:
    with pytest.raises(ConfigError, match=f"^{says}") as info:
        CrawlConfig(**{option: value}).check()  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
