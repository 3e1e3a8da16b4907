"""The verdicts on a deal's signed record (``domain.audit.signatures``, docs/api.md), on a
deal played to its end in memory and signed with a real key: valid; forged when the record or
the deal's last link changed; unknown_key for a key not published; unsigned without a
signature; and a malformed record reported, never raised."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.arena import MEMORY_ENV
from app.autoplay import SeededRandom
from app.routes.audit import table_report
from app.signing import Keyring
from domain.audit.signatures import check_record, find_record
from tests.support.games import play_to_end, seated_table


@pytest.fixture
def played() -> Iterator[tuple[CanastaApp, UUID, UUID]]:
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(21), keys=Keyring.ephemeral())
    table_id = seated_table(app, ("ann", "bob"))
    deal_id = app.start_game(table_id, "ann")
    play_to_end(app, deal_id, random.Random(21))
    yield app, table_id, deal_id
    app.close()


def verdict(app: CanastaApp, table_id: UUID, deal_id: UUID, record: Any, keys: Any) -> str:
    history = list(app.events.get(deal_id))
    return check_record(str(table_id), record, 1, history, keys).verdict


def the_record(app: CanastaApp, table_id: UUID, deal_id: UUID) -> Any:
    found = find_record(list(app.events.get(table_id)), str(deal_id))
    assert found is not None and found[1] == 1
    return copy.deepcopy(found[0])


def test_a_signed_record_is_valid_and_the_table_audits_clean(
    played: tuple[CanastaApp, UUID, UUID],
) -> None:
    app, table_id, deal_id = played
    record = the_record(app, table_id, deal_id)
    assert app.keys is not None and record.key_id == app.keys.current.key_id  # type: ignore[union-attr]
    assert verdict(app, table_id, deal_id, record, app.keys) == "valid"
    report = table_report(app, table_id)
    assert report.ok and [d.signature for d in report.deals] == ["valid"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("scores", {"A": 0, "B": 0}), ("totals", {"A": 1, "B": 2}), ("final_link", "0" * 64)],
)
def test_a_record_changed_after_it_was_signed_is_forged(
    played: tuple[CanastaApp, UUID, UUID], field: str, value: object
) -> None:
    app, table_id, deal_id = played
    record = the_record(app, table_id, deal_id)
    record.__dict__[field] = value
    assert verdict(app, table_id, deal_id, record, app.keys) == "forged"


def test_a_history_that_no_longer_ends_at_the_signed_link_is_forged(
    played: tuple[CanastaApp, UUID, UUID],
) -> None:
    app, table_id, deal_id = played
    record = the_record(app, table_id, deal_id)
    cut = list(app.events.get(deal_id))[:-1]  # the history cut short after it was scored
    check = check_record(str(table_id), record, 1, cut, app.keys)  # type: ignore[arg-type]
    assert check.verdict == "forged" and "rewritten" in (check.message or "")


def test_another_key_is_unknown_and_no_signature_is_unsigned(
    played: tuple[CanastaApp, UUID, UUID],
) -> None:
    app, table_id, deal_id = played
    record = the_record(app, table_id, deal_id)
    assert verdict(app, table_id, deal_id, record, Keyring.ephemeral()) == "unknown_key"
    record.__dict__.update(signature="", key_id="")
    assert verdict(app, table_id, deal_id, record, app.keys) == "unsigned"


@pytest.mark.parametrize("signature", ["not base64!", "AAAA", None])
def test_a_malformed_record_is_reported_forged_not_raised(
    played: tuple[CanastaApp, UUID, UUID], signature: object
) -> None:
    app, table_id, deal_id = played
    record = the_record(app, table_id, deal_id)
    record.__dict__["signature"] = signature or "AAAA"
    if signature is None:
        record.__dict__["scores"] = "not a mapping"
    assert verdict(app, table_id, deal_id, record, app.keys) == "forged"
