"""Reading scenario files and checking their shape before anything is played.

A file is malformed (exit 2) when it is not a JSON object, names a key the format does not
know (at the top, in a deal, in a step, in a check), has neither ``deal`` nor ``deals`` (or
both), or checks nothing at all. docs/scenarios.md describes every key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from app.scenario.model import ScenarioError, require

TOP_KEYS = frozenset(
    {
        "name",
        "entry",
        "players",
        "options",
        "teams",
        "scores_before",
        "target",
        "deal",
        "steps",
        "expect_end",
        "deals",
    }
)
DEAL_KEYS = frozenset({"dealer", "cut", "sit_out", "hands", "stock", "ponytails"})
DEALS_ITEM_KEYS = frozenset({"deal", "steps", "expect_end"})
STEP_KEYS = frozenset(
    {"seat", "do", "expect", "then", "n", "melds", "discard", "card"} | {"partner", "yes"}
)
ACTIONS = frozenset(
    {
        "cut",
        "draw",
        "take_pile",
        "meld",
        "discard",
        "ask_partner",
        "answer",
        "decline_pile",
        "pick_up_ponytail",
    }
)
CHECK_KEYS = frozenset(
    {
        "pile_top",
        "pile_size",
        "pile_frozen",
        "stock_size",
        "hand_count",
        "hand",
        "melds",
        "red_threes",
        "black_threes",
        "turn",
        "phase",
        "deal_over",
        "deal_scores",
        "totals",
        "game_over",
        "winners",
    }
)


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a JSON object")
    return data


def scenario_files(names: Iterable[str | Path]) -> list[Path]:
    """The files to run: a file as given, a folder as every ``*.json`` under it (recursively,
    sorted)."""
    paths: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.json") if p.is_file())
            require(bool(found), f"{path}: no *.json scenario file in this folder")
            paths += found
        else:
            paths.append(path)
    return paths


def _known(keys: Iterable[str], allowed: frozenset[str], where: str, what: str) -> None:
    unknown = sorted(set(keys) - allowed)
    require(not unknown, f"{where}: unknown {what} {', '.join(map(repr, unknown))}")


def check_top_keys(data: Mapping[str, Any], name: str) -> None:
    _known(data, TOP_KEYS, name, "top-level key")


def _checks(expect: Any, where: str) -> dict[str, Any]:
    require(isinstance(expect, dict), f"{where}: checks are an object")
    _known(expect, CHECK_KEYS, where, "check")
    return dict(expect)


def _step(step: Any, where: str) -> None:
    require(isinstance(step, dict), f"{where} is an object")
    _known(step, STEP_KEYS, where, "step key")
    require(step.get("do") in ACTIONS, f"{where}: unknown action {step.get('do')!r}")
    expect = step.get("expect", "ok")
    require(
        expect == "ok"
        or (
            isinstance(expect, dict)
            and set(expect) == {"error"}
            and isinstance(expect["error"], str)
        ),
        f'{where}: \'expect\' is "ok" or {{"error": "R-..."}}',
    )
    if "then" in step:
        _checks(step["then"], f"{where}: then")


def deals_of(data: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    """The deals to play, each ``{"deal", "steps", "expect_end"}``: the single-deal form is
    one such deal. Raises ScenarioError for anything malformed."""
    has_deal, has_deals = "deal" in data, "deals" in data
    require(not (has_deal and has_deals), f"{name}: give either 'deal' or 'deals', not both")
    require(has_deal or has_deals, f"{name}: neither 'deal' nor 'deals': nothing to play")
    if has_deals:
        loose = sorted(k for k in ("steps", "expect_end") if k in data)
        require(not loose, f"{name}: {', '.join(map(repr, loose))} belong in each of 'deals'")
        raw = data["deals"]
        require(isinstance(raw, list) and bool(raw), f"{name}: 'deals' is a non-empty list")
        items = []
        for number, item in enumerate(raw, start=1):
            where = f"{name}: deals[{number - 1}]"
            require(isinstance(item, dict), f"{where} is an object")
            _known(item, DEALS_ITEM_KEYS, where, "key")
            require("deal" in item, f"{where}: 'deal' is required")
            items.append(item)
    else:
        items = [{k: data[k] for k in ("deal", "steps", "expect_end") if k in data}]
    deals = []
    for number, item in enumerate(items, start=1):
        where = f"{name}: deal {number}" if has_deals else name
        deal = item["deal"]
        require(isinstance(deal, dict), f"{where}: 'deal' is an object")
        _known(deal, DEAL_KEYS, f"{where}: deal", "key")
        steps = item.get("steps", [])
        require(isinstance(steps, list), f"{where}: 'steps' is a list")
        for i, step in enumerate(steps, start=1):
            _step(step, f"{where}: step {i}")
        expect_end = _checks(item.get("expect_end", {}), f"{where}: expect_end")
        deals.append({"deal": deal, "steps": steps, "expect_end": expect_end})
    require(
        any(d["steps"] or d["expect_end"] for d in deals),
        f"{name}: the scenario checks nothing (no step and no expect_end)",
    )
    return deals
