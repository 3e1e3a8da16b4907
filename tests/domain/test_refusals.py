"""The refusals' catalogue (domain/refusals.py; docs/api.md, "Errors"): every key a refusal is
raised with is in it, with the parameters its template names, and every key in it is raised
somewhere (none orphaned). That holds for every refusal the domain and the app raise: the
rules' (400), and who may do it (403), what collides (409), what does not exist (404). Fast:
reads the source, raises nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from domain.commands import ACTIONS
from domain.errors import STALE, Conflict, Forbidden, NotFound, RuleViolation, SetupError
from domain.refusals import MESSAGES, WORDS, fields, render
from domain.variants.ponytail import CANASTA_KINDS

ROOT = Path(__file__).resolve().parents[2]
#: Where refusals are raised: the domain, and the app's services (set-up refusals).
SOURCES = sorted([*(ROOT / "domain").rglob("*.py"), *(ROOT / "app").rglob("*.py")])
CATALOGUE = ROOT / "domain" / "refusals.py"
#: The constructors that take a key: (name, the key's position among the arguments).
KEYED = {
    "RuleViolation": 1,
    "SetupError": 1,
    "Forbidden": 1,
    "Conflict": 1,
    "NotFound": 0,
    "Lack": 2,
    "WildLimit": 3,
    "said": 0,
    "Said": 0,
}
#: The refusals whose other keyword arguments are their template's parameters.
WORDED = ("RuleViolation", "SetupError", "Forbidden", "Conflict", "NotFound", "said")


def trees() -> list[tuple[Path, ast.AST]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in SOURCES if p != CATALOGUE]


def keyed_calls() -> list[tuple[str, ast.Call]]:
    calls = []
    for path, tree in trees():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id in KEYED:
                calls.append((f"{path.relative_to(ROOT)}:{node.lineno}", node))
    return calls


def test_the_scan_finds_the_raise_sites() -> None:
    calls = [call for _where, call in keyed_calls()]
    assert len(calls) > 160
    forbidden_conflict_not_found = WORDED[2:5]
    assert sum(getattr(c.func, "id", "") in forbidden_conflict_not_found for c in calls) > 35


def test_every_key_raised_is_in_the_catalogue_with_its_parameters() -> None:
    for where, call in keyed_calls():
        assert isinstance(call.func, ast.Name)
        position = KEYED[call.func.id]
        key = call.args[position] if len(call.args) > position else None
        if call.func.id in WORDED:  # a key and nothing else: no message in English alone
            assert key is not None and len(call.args) == position + 1, f"{where}: no key"
        assert not isinstance(key, ast.JoinedStr | ast.BinOp), f"{where}: a message, not a key"
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue  # a key chosen at run time: its candidates are string constants below
        assert key.value in MESSAGES, f"{where}: {key.value!r} is not in domain/refusals.py"
        if call.func.id in WORDED:
            named = {k.arg for k in call.keywords if k.arg is not None}
            expected = fields(MESSAGES[key.value])
            assert named == expected, f"{where}: {key.value} takes {sorted(expected)}"


def test_every_key_of_the_catalogue_is_raised_somewhere() -> None:
    constants = {
        node.value
        for _path, tree in trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert sorted(set(MESSAGES) - constants) == [], "keys no refusal uses"


def test_the_english_message_is_the_template_filled_in() -> None:
    refusal = RuleViolation("R-INIT-1", "init.short", points=30, minimum=50)
    assert refusal.message == "the initial meld counts 30; this side needs at least 50"
    assert (refusal.key, refusal.params, refusal.details) == (
        "init.short",
        {"points": 30, "minimum": 50},
        {"points": 30, "minimum": 50},
    )
    assert render("meld.mixed_ranks", {"ranks": ["K", "Q"]}) == "a meld is of one rank, not K and Q"
    assert render("ask.which_partner", {"partners": [1, 3]}) == (
        "name the partner to ask: one of [1, 3]"
    )
    taken = SetupError("R-SEAT-5", "seat.taken", seat=2)
    assert (str(taken), taken.key, taken.params) == (
        "R-SEAT-5: seat 2 is taken",
        "seat.taken",
        {"seat": 2},
    )
    with pytest.raises(KeyError):
        RuleViolation("R-CMD-3", "no.such.key")


def test_who_may_what_collides_and_what_is_missing_are_worded_the_same_way() -> None:
    """403, 409 and 404 carry a key and params too; their English message is as it was."""
    host = Forbidden("R-SEAT-3", "host.only")
    assert (str(host), host.key, host.params) == (
        "R-SEAT-3: only the host may do this",
        "host.only",
        {},
    )
    stale = Conflict(STALE, "stale.step", value=12, believed=11)
    assert (stale.code, stale.message, stale.params) == (
        "R-CMD-1",
        "stale command: step is 12, not 11; reload and retry",
        {"value": 12, "believed": 11},
    )
    taken = Conflict("name_taken", "name.taken", name="ann")
    assert taken.message == "the name 'ann' is taken"
    missing = NotFound("deal.not_found_at", id="d-1", step=9)
    assert (missing.code, missing.message) == ("not_found", "no deal d-1 at step 9")
    away = Forbidden("seat_not_yours", "seat.away_played", seat=2, player="bot:basic:2:for:ann")
    assert away.message == (
        "seat 2 is played by bot:basic:2:for:ann while you are away; take it back with "
        "POST /tables/{id}/seats"
    )


def test_the_words_are_the_domains_own() -> None:
    assert set(WORDS["action"]) == set(ACTIONS.values())
    assert WORDS["kinds"] == CANASTA_KINDS
    assert set(WORDS) <= {name for template in MESSAGES.values() for name in fields(template)}
