"""server/settings.py as pydantic-settings reads it: what the ARENA_* tests in test_cli.py do
not pin already (empty variables, the exact words of a flag, what the environment may not reach,
assignment after construction)."""

from __future__ import annotations

import pytest

from ply_arena.server.settings import Settings, SettingsError


def test_an_empty_variable_means_the_default() -> None:
    env = {"ARENA_PORT": "", "ARENA_HOUSE_BOTS": "", "ARENA_RATED_CHALLENGES": ""}
    settings = Settings.from_env(env)
    assert (settings.port, settings.house_bots, settings.rated_challenges) == (
        8000,
        "default",
        False,
    )


@pytest.mark.parametrize("word", ["1", "true", "yes", "on", " ON ", "True"])
def test_a_flag_takes_its_true_words(word: str) -> None:
    assert Settings.from_env({"ARENA_HOUSE_SELF_PLAY": word}).house_self_play is True


@pytest.mark.parametrize("word", ["0", "false", "no", "off", " Off ", "FALSE"])
def test_a_flag_takes_its_false_words(word: str) -> None:
    env = {"ARENA_PRINT_ADMIN_TOKEN": word}
    assert Settings.from_env(env).print_admin_token is False


@pytest.mark.parametrize("word", ["t", "f", "y", "n", "2", "ture", " "])
def test_a_flag_refuses_every_other_word(word: str) -> None:
    # pydantic alone would take t/f/y/n: a typo would quietly mean one or the other.
    with pytest.raises(SettingsError, match=r"^ARENA_HOUSE_SELF_PLAY=.*: expected true or false"):
        Settings.from_env({"ARENA_HOUSE_SELF_PLAY": word})


def test_numbers_are_read_as_before() -> None:
    settings = Settings.from_env({"ARENA_PORT": " 9001 ", "ARENA_HEARTBEAT_S": "1e1"})
    assert (settings.port, settings.heartbeat_s) == (9001, 10.0)
    with pytest.raises(SettingsError, match=r"^ARENA_PORT='5\.5': expected a whole number$"):
        Settings.from_env({"ARENA_PORT": "5.5"})
    with pytest.raises(SettingsError, match=r"^ARENA_RESUME_WAIT_S='inf': expected a finite"):
        Settings.from_env({"ARENA_RESUME_WAIT_S": "inf"})


def test_text_is_kept_as_written() -> None:
    settings = Settings.from_env({"ARENA_ADMIN_TOKEN": " tok ", "ARENA_HOUSE_BOTS": "none"})
    assert (settings.admin_token, settings.house_bots) == (" tok ", "none")


def test_keyword_overrides_win_and_are_checked_too() -> None:
    env = {"ARENA_PORT": "9001", "ARENA_HOUSE_SELF_PLAY": "yes"}
    settings = Settings.from_env(env, port=9002, house_self_play=False, host=None)
    assert (settings.port, settings.house_self_play, settings.host) == (9002, False, "127.0.0.1")
    with pytest.raises(SettingsError, match=r"^ARENA_PORT='x': expected a whole number"):
        Settings.from_env({}, port="x")
    with pytest.raises(SettingsError, match=r"^ARENA_HEARTBEAT_S=0\.0: expected more than 0"):
        Settings.from_env({"ARENA_HEARTBEAT_S": "5"}, heartbeat_s=0)


def test_every_database_url_is_normalized() -> None:
    env = {"ARENA_DB_URL": "postgres://u@db.example/arena"}
    assert Settings.from_env(env).db_url == "postgresql+asyncpg://u@db.example/arena"
    assert Settings.from_env({}, db_url="x.db").db_url == "sqlite+aiosqlite:///x.db"
    assert Settings(db_url="sqlite:///y.db").db_url == "sqlite+aiosqlite:///y.db"


def test_only_the_exact_names_are_read(capsys: pytest.CaptureFixture[str]) -> None:
    env = {"arena_port": "9001", "ARENA_Port_Mixed_Test": "9002"}
    assert Settings.from_env(env).port == 8000
    assert "ARENA_Port_Mixed_Test is not an arena setting" in capsys.readouterr().err


def test_settings_built_directly_take_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests and benchmarks build Settings(...) from explicit values, whatever the shell holds.
    monkeypatch.setenv("ARENA_PORT", "9001")
    monkeypatch.setenv("ARENA_HOUSE_BOTS", "none")
    assert (Settings().port, Settings(host="h").house_bots) == (8000, "default")
    assert Settings.from_env().port == 9001  # from_env() without a mapping reads os.environ


def test_settings_built_directly_are_checked_the_same_way() -> None:
    with pytest.raises(SettingsError, match=r"^ARENA_RATE_LIMIT_BURST=0: expected at least 1$"):
        Settings(rate_limit_burst=0)
    with pytest.raises(TypeError, match="no field 'prot'"):
        Settings(prot=9001)  # type: ignore[call-arg]


def test_a_field_may_be_set_after_construction_and_is_checked() -> None:
    settings = Settings()
    settings.host, settings.port = "0.0.0.0", 9001
    settings.print_admin_token = False
    assert (settings.host, settings.port, settings.print_admin_token) == ("0.0.0.0", 9001, False)
    with pytest.raises(SettingsError, match=r"^ARENA_PORT=70000: expected a port, 0\.\.65535$"):
        settings.port = 70000
    assert settings.port == 9001  # a refused value leaves the old one
    with pytest.raises(SettingsError, match=r"^ARENA_HOUSE_SELF_PLAY='maybe': expected true"):
        settings.house_self_play = "maybe"  # type: ignore[assignment]
