"""The deal audit (domain/audit/): R-VIEW-4 (verify the shuffle against the commitment of
R-DEAL-3, replay), R-HIST-1 (the stored events are the history; re-applying them through the
rules reproduces the stored outcome) and the issue's tamper evidence (a hash chain; the audit
names the first broken link).

Histories come from random legal games played through ``CanastaApp`` on the in-memory store,
with a seeded random source so that every game here is reproducible. Tampering works on copies
of the stored event objects: a changed field (the chain left as stored) is what an edit of the
store looks like; a forger who also recomputes the chain ("re-signed") must then be caught by
re-deciding the commands or by the commitment.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, new_table, play_deal
from domain.audit import AuditReport, audit_deal, audit_table, fold, kind_of
from domain.cards import CARDS, full_deck
from domain.chain import GENESIS, event_data, link
from domain.refusals import render
from domain.shuffle import stacked_commitment
from domain.table import Table
from tests.support.games import play_commands, random_game

MEMORY_ENV = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


@dataclass
class Game:
    app: CanastaApp
    table_id: UUID
    table: Table

    def deal_events(self, number: int = 1) -> list[Any]:
        return list(self.app.events.get(UUID(self.table.deals[number - 1])))

    def table_events(self) -> list[Any]:
        return list(self.app.events.get(self.table_id))

    def all_deal_events(self) -> dict[str, list[Any]]:
        return {d: list(self.app.events.get(UUID(d))) for d in self.table.deals}


def play(
    entry: str = "classic",
    players: int = 4,
    *,
    always_frozen: bool = False,
    seed: int = 1,
    max_deals: int = 2,
) -> Game:
    app = CanastaApp(env=MEMORY_ENV)
    table_id = random_game(
        app, seed, entry, players, max_deals=max_deals, always_frozen=always_frozen
    )
    return Game(app, table_id, app.get_table(table_id))


@pytest.fixture(scope="module")
def game() -> Game:
    """One finished classic 4-player deal (and its table), shared by the tampering tests."""
    return play(seed=11, max_deals=1)


# --- helpers to alter a history -------------------------------------------------------------


def altered(event: Any, **changes: Any) -> Any:
    """A copy of a stored event with some fields changed (the chain link left as stored)."""
    new = copy.copy(event)
    for name, value in changes.items():
        object.__setattr__(new, name, value)
    return new


def resigned(events: Sequence[Any], start: int = 0) -> list[Any]:
    """The events with the chain recomputed from index ``start`` on, as a forger who knows
    the scheme would do after changing something."""
    out = list(events[:start])
    prev = events[start - 1].chain if start else GENESIS
    for event in events[start:]:
        good = link(
            prev,
            str(event.originator_id),
            event.originator_version,
            kind_of(event),
            event.timestamp.isoformat(),
            event_data(event),
        )
        out.append(altered(event, chain=good))
        prev = good
    return out


def replace_at(events: Sequence[Any], index: int, **changes: Any) -> list[Any]:
    out = list(events)
    out[index] = altered(events[index], **changes)
    return out


def index_of(events: Sequence[Any], kind: str, nth: int = 0, **where: Any) -> int:
    found = [
        i
        for i, e in enumerate(events)
        if kind_of(e) == kind and all(getattr(e, k) == v for k, v in where.items())
    ]
    return found[nth]


def assert_clean(report: AuditReport) -> None:
    assert report.ok, report.problems()
    assert report.chain_ok and report.first_broken_step is None
    assert report.commitment_ok and report.commitment_message is None
    assert report.rules_ok and report.first_mismatch_step is None and report.message is None


# --- honest histories ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "players", "always_frozen"),
    [
        ("classic", 2, False),
        ("classic", 3, False),
        ("classic", 4, False),
        ("classic", 5, False),
        ("classic", 6, False),
        ("extra_six", 6, False),
        ("classic", 2, True),
        ("classic", 4, True),
        ("classic", 6, True),
        ("modern_american", 4, False),
        ("ponytail", 4, False),
    ],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_every_random_complete_deal_passes_the_audit_chain_commitment_and_rules_r_hist_1(
    entry: str, players: int, always_frozen: bool, seed: int
) -> None:
    g = play(entry, players, always_frozen=always_frozen, seed=seed, max_deals=2)
    for number, deal_id in enumerate(g.table.deals, start=1):
        events = g.deal_events(number)
        report = audit_deal(events)
        assert_clean(report)
        assert report.deal_id == deal_id and report.events == len(events)
        assert report.complete and report.end_reason is not None
        assert not report.stacked
        # every command was rebuilt and re-decided: the cut, each draw, discard and decline
        # at least (a discard may come with melds in one command)
        assert report.commands >= 1 + sum(
            kind_of(e) in ("CardDiscarded", "PileDeclined")
            or (kind_of(e) == "CardsDrawn" and not e.replacement)
            for e in events
        )
        assert report.final_scores == g.table.deal_scores[number - 1]
    table_report = audit_table(str(g.table_id), g.table_events(), g.all_deal_events())
    assert table_report.ok, (table_report.problems, [r.problems() for r in table_report.deals])
    assert [r.deal_id for r in table_report.deals] == g.table.deals


def test_a_deal_stopped_by_the_host_audits_ok_as_abandoned_r_game_2() -> None:
    rng = random.Random(5)
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(rng))
    table_id = new_table(app, "classic", 4)
    deal_id = app.start_game(table_id, HOST)
    play_commands(app, deal_id, rng, 12)
    app.stop_game(table_id, HOST)
    events = list(app.events.get(deal_id))
    assert kind_of(events[-1]) == "DealAbandoned"
    report = audit_deal(events)
    assert_clean(report)
    assert report.complete and report.end_reason == "stopped" and report.final_scores is None
    table = audit_table(str(table_id), list(app.events.get(table_id)), {str(deal_id): events})
    assert table.ok, table.problems


def test_a_deal_in_progress_audits_ok_but_is_not_complete_r_hist_2() -> None:
    rng = random.Random(6)
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(rng))
    table_id = new_table(app, "classic", 3)
    deal_id = app.start_game(table_id, HOST)
    play_deal(app, deal_id, rng, max_commands=20)
    report = audit_deal(list(app.events.get(deal_id)))
    assert_clean(report)
    assert not report.complete and report.end_reason is None and report.final_scores is None
    assert report.commands == 20


def test_a_prepared_deck_is_checked_against_its_own_commitment_r_deal_3() -> None:
    rng = random.Random(7)
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(rng), allow_stacked_decks=True)
    table_id = new_table(app, "classic", 4)
    deck = full_deck(2)
    rng.shuffle(deck)
    deal_id = app.start_game(table_id, HOST, dealer=0, deck=deck)
    play_deal(app, deal_id, rng)
    events: list[Any] = list(app.events.get(deal_id))
    assert events[0].commitment == stacked_commitment(str(deal_id), deck)
    report = audit_deal(events)
    assert_clean(report)
    assert report.stacked
    # a different prepared deck (re-signed) no longer matches the commitment
    swapped = [deck[1], deck[0], *deck[2:]]
    forged = audit_deal(resigned(replace_at(events, 1, order=swapped), 1))
    assert forged.chain_ok and not forged.commitment_ok and not forged.ok


def test_the_fold_gives_the_stock_after_the_cut_and_every_hand_r_view_4(game: Game) -> None:
    events = game.deal_events()
    cut_step = index_of(events, "DeckCut") + 1
    after_cut = fold(events, upto=cut_step)
    assert after_cut.error is None and after_cut.step == cut_step
    assert after_cut.state is not None
    dealt = events[cut_step].cards  # CardsDealt follows the cut: taken off the stock's top
    assert [card for _seat, card in dealt] == after_cut.state.stock[::-1][: len(dealt)]
    final = fold(events)
    live = game.app.get_deal(UUID(game.table.deals[0])).state
    assert final.error is None and final.state == live


# --- tampering: an edited store breaks the chain at that step ------------------------------


def test_altering_any_one_stored_event_is_reported_as_the_first_broken_link(game: Game) -> None:
    events = game.deal_events()
    rng = random.Random(3)
    indexes = sorted({0, 1, 2, 3, len(events) - 1, *rng.sample(range(len(events)), 12)})
    for i in indexes:
        event = events[i]
        data = event_data(event)
        if kind_of(event) == "Started":
            changes: dict[str, Any] = {"dealer": (data["dealer"] + 1) % 4}
        elif "seat" in data:
            changes = {"seat": (data["seat"] + 1) % 4}
        elif kind_of(event) == "DeckShuffled":
            changes = {"seed": "00" * 32}
        elif kind_of(event) == "DealScored":
            changes = {
                "scores": {
                    side: {**b, "total": b["total"] + 5} for side, b in data["scores"].items()
                }
            }
        elif kind_of(event) == "CardTurnedUp":
            changes = {"crosswise": not data["crosswise"]}
        else:  # CardsDealt
            changes = {"cards": list(reversed(data["cards"]))}
        report = audit_deal(replace_at(events, i, **changes))
        assert not report.ok and not report.chain_ok
        assert report.first_broken_step == event.originator_version == i + 1, kind_of(event)


def test_changing_only_the_time_of_an_event_breaks_the_chain_but_not_the_rules(
    game: Game,
) -> None:
    events = game.deal_events()
    i = index_of(events, "CardDiscarded", 3)
    later = events[i].timestamp.replace(microsecond=(events[i].timestamp.microsecond + 1) % 10**6)
    report = audit_deal(replace_at(events, i, timestamp=later))
    assert report.first_broken_step == i + 1
    assert report.rules_ok and report.commitment_ok and not report.ok


def test_a_removed_or_swapped_event_breaks_the_chain_there(game: Game) -> None:
    events = game.deal_events()
    i = index_of(events, "CardsDrawn", 5)
    removed = events[:i] + events[i + 1 :]
    assert audit_deal(removed).first_broken_step == i + 1
    swapped = [*events[:i], events[i + 1], events[i], *events[i + 2 :]]
    assert audit_deal(swapped).first_broken_step == i + 1


def test_a_forged_chain_link_alone_is_caught(game: Game) -> None:
    events = game.deal_events()
    i = index_of(events, "MeldLaid")
    report = audit_deal(replace_at(events, i, chain="f" * 64))
    assert report.first_broken_step == i + 1 and report.rules_ok


# --- tampering that keeps the chain valid: caught by the rules or the commitment ------------


def test_a_resigned_discard_of_a_card_not_held_fails_the_rules_at_that_step_r_cmd_3(
    game: Game,
) -> None:
    events = game.deal_events()
    for nth in (0, 4, 9):
        i = index_of(events, "CardDiscarded", nth)
        seat = events[i].seat
        before = fold(events, upto=i).state  # the state just before the discard
        assert before is not None
        other = next(
            c
            for s, hand in enumerate(before.hands)
            if s != seat
            for c in hand
            if not CARDS[c].is_red_three
        )
        forged = resigned(replace_at(events, i, card=other), i)
        report = audit_deal(forged)
        assert report.chain_ok and report.commitment_ok
        assert not report.rules_ok and not report.ok
        assert report.first_mismatch_step == i + 1
        assert "R-CMD-3" in (report.message or "") and other in (report.message or "")
        assert report.stored is not None and report.stored["card"] == other
        # Worded by key too, for the audit page's languages, the rules' refusal quoted apart.
        worded = report.to_dict()["worded"]["message"]
        assert worded["key"] == "audit.rules_refuse"
        assert worded["params"]["code"] == "R-CMD-3"
        assert report.message == render("audit.rules_refuse", worded["params"])
        assert worded["refusal"] == {"key": "hand.not_held", "params": {"card": other}}


def test_a_resigned_swap_for_another_held_card_fails_the_rules_later_r_hist_1(
    game: Game,
) -> None:
    """The swapped discard is legal at its own step, but the rest of the stored history no
    longer follows from it: the pile's top differs, or a card named later is not held."""
    events = game.deal_events()
    i = index_of(events, "CardDiscarded", 2)
    seat, card = events[i].seat, events[i].card
    before = fold(events, upto=i).state
    assert before is not None
    held = next(c for c in before.hands[seat] if c != card and not CARDS[c].is_red_three)
    forged = resigned(replace_at(events, i, card=held), i)
    report = audit_deal(forged)
    assert report.chain_ok and not report.rules_ok
    assert report.first_mismatch_step is not None and report.first_mismatch_step > i + 1


def test_a_resigned_draw_of_other_cards_shows_what_the_rules_draw_r_draw_1(game: Game) -> None:
    events = game.deal_events()
    i = index_of(events, "CardsDrawn", 3, replacement=False)
    real = list(events[i].cards)
    fake = ["BJ/1"] * len(real) if "BJ/1" not in real else ["RJ/1"] * len(real)
    report = audit_deal(resigned(replace_at(events, i, cards=fake), i))
    assert report.chain_ok and not report.rules_ok
    assert report.first_mismatch_step == i + 1
    assert report.expected is not None and report.expected["cards"] == real
    assert report.stored is not None and report.stored["cards"] == fake


def test_a_resigned_score_fails_the_rules_at_the_deal_score(game: Game) -> None:
    events = game.deal_events()
    i = index_of(events, "DealScored")
    scores = {side: {**b, "total": b["total"] + 100} for side, b in events[i].scores.items()}
    report = audit_deal(resigned(replace_at(events, i, scores=scores), i))
    assert report.chain_ok and not report.rules_ok and report.first_mismatch_step == i + 1
    assert report.expected is not None and report.expected["scores"] == events[i].scores


def test_truncating_the_end_passes_the_chain_but_fails_the_rules(game: Game) -> None:
    events = game.deal_events()
    report = audit_deal(events[:-1])
    assert report.chain_ok and not report.rules_ok
    assert report.first_mismatch_step == len(events)  # the DealScored the rules record
    assert "history ends" in (report.message or "")
    assert report.to_dict()["worded"]["message"]["key"] == "audit.history_ends"


def test_a_wrong_seed_fails_the_commitment_r_deal_3(game: Game) -> None:
    events = game.deal_events()
    seed = events[1].seed
    wrong = ("00" if seed[:2] != "00" else "11") + seed[2:]
    # as stored: the chain breaks at the shuffle, and the seed misses the commitment
    edited = audit_deal(replace_at(events, 1, seed=wrong))
    assert edited.first_broken_step == 2 and not edited.commitment_ok
    assert "commitment" in (edited.commitment_message or "")
    # re-signed: the chain holds, the commitment does not, nor the cards dealt from it
    forged = audit_deal(resigned(replace_at(events, 1, seed=wrong), 1))
    assert forged.chain_ok and not forged.commitment_ok and not forged.ok
    assert not forged.rules_ok and forged.first_mismatch_step == index_of(events, "CardsDealt") + 1


def test_a_commitment_changed_in_the_started_event_fails_r_deal_3(game: Game) -> None:
    events = game.deal_events()
    report = audit_deal(resigned(replace_at(events, 0, commitment="0" * 64), 0))
    assert report.chain_ok and not report.commitment_ok and report.rules_ok


def test_a_malformed_event_is_reported_not_raised(game: Game) -> None:
    events = game.deal_events()
    i = index_of(events, "CardDiscarded", 1)
    forged = list(events)
    forged[i] = copy.copy(events[i])
    del forged[i].__dict__["card"]
    report = audit_deal(forged)
    assert report.first_broken_step == i + 1
    assert not report.rules_ok and report.first_mismatch_step == i + 1


def test_the_table_record_must_match_the_deal_scores() -> None:
    g = play(seed=4, max_deals=2)
    table_events = g.table_events()
    i = index_of(table_events, "DealRecorded")
    scores = {side: total + 10 for side, total in table_events[i].scores.items()}
    forged = replace_at(table_events, i, scores=scores)
    report = audit_table(str(g.table_id), forged, g.all_deal_events())
    assert not report.ok and all(r.ok for r in report.deals)
    assert any("the table recorded" in p for p in report.problems)
    # a deal whose events are missing altogether
    missing = audit_table(str(g.table_id), table_events, {})
    assert not missing.ok and any("no events" in p for p in missing.problems)


def test_the_table_vouches_for_each_scored_deal_with_its_last_chain_link_r_hist_1() -> None:
    """A deal history changed and re-signed after it was scored passes its own chain check,
    but no longer ends on the link the table recorded when the deal ended."""
    g = play(seed=4, max_deals=1)
    table_events = g.table_events()
    recorded = table_events[index_of(table_events, "DealRecorded")]
    events = g.deal_events()
    assert recorded.final_link == events[-1].chain
    clean = audit_table(str(g.table_id), table_events, g.all_deal_events())
    assert clean.ok, clean.problems
    # re-sign the history from a discard on, with the discarded card's timestamp nudged
    i = index_of(events, "CardDiscarded")
    moved = replace_at(events, i, timestamp=events[i].timestamp + timedelta(seconds=1))
    forged = resigned(moved, i)
    report = audit_table(str(g.table_id), table_events, {g.table.deals[0]: forged})
    assert report.deals[0].chain_ok
    assert not report.ok
    assert any("last hash-chain link" in p for p in report.problems)
