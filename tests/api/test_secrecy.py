"""Secrecy (docs/rules/common.md, visibility: R-VIEW-1..4, R-SEAT-4; issue item 9): no endpoint, stream, error
message or log line ever shows a viewer a card he may not see, the stock order or the seed.

Random complete deals of every entry and player count (``classic`` 2-6 players, 5p/6p with
teams, ``extra_six`` with two teams of three and three teams of two, ``modern_american``,
``ponytail`` with its face-down ponytails), ``always_frozen`` off and on, are driven through the HTTP API (``TestClient`` over ``create_app``, in-memory
store) by the random legal player of ``domain.legal`` (which reads the state on the test
side only), with sequenced commands (R-CMD-1), and with illegal commands mixed in: other
seats' cards, stock cards, out of turn, wrong phase, stale, reused sequence numbers, a
sit-out, an outsider, no token, malformed bodies.

The viewers: every seated player (his own token), a registered account with no seat, an
anonymous spectator, and in 5p/6p the players sitting the deal out (who must get exactly the
spectator's view, R-SEAT-4). After every command, ``GET /deals/{id}`` is checked for the
player who acted, the anonymous spectator and a sit-out, every few commands for everyone.
Full sweeps cover every GET endpoint of the OpenAPI schema (views, history, replays,
streams, audit, read models and whatever is added later), with their parameters filled in
(step = now, an earlier step; after / Last-Event-ID = an earlier step; each value of an
enum such as ``as``): in the cut phase, after the cut, after the first pile taken, at random
steps, and at the end of every deal, then for every viewer and about every deal of the table
(R-VIEW-1: hands stay secret after the deal). Half the games go on to a second deal (other
sit-outs) which the host stops (R-GAME-2). Audit endpoints must refuse all these viewers
(401/403, R-VIEW-4). Streams are read until they have sent the latest step, or end.

What is secret to a viewer is computed from the stored events (``secrecy_support``); every
response body, response header, error message and log record (all loggers at DEBUG, and
anything printed) is searched for secret cards (the notation of docs/rules/common.md) and the seed. Positive
checks keep the test from passing vacuously: each player's view holds his own hand, the
spectator's view holds the pile's top card, the melds and red threes, and the history and
the stream show a player his dealt and drawn cards and everybody every public card; a
second test plants leaks and checks that they are reported.

Reproducing a failure: its message names the game seed and the entry; ``SecrecyGame(client,
cfg, game_seed, logs).run()`` plays the same game again. ``CANASTA_SECRECY_EXAMPLES=N``
plays N games per entry instead of one.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast
from uuid import UUID

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from app.application import CanastaApp
from app.autoplay import SeededRandom
from app.main import create_app
from app.schemas import command_body
from app.settings import Settings
from domain import commands as c
from domain.cards import CARDS, full_deck
from domain.commands import TOP
from domain.legal import legal_command, seat_to_act
from domain.refusals import MESSAGES, render
from domain.state import ANSWER, CUT, DRAW, OVER, PLAY
from domain.variants import get_variant
from tests.api.secrecy_support import (
    STREAM_IDLE_SECONDS,
    DealLedger,
    Endpoint,
    Fetched,
    Leak,
    Probe,
    SecretAt,
    Sequencer,
    SweepContext,
    Viewer,
    card_tokens,
    discover_get_endpoints,
    fetch,
    find_leaks,
    probes_for,
    request_cards,
)
from tests.support.games import random_teams
from tests.support.http import expectation
from tests.support.log_watch import LogWatch
from tests.support.openapi import sse_messages

#: One in this many commands is followed by a full sweep of every endpoint (on top of the
#: sweeps at the start and end of every deal, after its cut (the hands are dealt) and after
#: its first pile taken).
FULL_SWEEP_EVERY = 60
#: The refusals worded by key (domain/refusals.py): a rule's, who may (403), what collides
#: (409), what is missing (404); a 401 or a 422 is worded in English only.
WORDED_STATUSES = (400, 403, 404, 409)
#: A deal still going after this many commands is taken not to end (random deals need a few
#: hundred at most).
MAX_COMMANDS_PER_DEAL = 5000
#: After every command some viewers' views are checked; every so many commands, everyone's.
LIGHT_SWEEP_EVERYONE_EVERY = 6
#: Probability, before a legal command, of sending an illegal one first.
ILLEGAL_CHANCE = 0.22
#: Probability of comparing the refusals of another seat's card and a stock card.
SIDE_CHANNEL_CHANCE = 0.08
#: Probability that a game goes on to a second deal (new sit-outs), then is stopped by the
#: host in the middle of it (R-GAME-2: the hands of a stopped deal stay secret too).
SECOND_DEAL_CHANCE = 0.5
#: How long a stream resumed at its latest step is listened to (nothing new is due).
QUIET_STREAM_SECONDS = 0.03

SECRECY_SETTINGS = settings(
    # one game per entry, player count and option; raise it for a longer soak
    max_examples=int(os.environ.get("CANASTA_SECRECY_EXAMPLES", "1")),
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),  # no shrinking: a failure names its seed
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    print_blob=False,
)


@dataclass(frozen=True)
class Config:
    entry: str
    players: int
    #: sizes of the teams the host picks (team A, and team B with three teams)
    teams: tuple[int, ...] | None = None
    always_frozen: bool = False

    @property
    def id(self) -> str:
        shape = "" if self.teams is None else "-teams" + "+".join(map(str, self.shape))
        frozen = "-always_frozen" if self.always_frozen else ""
        return f"{self.entry}-{self.players}p{shape}{frozen}"

    @property
    def shape(self) -> tuple[int, ...]:
        assert self.teams is not None
        return (*self.teams, self.players - sum(self.teams))


#: Every entry and player count, ``always_frozen`` off for half of them and on for the other
#: half (it changes which moves are legal, not what a viewer is shown), both for 4p.
CONFIGS = [
    Config("classic", 2),
    Config("classic", 3, always_frozen=True),
    Config("classic", 4),
    Config("classic", 4, always_frozen=True),
    Config("classic", 5, (3,), always_frozen=True),  # teams of 3 and 2: one of the three sits out
    Config("classic", 6, (3,)),  # two teams of three: two sit out (R-SEAT-2)
    Config("extra_six", 6, (3,), always_frozen=True),  # extra_six: two teams of three, no sit-out
    Config("extra_six", 6, (2, 2)),  # extra_six: three teams of two
    Config("modern_american", 4),  # modern_american: threes laid, empty starting pile
    Config("ponytail", 4, always_frozen=True),  # ponytail: face-down ponytails nobody sees
]


# --- one game --------------------------------------------------------------------------------------


class SecrecyGame:
    """One table played through HTTP while every viewer's every view is searched."""

    def __init__(self, client: TestClient, cfg: Config, seed: int, logs: LogWatch) -> None:
        self.client = client
        self.canasta: CanastaApp = cast(FastAPI, client.app).state.canasta
        self.canasta.random = SeededRandom(random.Random(seed * 7919 + 1))
        self.rng = random.Random(seed)
        self.cfg = cfg
        self.always_frozen = cfg.always_frozen
        self.seed = seed
        self.logs = logs
        self.seqs = Sequencer()
        self.ledgers: list[DealLedger] = []
        self.endpoints: list[Endpoint] = discover_get_endpoints(client.get("/openapi.json").json())
        self.stats: Counter[str] = Counter()
        self.timing: defaultdict[str, float] = defaultdict(float)
        self.log_exempt: set[str] = set()
        self.table_id = ""
        self.players: list[Viewer] = []
        self.outsider = Viewer("outsider (registered, no seat)")
        self.anonymous = Viewer("anonymous spectator")

    # --- helpers ----------------------------------------------------------------------------
    @property
    def where(self) -> str:
        ledger = self.ledgers[-1] if self.ledgers else None
        at = "" if ledger is None else f", deal {ledger.number} at step {ledger.version}"
        phase = "" if ledger is None else f" (phase {self.deal.state.phase})"
        return f"[game seed={self.seed} {self.cfg.id}{at}{phase}]"

    @property
    def ledger(self) -> DealLedger:
        return self.ledgers[-1]

    @property
    def deal(self) -> Any:
        return self.canasta.get_deal(self.ledger.deal_id)

    @property
    def viewers(self) -> list[Viewer]:
        return [*self.players, self.outsider, self.anonymous]

    def sitting_out(self, ledger: DealLedger) -> list[Viewer]:
        return [v for v in self.players if v.room_seat not in ledger.order]

    def sync(self) -> None:
        for ledger in self.ledgers:
            ledger.sync(self.canasta)

    def seeds(self) -> list[str]:
        return [seed for ledger in self.ledgers for seed in ledger.seeds]

    def secret_for(self, viewer: Viewer, ledger: DealLedger | None) -> SecretAt:
        """What ``viewer`` may not see in a response about ``ledger`` (its steps apply), or
        about the table or nothing in particular (cards secret in every deal so far: a
        card's name is reused by the next deal)."""
        if ledger is not None:
            seat = ledger.seat_of(viewer)
            return lambda step: ledger.secret(seat, step)
        sets = [lg.secret(lg.seat_of(viewer)) for lg in self.ledgers]
        table_level = frozenset.intersection(*sets) if sets else frozenset()
        return lambda step: table_level

    def check(
        self,
        what: str,
        viewer: Viewer,
        text: str,
        *,
        ledger: DealLedger | None,
        is_json: bool = False,
        is_sse: bool = False,
        exempt: frozenset[str] = frozenset(),
    ) -> None:
        """No secret card and no seed in ``text`` (what ``viewer`` was shown)."""
        leaks = find_leaks(
            text,
            secret_at=self.secret_for(viewer, ledger),
            seeds=self.seeds(),
            is_json=is_json,
            is_sse=is_sse,
            exempt=exempt,
        )
        if leaks:
            raise AssertionError(self.describe_leaks(what, viewer, leaks, ledger))

    def describe_leaks(
        self, what: str, viewer: Viewer | None, leaks: list[Leak], ledger: DealLedger | None
    ) -> str:
        """Each leak: the card, who was shown it, where the card is and why it is secret."""
        lines = [f"SECRECY LEAK (R-VIEW-1..4, R-SEAT-4) {self.where}: {what}"]
        for leak in leaks[:8]:
            if leak.card.startswith("seed"):
                lines.append(f"  - the shuffle seed (R-DEAL-3, R-VIEW-4): ...{leak.context}...")
                continue
            about = ledger or self.ledger
            seat = about.seat_of(viewer) if viewer is not None else None
            state = self.canasta.get_deal(about.deal_id).state
            step = "now" if leak.step is None else f"at step {leak.step}"
            who = (
                f"viewer {viewer.described_in(about)} was shown"
                if viewer is not None
                else "the log shows"
            )
            lines.append(
                f"  - {who} {leak.card}, secret {step}: "
                f"{about.why_secret(leak.card, seat, state)}; context: ...{leak.context}..."
            )
        return "\n".join(lines)

    def post(self, viewer: Viewer, url: str, body: Any = None, method: str = "POST") -> Any:
        r = self.client.request(method, url, json=body, headers=viewer.headers)
        assert r.status_code < 300, f"{self.where} {method} {url} as {viewer.label}: {r.text}"
        self.check(f"{method} {url}", viewer, r.text, ledger=None, is_json=True)
        return r.json()

    # --- set-up ------------------------------------------------------------------------------
    def start(self) -> None:
        cfg = self.cfg
        for seat in range(cfg.players):
            name = f"p{seat}"
            token = self.client.post("/players", json={"name": name}).json()["token"]
            self.players.append(Viewer(f"{name} (seat {seat})", name, token, seat))
        token = self.client.post("/players", json={"name": "outsider"}).json()["token"]
        self.outsider = Viewer(self.outsider.label, "outsider", token, None)
        host = self.players[0]
        options = {"always_frozen": self.always_frozen}
        table = self.post(
            host, "/tables", {"entry": cfg.entry, "players": cfg.players, "options": options}
        )
        self.table_id = table["id"]
        for viewer in self.players:
            self.post(viewer, f"/tables/{self.table_id}/seats", {"seat": viewer.room_seat})
        if cfg.teams is not None:
            teams = random_teams(self.rng, cfg.players, cfg.teams)
            self.post(host, f"/tables/{self.table_id}/teams", {"teams": teams}, method="PUT")
        deal = self.post(host, f"/tables/{self.table_id}/start")["deal"]
        self.open_deal(UUID(deal))

    def open_deal(self, deal_id: UUID) -> None:
        st = self.canasta.get_deal(deal_id).state
        decks = get_variant(st.variant).decks
        ledger = DealLedger(deal_id, st.table_id, st.number, full_deck(decks))
        self.ledgers.append(ledger)
        ledger.sync(self.canasta)
        assert ledger.seeds, f"{self.where} the deal has no DeckShuffled seed"
        if self.cfg.entry == "classic" and self.cfg.players >= 5:
            assert self.sitting_out(ledger), f"{self.where} nobody sits out a {self.cfg.id} deal"
        self.light_sweep()
        if len(self.ledgers) == 1:  # the cut phase: the deck is shuffled, nothing dealt yet
            self.full_sweep()

    # --- playing -----------------------------------------------------------------------------
    def play(self, max_commands: int | None = None) -> None:
        """Legal commands until the deal ends (or ``max_commands``), with sweeps and illegal
        commands in between."""
        sent = 0
        took = False
        while max_commands is None or sent < max_commands:
            assert sent < MAX_COMMANDS_PER_DEAL, f"{self.where} the deal does not end"
            deal = self.deal
            st = deal.state
            seat = seat_to_act(st)
            if seat is None:
                break
            if self.rng.random() < ILLEGAL_CHANCE:
                self.send_illegal()
            if self.rng.random() < SIDE_CHANNEL_CHANCE:
                self.compare_refusals()
            command = legal_command(st, seat, self.rng)
            self.send_legal(self.players[seat], command)
            sent += 1
            self.light_sweep(everyone=sent % LIGHT_SWEEP_EVERYONE_EVERY == 0, actor=seat)
            first_take = isinstance(command, c.TakePile) and not took
            took = took or isinstance(command, c.TakePile)
            if sent == 1 or first_take or self.rng.randrange(FULL_SWEEP_EVERY) == 0:
                self.full_sweep()
            self.scan_logs()

    def request(self, viewer: Viewer, command: dict[str, Any], **expect: Any) -> dict[str, Any]:
        seq = self.seqs.next(viewer.name) if viewer.name else 1
        return {"seq": seq, "expect": {**expectation(self.deal), **expect}, "command": command}

    def send_legal(self, viewer: Viewer, command: c.Command) -> None:
        body = self.request(viewer, command_body(command))
        url = f"/deals/{self.ledger.deal_id}/commands"
        r = self.client.post(url, json=body, headers=viewer.headers)
        assert r.status_code == 200, f"{self.where} {viewer.label} {body}: {r.status_code} {r.text}"
        self.stats["legal commands"] += 1
        self.ledger.sync(self.canasta)
        self.check(
            f"the answer to {viewer.label}'s {command}",
            viewer,
            r.text,
            ledger=self.ledger,
            is_json=True,
        )
        if self.rng.random() < 0.05:  # R-CMD-1: a retry gets the first answer back
            again = self.client.post(url, json=body, headers=viewer.headers)
            assert again.status_code == 200 and again.json()["replayed"], again.text
            self.check(f"a retried {command}", viewer, again.text, ledger=self.ledger, is_json=True)

    # --- illegal commands ----------------------------------------------------------------------
    def send_illegal(self) -> None:
        deal = self.deal
        st = deal.state
        actor_seat = seat_to_act(st)
        rng = self.rng
        others = [s for s in st.order if s != actor_seat and st.hands[s]]
        kinds = ["out_of_turn", "outsider", "anonymous", "malformed", "wrong_phase"]
        if actor_seat is not None:
            kinds += ["stale", "reused_seq"] if deal.version > 1 else []
            if others:
                kinds += ["foreign_card", "foreign_meld", "foreign_take"] * 2
            if st.stock:
                kinds += ["stock_card"] * 2
            if st.phase == CUT:
                kinds += ["bad_cut"]
        if self.sitting_out(self.ledger):
            kinds += ["sit_out"]
        kind = rng.choice(kinds)
        actor = self.players[actor_seat] if actor_seat is not None else rng.choice(self.players)
        own = list(st.hands[actor.room_seat]) if actor.room_seat is not None else []
        foreign = [card for s in others for card in st.hands[s]]
        somewhere = foreign or st.stock or st.deck or own or sorted(self.ledger.deck)

        def pick(pool: list[str], n: int = 1) -> list[str]:
            return rng.sample(pool, min(n, len(pool)))

        sender, status = actor, {400}
        expect: dict[str, Any] = {}
        command: dict[str, Any]
        if kind == "foreign_card":
            command = {"type": "discard", "card": pick(foreign)[0]}
        elif kind == "stock_card":
            command = {"type": "discard", "card": pick(st.stock)[0]}
        elif kind == "foreign_meld":
            command = {"type": "meld", "melds": [{"cards": pick(foreign, 3)}]}
            if own and rng.random() < 0.5:
                command["discard"] = pick(foreign)[0]
        elif kind == "foreign_take":
            command = {"type": "take_pile", "melds": [{"cards": [TOP, *pick(foreign, 2)]}]}
        elif kind == "out_of_turn":
            waiting = [v for v in self.players if v.room_seat in st.order and v is not actor]
            sender = rng.choice(waiting) if waiting else actor
            command = {"type": "draw"} if sender is not actor else {"type": "answer", "yes": True}
        elif kind == "wrong_phase":
            if st.phase == DRAW and own:
                command = {"type": "discard", "card": pick(own)[0]}
            elif st.phase == CUT:
                command = {"type": "discard", "card": pick(st.deck)[0]}
            else:
                command = {"type": "draw"}
        elif kind == "stale":
            command = {"type": "draw"}
            expect, status = {"step": deal.version - 1}, {409}
        elif kind == "reused_seq":
            if not self.seqs.last.get(actor.name or ""):
                return
            command = {"type": "discard", "card": pick(somewhere)[0]}
            body = {
                "seq": self.seqs.last[actor.name or ""],
                "expect": expectation(deal),
                "command": command,
            }
            self.refused("reused_seq", actor, body, {409})
            return
        elif kind == "bad_cut":
            command = {"type": "cut", "n": len(st.deck)}
        elif kind == "sit_out":
            sender = rng.choice(self.sitting_out(self.ledger))
            command = {"type": "draw"}
        elif kind == "outsider":
            sender, status = self.outsider, {403}
            command = {"type": "discard", "card": pick(somewhere)[0]}
        elif kind == "anonymous":
            sender, status = self.anonymous, {401}
            command = {"type": "discard", "card": pick(somewhere)[0]}
        else:  # malformed: a card where a boolean belongs, an unknown field
            status = {422}
            card = pick(somewhere)[0]
            command = {"type": "answer", "yes": card, "card": card}
        self.refused(kind, sender, self.request(sender, command, **expect), status)

    def refused(self, kind: str, sender: Viewer, body: dict[str, Any], status: set[int]) -> Any:
        """Send a command that must be refused with ``status``; nothing may change and the
        error may show the sender nothing secret (but the cards he wrote himself)."""
        before = self.deal.version
        url = f"/deals/{self.ledger.deal_id}/commands"
        r = self.client.post(url, json=body, headers=sender.headers)
        what = f"the refusal ({kind}) of {json.dumps(body['command'])} sent by {sender.label}"
        assert r.status_code in status, (
            f"{self.where} {what}: expected {status}, got {r.status_code} {r.text}"
        )
        error = r.json().get("error")
        assert isinstance(error, dict) and error.get("code") and error.get("message"), r.text
        exempt = request_cards(body)
        self.log_exempt |= exempt
        self.check(
            what,
            sender,
            r.text + "\n" + "\n".join(f"{k}: {v}" for k, v in r.headers.items()),
            ledger=self.ledger,
            is_json=False,
            exempt=exempt,
        )
        self.check(what, sender, r.text, ledger=self.ledger, is_json=True, exempt=exempt)
        if r.status_code in WORDED_STATUSES:
            self.check_params(what, sender, error, exempt)
        self.ledger.sync(self.canasta)
        assert self.ledger.version == before, f"{self.where} {what} changed the deal (R-CMD-3)"
        self.stats[f"refused {kind} ({r.status_code})"] += 1
        return r.json()

    def check_params(
        self, what: str, sender: Viewer, error: dict[str, Any], exempt: frozenset[str]
    ) -> None:
        """A refusal (a rule's 400, an outsider's 403, a stale or reused number's 409) carries
        its key and parameters (docs/api.md, "Errors"), the English message is that key's template filled with them, and they name no card but
        the sender's own command's, his hand's and the public table's."""
        key, params = error.get("key"), error.get("params")
        assert key in MESSAGES and isinstance(params, dict), f"{self.where} {what}: {error}"
        assert error["message"] == render(key, params), f"{self.where} {what}: {error}"
        named = set(card_tokens(json.dumps(params)))
        seat = self.ledger.seat_of(sender)
        seen = set(exempt) | self.ledger.public() | self.ledger.own(seat)
        assert named <= seen, f"{self.where} {what}: params name {sorted(named - seen)}"
        self.stats[f"refusals with key and params ({error.get('code')})"] += 1

    def compare_refusals(self) -> None:
        """A card in another seat's hand and a card in the stock are refused alike: the
        refusal does not tell where a card is that the sender does not hold. The two cards
        of a pair have the same face (they differ only by deck number), so that any check
        of rank or suit answers both alike."""
        deal = self.deal
        st = deal.state
        seat = seat_to_act(st)
        if seat is None or st.phase not in (DRAW, PLAY):
            return
        in_stock: dict[str, list[str]] = {}
        for card in st.stock:
            in_stock.setdefault(CARDS[card].face, []).append(card)
        pairs = [
            (card, self.rng.choice(in_stock[CARDS[card].face]))
            for s in st.order
            if s != seat
            for card in st.hands[s]
            if CARDS[card].face in in_stock
        ]
        wanted = 1 if st.phase == PLAY else 2
        if len(pairs) < wanted:
            return
        chosen = self.rng.sample(pairs, wanted)
        if len({y for _, y in chosen}) < wanted:
            return
        actor = self.players[seat]
        answers = []
        for cards in ([x for x, _ in chosen], [y for _, y in chosen]):
            if st.phase == PLAY:
                command: dict[str, Any] = {"type": "discard", "card": cards[0]}
            else:
                command = {"type": "take_pile", "melds": [{"cards": [TOP, *cards]}]}
            answer = self.refused("side channel", actor, self.request(actor, command), {400})
            text = json.dumps(answer, sort_keys=True)
            for i, card in enumerate(cards):
                text = text.replace(card, f"<card {i}>")
            answers.append(text)
        assert answers[0] == answers[1], (
            f"{self.where} the refusals tell cards in other hands {[x for x, _ in chosen]} "
            f"from stock cards of the same faces {[y for _, y in chosen]} (R-VIEW-1/4): "
            f"{answers[0]} vs {answers[1]}"
        )
        self.stats["side-channel comparisons"] += 1

    # --- sweeps ----------------------------------------------------------------------------------
    def light_sweep(self, everyone: bool = True, actor: int | None = None) -> None:
        """The viewers' views of the current deal (everyone's, or those of the anonymous
        spectator, the player who acted, one sit-out if any); positive checks; the
        sit-out and the outsider see exactly what the anonymous spectator sees (R-SEAT-4,
        R-VIEW-1/2)."""
        ledger = self.ledger
        ledger.sync(self.canasta)
        deal = self.deal
        st = deal.state
        self.check_ledger(st)
        url = f"/deals/{ledger.deal_id}"
        texts: dict[Viewer, Any] = {}
        viewers = self.viewers
        if not everyone:
            playing = [v for v in self.players if v.room_seat in st.order]
            acted = [v for v in playing if v.room_seat == actor]
            viewers = [*(acted or [self.rng.choice(playing)]), self.anonymous]
            if self.sitting_out(ledger):
                viewers.append(self.rng.choice(self.sitting_out(ledger)))
        for viewer in dict.fromkeys(viewers):
            got = fetch(self.client, url, headers=viewer.headers)
            assert got.status == 200, f"{self.where} GET {url} as {viewer.label}: {got.text}"
            self.check(f"GET {url}", viewer, got.text + got.header_text, ledger=ledger)
            self.check(f"GET {url}", viewer, got.text, ledger=ledger, is_json=True)
            view = got.json()
            texts[viewer] = view
            seat = ledger.seat_of(viewer)
            if seat is not None:
                hand = sorted(st.hands[seat])
                assert view.get("hand") == hand, (
                    f"{self.where} {viewer.label} is not shown his own hand (R-VIEW-1): "
                    f"{view.get('hand')} vs {hand}"
                )
                if st.phase in (DRAW, PLAY, ANSWER):
                    assert hand, f"{self.where} {viewer.label} has an empty hand in play"
                assert set(hand) <= set(card_tokens(got.text))
            else:
                assert view.get("hand") is None, f"{self.where} {viewer.label}: {view}"
            self.stats["light-sweep requests"] += 1
        spectator = json.dumps(texts[self.anonymous])
        shown = set(card_tokens(spectator))
        public = set(st.pile[-1:])
        public |= {card for melds in st.melds.values() for m in melds for card in m.cards}
        public |= {card for cards in st.red_threes.values() for card in cards}
        assert public <= shown, (
            f"{self.where} the spectator is not shown the pile top, melds and red threes "
            f"(R-VIEW-2): missing {sorted(public - shown)}"
        )
        self.stats["public cards found in the spectator's view"] += len(public)
        for viewer in [*self.sitting_out(ledger), self.outsider]:
            if viewer not in texts:
                continue
            assert texts[viewer] == texts[self.anonymous], (
                f"{self.where} {viewer.described_in(ledger)} does not get the spectator's view "
                f"(R-SEAT-4, R-VIEW-1): {texts[viewer]} vs {texts[self.anonymous]}"
            )

    def check_ledger(self, st: Any) -> None:
        """The test's own bookkeeping agrees with the state (so its secret sets are right)."""
        ledger = self.ledger
        nobody = ledger.secret(None)
        assert set(st.stock) <= nobody and set(st.deck) <= nobody, self.where
        on_table = set(st.pile)
        on_table |= {card for melds in st.melds.values() for m in melds for card in m.cards}
        on_table |= {card for cards in st.red_threes.values() for card in cards}
        assert not on_table & nobody, f"{self.where} public cards counted secret"
        for seat in st.order:
            assert set(st.hands[seat]) <= ledger.own(seat) | ledger.public(), self.where

    def full_sweep(self, everyone: bool = False) -> None:
        """Every GET endpoint of the schema, each with its optional parameters' other values
        one at a time. With ``everyone`` (at the end of each deal): about every
        deal of the table, each plain request for every viewer. Otherwise about the current
        deal, for a sample of viewers: a player of the deal and the anonymous spectator,
        and for plain requests also a sit-out (if any) and sometimes the outsider."""
        self.sync()
        table = self.canasta.get_table(UUID(self.table_id))
        ctx = SweepContext(
            table_id=self.table_id,
            table_version=table.version,
            ledgers=self.ledgers,
            players=self.cfg.players,
            names=[v.name for v in self.players if v.name] + ["outsider"],
            rng=self.rng,
            all_deals=everyone,
        )
        for endpoint in self.endpoints:
            for probe in probes_for(endpoint, ctx):
                if everyone and probe.base:
                    viewers = self.viewers
                else:
                    viewers = self.sample_viewers(probe.ledger, wide=probe.base or everyone)
                results = {viewer: self.probe(probe, viewer) for viewer in viewers}
                self.compare_with_spectator(probe, results)
                self.positive_checks(probe, results)
        self.stats["full sweeps"] += 1

    def sample_viewers(self, ledger: DealLedger | None, wide: bool) -> list[Viewer]:
        about = ledger or self.ledger
        playing = [v for v in self.players if v.room_seat in about.order]
        sample = [self.rng.choice(playing), self.anonymous]
        if wide and self.sitting_out(about):
            sample.append(self.rng.choice(self.sitting_out(about)))
        if wide and self.rng.random() < 0.3:
            sample.append(self.outsider)
        return sample

    def probe(self, probe: Probe, viewer: Viewer) -> Fetched:
        target = probe.target_step
        idle = STREAM_IDLE_SECONDS
        if target is not None and probe.resumes_after >= target:
            target, idle = None, QUIET_STREAM_SECONDS  # nothing new is due: do not wait long
        started = time.monotonic()
        got = fetch(
            self.client,
            probe.url,
            query=probe.query,
            headers={**probe.headers, **viewer.headers},
            target_step=target,
            idle_seconds=idle,
        )
        self.timing[probe.endpoint.path] += time.monotonic() - started
        what = f"{probe.label} as {viewer.label}"
        assert got.status < 500, f"{self.where} {what}: {got.status} {got.text}"
        if probe.endpoint.audit:
            assert got.status in (401, 403), (
                f"{self.where} {what}: an audit endpoint answered {got.status} to a "
                f"non-auditor (R-VIEW-4): {got.text[:300]}"
            )
        self.check(what, viewer, got.text + "\n" + got.header_text, ledger=probe.ledger)
        is_sse = "event-stream" in got.content_type
        self.check(what, viewer, got.text, ledger=probe.ledger, is_json=got.is_json, is_sse=is_sse)
        self.stats[f"{probe.endpoint.path} ({'stream' if got.streamed else got.status})"] += 1
        return got

    def compare_with_spectator(self, probe: Probe, results: dict[Viewer, Fetched]) -> None:
        """R-SEAT-4: about a deal he sits out, a player is told what a spectator is told."""
        ledger = probe.ledger
        if ledger is None or probe.endpoint.audit:
            return
        spectator = results.get(self.anonymous)
        if spectator is None:
            return
        for viewer in self.sitting_out(ledger):
            mine = results.get(viewer)
            if mine is None:
                continue
            if mine.status != 200 or spectator.status != 200:
                continue
            if mine.streamed:
                if not (mine.complete and spectator.complete):
                    continue  # cut short (a loaded machine): nothing to compare
                same = _sse_data(mine.text) == _sse_data(spectator.text)
            elif mine.is_json:
                same = mine.json() == spectator.json()
            else:
                same = mine.text == spectator.text
            assert same, (
                f"{self.where} {probe.label}: {viewer.described_in(ledger)} is shown something "
                f"else than an anonymous spectator (R-SEAT-4):\n{mine.text[:2000]}\n--- vs ---\n"
                f"{spectator.text[:2000]}"
            )
            self.stats["sit-out views compared"] += 1

    def positive_checks(self, probe: Probe, results: dict[Viewer, Fetched]) -> None:
        """The sweep is not vacuous: the history shows each player his dealt and drawn cards
        and everybody every public card; a replay to now shows a player his hand."""
        ledger = probe.ledger
        path = probe.endpoint.path
        if ledger is None or probe.query.get("after") or probe.headers:
            return
        if probe.query.get("as") == "spectator":
            return
        if path in ("/deals/{deal_id}/events", "/deals/{deal_id}/stream"):
            for viewer, got in results.items():
                if got.status != 200 or (got.streamed and not got.complete):
                    continue
                shown = set(card_tokens(got.text))
                seat = ledger.seat_of(viewer)
                expected = set(ledger.public())
                if seat is not None:  # R-VIEW-3: his own draws are in his history
                    expected |= set(ledger.dealt.get(seat, [])) | set(ledger.drawn.get(seat, []))
                assert expected <= shown, (
                    f"{self.where} {probe.label} as {viewer.label} misses cards he may see "
                    f"(R-VIEW-2/3): {sorted(expected - shown)[:10]}"
                )
                self.stats["history positive checks"] += 1
        if path == "/deals/{deal_id}/replay" and probe.query.get("step") == ledger.version:
            st = self.canasta.get_deal(ledger.deal_id).state
            for viewer, got in results.items():
                seat = ledger.seat_of(viewer)
                if seat is not None and got.status == 200:
                    assert got.json().get("hand") == sorted(st.hands[seat]), (
                        f"{self.where} {probe.label} as {viewer.label}: not his hand"
                    )

    # --- logs -----------------------------------------------------------------------------------
    def scan_logs(self) -> None:
        """No log line shows a card that is not public (to anybody at all) or a seed; the
        cards a sender wrote in his own refused commands excepted."""
        lines = self.logs.take()
        self.stats["log lines scanned"] += len(lines)
        if not lines:
            return
        sets = [lg.secret(None) for lg in self.ledgers]
        hidden = frozenset.intersection(*sets) - self.log_exempt if sets else frozenset()
        for line in lines:
            leaks = find_leaks(line, secret_at=lambda _step: hidden, seeds=self.seeds())
            if leaks:
                raise AssertionError(
                    self.describe_leaks(f"log line {line[:500]!r}", None, leaks, None)
                )
        self.log_exempt.clear()

    # --- the game -------------------------------------------------------------------------------
    def run(self) -> None:
        self.start()
        self.play()
        self.end_of_deal_checks()
        table = self.canasta.get_table(UUID(self.table_id))
        if table.status == "playing" and self.rng.random() < SECOND_DEAL_CHANCE:
            deal = self.post(self.players[0], f"/tables/{self.table_id}/deals")["deal"]
            self.open_deal(UUID(deal))
            self.play(max_commands=self.rng.randint(3, 30))
            if self.deal.state.phase != OVER:
                self.post(self.players[0], f"/tables/{self.table_id}/stop")
                self.sync()
                assert self.deal.state.end_reason == "stopped", self.where
                self.stats["deals stopped by the host"] += 1
            self.end_of_deal_checks()
        self.scan_logs()

    def end_of_deal_checks(self) -> None:
        """After the deal: hands stay secret (R-VIEW-1 "during and after the game"), commands
        are refused, every stream ends."""
        self.sync()
        st = self.deal.state
        assert st.phase == OVER, self.where
        player = self.rng.choice([v for v in self.players if v.room_seat in st.order])
        self.refused("after the end", player, self.request(player, {"type": "draw"}), {400})
        self.light_sweep()
        self.full_sweep(everyone=True)
        self.scan_logs()
        left = [card for seat in st.order for card in st.hands[seat]]
        self.stats["cards left in hands at the end, kept secret"] += len(left)
        self.stats["deals played"] += 1


def _sse_data(text: str) -> list[tuple[str | None, str | None, str | None]]:
    return [(m.event, m.fields.get("id"), m.fields.get("data")) for m in sse_messages(text)]


# --- the tests ---------------------------------------------------------------------------------------

TOTALS: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def secrecy_summary(request: pytest.FixtureRequest) -> Iterator[None]:
    """With ``-v``: what the secrecy sweeps covered, summed over the module's games."""
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not TOTALS or request.config.option.verbose <= 0:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line("secrecy sweeps (R-VIEW-1..4, R-SEAT-4), totals over all games:")
        for key, value in sorted(TOTALS.items()):
            reporter.write_line(f"  {value:8} {key}")


@pytest.mark.parametrize("cfg", CONFIGS, ids=[cfg.id for cfg in CONFIGS])
@SECRECY_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_no_response_stream_error_or_log_shows_a_viewer_a_hidden_card_or_the_seed_r_view_1_to_4(
    log_watch: LogWatch, cfg: Config, seed: int
) -> None:
    """R-VIEW-1..4, R-SEAT-4: over a random complete deal (and sometimes a second one that
    the host stops), no response, stream, error or log line shows a viewer a card that was
    never public and is not his own, nor the seed; a sit-out sees what a spectator sees."""
    game_seed = seed * 1_000_003 + CONFIGS.index(cfg)
    started = time.monotonic()
    with TestClient(create_app(Settings(database_url="memory"))) as client:
        game = SecrecyGame(client, cfg, game_seed, log_watch)
        game.run()
    game.stats["seconds"] += round(time.monotonic() - started)
    game.stats["games"] += 1
    TOTALS.update(game.stats)
    assert game.stats["deals played"] >= 1
    assert game.stats["log lines scanned"] > 0, "no log record was captured: is caplog attached?"
    # A stale command's and a reused number's 409 carry their key and params too, checked.
    stale = game.stats["refused stale (409)"] + game.stats["refused reused_seq (409)"]
    assert game.stats["refusals with key and params (R-CMD-1)"] == stale, game.stats


def test_the_checks_report_a_planted_hidden_card_seed_and_log_line_r_view_1_r_view_4(
    log_watch: LogWatch,
) -> None:
    """The checks cannot pass vacuously: in a real deal played through HTTP, a text that
    shows a player another seat's card, a stock card or the seed is reported (with where the
    card is), so is a card shown at a step before it became his, and a log line holding a
    hand card; his own cards and the public cards are not reported."""
    with TestClient(create_app(Settings(database_url="memory"))) as client:
        game = SecrecyGame(client, Config("classic", 4), 2024, log_watch)
        game.start()
        game.play(max_commands=16)
        ledger = game.ledger
        st = game.deal.state
        me = game.players[st.order[0]]
        seat = ledger.seat_of(me)
        hidden = ledger.secret(seat)
        theirs = next(card for s in st.order if s != seat for card in st.hands[s] if card in hidden)
        in_stock = next(card for card in reversed(st.stock) if card in hidden)
        mine = sorted(st.hands[seat or 0])
        public = sorted(ledger.public())
        assert mine and public

        fine = json.dumps({"step": ledger.version, "hand": mine, "public": public})
        game.check("own and public cards", me, fine, ledger=ledger, is_json=True)
        game.check("own and public cards", me, fine, ledger=None, is_json=True)

        for planted, where in ((theirs, "in the hand of seat"), (in_stock, "in the stock")):
            text = json.dumps({"step": ledger.version, "note": f"x {planted} y"})
            with pytest.raises(AssertionError, match=rf"{re.escape(planted)}.*{where}"):
                game.check("a planted card", me, text, ledger=ledger, is_json=True)
            with pytest.raises(AssertionError, match=re.escape(planted)):
                game.check("a planted card", me, text, ledger=None)
            with pytest.raises(AssertionError, match=re.escape(planted)):
                game.check(
                    "a planted card",
                    game.anonymous,
                    f"event: x\ndata: {text}\n\n",
                    ledger=ledger,
                    is_sse=True,
                )
        with pytest.raises(AssertionError, match="seed"):
            game.check("a planted seed", me, f'"{ledger.seeds[0].upper()}"', ledger=ledger)

        # a card of his that he did not have yet at an earlier step
        later = [
            (step, card)
            for step in range(1, ledger.version)
            for card in sorted(ledger.secret(seat, step) - hidden)
            if card in mine
        ]
        assert later, "no card of his became his after step 1"
        step, card = later[-1]
        text = json.dumps({"step": step, "hand": [card]})
        with pytest.raises(AssertionError, match=f"{re.escape(card)}, secret at step {step}"):
            game.check("a replay", me, text, ledger=ledger, is_json=True)

        logging.getLogger("canasta.planted").debug("seat hand %s", [theirs])
        with pytest.raises(AssertionError, match=f"the log shows {re.escape(theirs)}"):
            game.scan_logs()
