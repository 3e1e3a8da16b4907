"""The ``canasta scenario`` command's contract (docs/scenarios.md): exit 0, 1 or 2; and the
command line's answers to bad input: a line on stderr and exit 2, never a traceback."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli import build_parser, main

GOOD = Path(__file__).parents[1] / "scenarios" / "classic" / "pile_frozen_needs_pair.json"


DRAW = [{"seat": 0, "do": "draw"}]
PLAY = {"entry": "classic", "players": 4, "deal": {}, "steps": DRAW}


def write(tmp_path: Path, data: object, name: str = "s.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_a_passing_scenario_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", str(GOOD)]) == 0
    assert "ok" in capsys.readouterr().out


def test_a_failing_expectation_exits_1_and_names_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(GOOD.read_text())
    data["steps"][0]["then"]["hand_count"] = {"0": 99}
    assert main(["scenario", str(write(tmp_path, data))]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "step 1 hand_count[0]" in out and "99" in out and "12" in out


def test_an_unexpected_refusal_exits_1_with_the_rule_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(GOOD.read_text())
    data["steps"][1]["expect"] = "ok"
    assert main(["scenario", str(write(tmp_path, data))]) == 1
    assert "R-INIT-1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ([1, 2], "a scenario is a JSON object"),
        ({"entry": "bridge", "players": 4}, "unknown entry"),
        ({"entry": "classic", "players": 7}, "'players' must be one of"),
        ({"entry": "classic", "players": 5}, "'teams' is required"),
        ({**PLAY, "deal": {"hands": {"0": ["ZZ"]}}}, "unknown card"),
        ({**PLAY, "deal": {"hands": {"0": ["KH/3"]}}}, "KH/3"),
        ({**PLAY, "deal": {"cut": 0}}, "'cut' is 1..107"),
        ({**PLAY, "steps": [{"seat": 0, "do": "fly"}]}, "unknown action"),
        ({**PLAY, "steps": [{"seat": 9, "do": "draw"}]}, "'seat' is 0..3"),
        (
            {**PLAY, "steps": [{"seat": 0, "do": "draw", "then": {"colour": 1}}]},
            "unknown check 'colour'",
        ),
        ({**PLAY, "expect_end": {"deal_overr": True}}, "unknown check 'deal_overr'"),
        # The runner must not pass what it did not play.
        ({**PLAY, "turns": []}, "unknown top-level key 'turns'"),
        ({**PLAY, "steps": [{"seat": 0, "do": "draw", "thne": {}}]}, "unknown step key 'thne'"),
        ({**PLAY, "deal": {"dealr": 3}}, "unknown key 'dealr'"),
        ({"entry": "classic", "players": 4, "steps": DRAW}, "neither 'deal' nor 'deals'"),
        ({**PLAY, "deals": [{"deal": {}, "steps": DRAW}]}, "either 'deal' or 'deals', not both"),
        ({"entry": "classic", "players": 4, "deal": {}}, "checks nothing"),
        (
            {"entry": "classic", "players": 4, "deals": [{"deal": {}}, {"deal": {}}]},
            "checks nothing",
        ),
        ({"entry": "classic", "players": 4, "deals": []}, "'deals' is a non-empty list"),
        ({"entry": "classic", "players": 4, "deals": [{"deal": {}, "stepz": []}]}, "'stepz'"),
        ({"entry": "classic", "players": 4, "deals": [{"steps": DRAW}]}, "'deal' is required"),
        ({**PLAY, "target": 3000}, "no other target"),
    ],
)
def test_a_malformed_file_exits_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: object, message: str
) -> None:
    assert main(["scenario", str(write(tmp_path, content))]) == 2
    assert message in capsys.readouterr().err


def test_a_folder_runs_every_scenario_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, json.loads(GOOD.read_text()), "a.json")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", json.loads(GOOD.read_text()), "b.json")
    (tmp_path / "notes.md").write_text("not a scenario")
    assert main(["scenario", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("ok ") == 2 and "a.json" in out and "sub/b.json" in out


def test_a_folder_without_scenarios_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scenario", str(tmp_path)]) == 2
    assert "no *.json scenario file" in capsys.readouterr().err


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_json_output_holds_the_final_state(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "--json", str(GOOD)]) == 0
    out = capsys.readouterr().out
    report = json.loads(out[out.index("{") :])
    assert report["ok"] is True and report["turn"] == 1 and report["pile"]["top"] == "9D/1"


def test_the_console_script_is_installed() -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "canasta"), "scenario", str(GOOD)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    """``canasta demo | head -3``: the demo's output outgrows the pipe and head leaves."""
    done = subprocess.run(
        f"{Path(sys.executable).parent / 'canasta'} demo --seed 5 --max-deals 3 | head -3",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    assert len(done.stdout.splitlines()) == 3
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("args", "sides"),
    [(["--players", "4"], ["A", "B"]), (["--entry", "extra_six", "--players", "6"], ["A", "B"])],
)
def test_the_demo_plays_a_whole_game_and_prints_logs_and_scores(
    capsys: pytest.CaptureFixture[str], args: list[str], sides: list[str]
) -> None:
    assert main(["demo", "--seed", "7", *args]) == 0
    out = capsys.readouterr().out
    assert "== deal 1:" in out and "public discard log:" in out and "turned up" in out
    assert "game over after" in out and "final totals:" in out
    for side in sides:
        assert f"\n    {side} " in out  # a score-table row per side


GAME = Path(__file__).parents[1] / "scenarios" / "game"
SHARED_WIN = GAME / "r-game-1_classic_equal_totals_at_the_target_share_the_win.json"
SIX = GAME / "r-deal-2_r-seat-2_six_players_dealer_and_sit_outs_rotate_over_three_deals.json"


def test_a_game_that_ends_before_its_last_listed_deal_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(SHARED_WIN.read_text())
    data["deals"].append({"deal": {}, "steps": DRAW})
    assert main(["scenario", str(write(tmp_path, data))]) == 1
    assert "deal 3 start: expected 'a deal to open', got 'the game is finished'" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("key", "wrong", "message"),
    [("dealer", 3, "deal 2 dealer: expected 3, got 2"), ("sit_out", [1, 3], "expected [1, 3]")],
)
def test_a_later_deal_s_dealer_and_sit_out_are_expectations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, wrong: object, message: str
) -> None:
    data = json.loads(SIX.read_text())
    data["deals"][1]["deal"][key] = wrong
    assert main(["scenario", str(write(tmp_path, data))]) == 1
    assert message in capsys.readouterr().out


def test_a_malformed_file_is_named_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"entry": "bridge", "players": 4})
    assert main(["scenario", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count(str(path)) == 1, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--entry", "bridge"], "unknown entry 'bridge'"),
        (["--players", "9"], "classic is played by 2, 3, 4, 5, 6 players, not 9"),
    ],
)
def test_the_demo_refuses_a_bad_set_up_in_a_line_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["demo", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("canasta demo: error: ") and message in err
    assert "Traceback" not in err


def test_the_demo_refuses_a_data_dir_it_cannot_make_in_a_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")  # a file, not a folder: nothing can be made under it
    assert main(["demo", "--data-dir", str(tmp_path / "file" / "store")]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"canasta demo: error: --data-dir {tmp_path / 'file' / 'store'}: Not a directory\n"
    )
    assert captured.out == ""  # nothing played, nothing printed


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CANASTA_LOG_LEVEL": "loud"}, "CANASTA_LOG_LEVEL: Input should be 'debug'"),
        ({"CANASTA_CORS_ORIGINS": "*"}, "CANASTA_CORS_ORIGINS: Value error, CORS origin '*'"),
        (
            {"DATABASE_URL": "", "CANASTA_READ_DATABASE_URL": "postgresql://h/db"},
            "CANASTA_READ_DATABASE_URL needs a PostgreSQL primary",
        ),
    ],
)
def test_a_bad_setting_in_the_environment_is_named_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    message: str,
) -> None:
    monkeypatch.setenv("CANASTA_DATA_DIR", str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for command in (["audit", "00000000-0000-0000-0000-000000000000"], ["keys", "list"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith("canasta: a setting of the environment is wrong: "), err
        assert message in err, err


def test_an_unsupported_database_url_is_not_called_postgresql(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", "mysql://ann:secret@db.example/games")
    assert main(["grant-auditor", "ann"]) == 2
    err = capsys.readouterr().err
    assert "cannot open the store (mysql://db.example/games)" in err, err
    assert "PostgreSQL" not in err and "secret" not in err


def test_keys_without_a_command_names_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["keys"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "required: {new,public,rotate,list}" in err and "keys_command" not in err


def test_every_option_of_every_command_says_what_it_is() -> None:
    """``canasta COMMAND --help`` explains each argument (docs/operations.md, docs/bots.md)."""

    def commands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, Any]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from commands(sub, f"{prefix} {name}")
            elif not isinstance(action, argparse._HelpAction):
                yield prefix, action

    silent = [
        f"{command}: {action.option_strings or action.dest}"
        for command, action in commands(build_parser(), "canasta")
        if not action.help
    ]
    assert not silent, silent


@pytest.mark.parametrize("command", ["project", "bots"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_a_lease_retry_of_no_seconds_is_refused_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, value: str
) -> None:
    """``--retry-seconds 0`` (or less) would try for the lease without pause, as fast as the
    lock answers, while another process leads: refused before anything is opened."""
    monkeypatch.setenv("DATABASE_URL", "memory")  # never a store of the machine's, whatever
    with pytest.raises(SystemExit) as exit_:
        main([command, "--retry-seconds", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"canasta {command}: error: argument --retry-seconds: " in err
    assert "seconds" in err.splitlines()[-1] and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["demo", "--max-deals", "0"], "--max-deals"),  # would play nothing and exit 0
        (["demo", "--max-deals", "-3"], "--max-deals"),
        (["demo", "--max-deals", "many"], "--max-deals"),
        (["project", "--progress-seconds", "0"], "--progress-seconds"),  # a line each 0.05 s
        (["project", "--progress-seconds", "-1"], "--progress-seconds"),
    ],
)
def test_a_count_or_interval_of_nothing_is_refused_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    option: str,
) -> None:
    monkeypatch.setenv("DATABASE_URL", "memory")  # never a store of the machine's, whatever
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"canasta {args[0]}: error: argument {option}: " in err and "Traceback" not in err


@pytest.mark.parametrize(
    "command",
    [
        ["audit", "--all"],
        ["grant-auditor", "ann"],
        ["revoke-token", "ann"],
        ["rebuild-read-models"],
    ],
)
def test_a_data_dir_without_a_store_is_refused_not_made_and_audited_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    """After a restore, ``canasta audit --all`` with a mistyped CANASTA_DATA_DIR made an empty
    store there and said "0 tables, 0 deals audited: all ok"; now it says there is no store.
    So do the other commands on a server's store: ``rebuild-read-models`` said "rebuilt ...
    from 0 events", exit 0."""
    for name in ("DATABASE_URL", "CANASTA_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CANASTA_DATA_DIR", str(tmp_path / "typo"))
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err == (
        f"no store at SQLite {tmp_path / 'typo' / 'canasta.sqlite'}: set CANASTA_DATA_DIR to "
        "the server's data folder (or DATABASE_URL to its PostgreSQL); the server makes it on "
        "its first start\n"
    )
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("command", ["project", "bots"])
def test_the_foreground_commands_refuse_a_data_dir_without_a_store_exit_2(
    tmp_path: Path, command: str
) -> None:
    """``canasta project`` and ``canasta bots`` with a mistyped CANASTA_DATA_DIR said
    "leading" and ran on for ever over the empty store they had made there (``bots`` with a
    signing key of its own): now they say there is no store, exit 2, and make nothing."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CANASTA_DATABASE_URL")}
    env["CANASTA_DATA_DIR"] = str(tmp_path / "typo")
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", command, "--retry-seconds", "0.1"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # without the check it never stops
    )
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("no store at SQLite "), done.stderr
    assert "leading" not in done.stdout
    assert not (tmp_path / "typo").exists()


def test_every_command_s_help_says_what_it_does() -> None:
    """``canasta keys rotate --help`` (and every other command's) opens with a description,
    not the usage line alone."""

    def parsers(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, Any]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield f"{prefix} {name}", sub
                    yield from parsers(sub, f"{prefix} {name}")

    bare = [command for command, sub in parsers(build_parser(), "canasta") if not sub.description]
    assert not bare, bare


def test_keys_list_without_a_key_says_a_postgresql_server_needs_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An operator checking his configuration with ``canasta keys list`` on PostgreSQL and no
    key was shown ``[]`` alone; the server would refuse to start."""
    for name in ("CANASTA_SIGNING_KEY_FILE", "CANASTA_SIGNING_KEY", "CANASTA_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", "postgresql://canasta@127.0.0.1:1/none")  # not opened
    assert main(["keys", "list"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == []
    assert err.startswith("no signing key is configured: a PostgreSQL server refuses to start")
