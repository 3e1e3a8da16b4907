"""The game behind ``test_seat_change_secrecy.py`` (its docstring says what it checks): a
table played over HTTP whose seats change players at random, each change and command made
as a person or the bots process makes it, and the sweeps that read every route as every
viewer and check each answer against the auditor's history (``SeatGame``)."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.schemas import command_body
from domain.cards import full_deck
from domain.clock import stand_in
from domain.commands import TimeOut
from domain.legal import legal_command, seat_to_act
from domain.state import OVER
from domain.table import MISSED_TURNS, PLAYING
from domain.variants import get_variant
from tests.api.secrecy_support import (
    CARD_TOKEN,
    DealLedger,
    Endpoint,
    Probe,
    SweepContext,
    discover_get_endpoints,
    fetch,
    find_leaks,
    probes_for,
)
from tests.support.http import expectation, register_player
from tests.support.log_watch import LogWatch
from tests.web.secrecy import Secrets

Headers = dict[str, str]

AUDITOR = "audrey"
OUTSIDER = "otto"  # registered, never seated
NEWCOMERS = ("eve", "fay")  # registered; the host may give them a seat
#: The moves that change who plays a seat (or, a timeout, who plays the rest of a turn).
CHANGES = frozenset({"leave", "back", "give", "timeout"})
#: Deals a game plays at most (the second opens while seats may be away).
MAX_DEALS = 2
#: How long a stream resumed at its latest step is listened to (nothing new is due).
QUIET_STREAM_SECONDS = 0.05
#: Silence after which a stream with events due is cut off (a loaded machine may be slow).
STREAM_IDLE_SECONDS = 2.0
#: A stream left open across a change of seat: how long it is given to open before the
#: change, and the silence after which it is read as finished.
LIVE_OPEN_SECONDS = 0.3
LIVE_IDLE_SECONDS = 1.5
#: ... read at most this long in all (a busy machine may take seconds to play the body's moves).
LIVE_TOTAL_SECONDS = 60.0


@dataclass
class Person:
    name: str
    headers: Headers


@dataclass
class SeatGame:
    """One table whose seats change players while every viewer reads every route."""

    client: TestClient
    entry: str
    players: int
    clock: bool
    rng: random.Random
    #: how to play the same example again (the test's arguments)
    example: str = ""
    #: every log record and printed line, scanned at each sweep (None: not watched)
    logs: LogWatch | None = None
    log_lines: int = 0
    #: cards the viewers wrote in their own requests (a log may echo them)
    log_exempt: set[str] = field(default_factory=set)
    people: dict[str, Person] = field(default_factory=dict)
    table: str = ""
    deals: list[str] = field(default_factory=list)
    endpoints: list[Endpoint] = field(default_factory=list)
    #: answers given to a person (his commands, his seat changes), checked at the next sweep
    pending: list[tuple[str, str, str]] = field(default_factory=list)
    #: streams left open across a change: (viewer, deal, text, the deal's step at the end)
    live: list[tuple[str | None, str, str, int]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # what happened, for failure messages
    sweeps: int = 0
    requests: int = 0

    @property
    def canasta(self) -> CanastaApp:
        app: CanastaApp = self.client.app.state.canasta  # type: ignore[attr-defined]
        return app

    @property
    def host(self) -> Person:
        return self.people["ann"]

    @property
    def deal_id(self) -> str:
        return self.deals[-1]

    def deal(self) -> Any:
        return self.canasta.get_deal(UUID(self.deal_id))

    def where(self) -> str:
        deal = self.deal() if self.deals else None
        at = f" deal {len(self.deals)} step {deal.version}" if deal is not None else ""
        return f"[{self.example}{at}; so far: {'; '.join(self.log[-12:])}]"

    # --- set-up ---------------------------------------------------------------------------------
    def start(self, missed_limit: int) -> None:
        names = ["ann", "bob", "cy", "di"][: self.players]
        for name in [*names, *NEWCOMERS, OUTSIDER, AUDITOR]:
            self.people[name] = Person(name, register_player(self.client, name))
        body: dict[str, Any] = {"entry": self.entry, "players": self.players}
        if self.clock:
            body["turn_seconds"] = 60
        answer = self.client.post("/tables", json=body, headers=self.host.headers)
        assert answer.status_code == 201, answer.text
        self.table = answer.json()["id"]
        if self.clock:
            limit = self.client.put(
                f"/tables/{self.table}/missed-turns",
                json={"limit": missed_limit},
                headers=self.host.headers,
            )
            assert limit.status_code == 200, limit.text
        for seat, name in enumerate(names):
            joined = self.client.post(
                f"/tables/{self.table}/seats",
                json={"seat": seat},
                headers=self.people[name].headers,
            )
            assert joined.status_code == 200, joined.text
        started = self.client.post(f"/tables/{self.table}/start", headers=self.host.headers)
        assert started.status_code == 201, started.text
        self.deals.append(started.json()["deal"])
        self.endpoints = [
            e
            for e in discover_get_endpoints(self.client.get("/openapi.json").json())
            if not e.audit
        ]
        self.log.append(f"deal 1 started, seats {names}")

    def viewers(self) -> list[Person | None]:
        """Everybody but the auditor; None: an anonymous spectator."""
        return [p for name, p in self.people.items() if name != AUDITOR] + [None]

    # --- who may do what now ----------------------------------------------------------------------
    def table_now(self) -> Any:
        return self.canasta.get_table(UUID(self.table))

    def present(self) -> list[str]:
        """People who play their own seat now."""
        table = self.table_now()
        return [p for s, p in enumerate(table.seats) if p in self.people and not table.away(s)]

    def away(self) -> list[tuple[int, str]]:
        """(seat, player) of the seats the bot plays for their absent players."""
        table = self.table_now()
        return [(s, p) for s, p in enumerate(table.seats) if p is not None and table.away(s)]

    def unseated(self) -> list[str]:
        """Registered people who may be given a seat: no seat at the table now."""
        seats = set(self.table_now().seats)
        return [n for n in self.people if n not in seats and n not in (AUDITOR, OUTSIDER)]

    def timeout_seat(self) -> int | None:
        """The seat to act, if a person plays it and its clock could run out now."""
        if not self.clock:
            return None
        st_ = self.deal().state
        seat = seat_to_act(st_)
        if seat is None or seat in st_.timed_out or st_.player_ids[seat] not in self.people:
            return None
        return seat

    # --- actions ----------------------------------------------------------------------------------
    def play(self, commands: int) -> None:
        """Up to ``commands`` legal commands from whoever must act: a person over HTTP, the
        bot (or a timed-out turn's stand-in) through the application, as the bots process."""
        for _ in range(commands):
            deal = self.deal()
            state = deal.state
            seat = seat_to_act(state)
            if seat is None:
                break
            command = legal_command(state, seat, self.rng)
            player = state.player_ids[seat]
            if seat in state.timed_out:
                self.canasta.act(deal.id, stand_in(seat), command)
            elif player in self.people:
                seq = self.canasta.last_seq(self.table, player) + 1
                body = {"seq": seq, "expect": expectation(deal), "command": command_body(command)}
                answer = self.client.post(
                    f"/deals/{deal.id}/commands", json=body, headers=self.people[player].headers
                )
                assert answer.status_code == 200, f"{self.where()} {player}: {answer.text}"
                self.pending.append((player, self.deal_id, answer.text))
            else:
                self.canasta.act(deal.id, player, command)
        self.log.append(f"played to step {self.deal().version}")
        self.next_deal_if_over()

    def next_deal_if_over(self) -> None:
        if self.deal().state.phase != OVER or len(self.deals) >= MAX_DEALS:
            return
        if self.table_now().status != PLAYING:
            return
        # while the host is away, a player who plays his own seat may open it (docs/tables.md)
        host_away = "ann" not in self.present()
        opener = self.rng.choice(self.present() or ["ann"]) if host_away else "ann"
        url = f"/tables/{self.table}/deals"
        opened = self.client.post(url, headers=self.people[opener].headers)
        assert opened.status_code == 201, f"{self.where()} {opener}: {opened.text}"
        self.deals.append(opened.json()["deal"])
        self.log.append(f"deal {len(self.deals)} opened by {opener}, away: {self.away()}")

    def seat_change(self, name: str, method: str, url: str, body: Any = None) -> None:
        answer = self.client.request(method, url, json=body, headers=self.people[name].headers)
        assert answer.status_code == 200, f"{self.where()} {name} {method} {url}: {answer.text}"
        self.pending.append((name, self.deal_id, answer.text))

    def leave(self, name: str) -> None:
        self.seat_change(name, "POST", f"/tables/{self.table}/leave")
        self.log.append(f"{name} left at step {self.deal().version}")

    def take_back(self, name: str) -> None:
        self.seat_change(name, "POST", f"/tables/{self.table}/seats", {})
        self.log.append(f"{name} took his seat back at step {self.deal().version}")

    def give(self, seat: int, name: str) -> None:
        url = f"/tables/{self.table}/seats/{seat}/give"
        self.seat_change("ann", "POST", url, {"player": name})
        self.log.append(f"seat {seat} given to {name} at step {self.deal().version}")

    def time_out(self, seat: int) -> None:
        """The turn clock of ``seat`` runs out: the stand-in's ``time_out`` (decided on the
        step it carries), and the takeover once the seat has missed the limit in a row."""
        deal = self.deal()
        self.canasta.act(deal.id, stand_in(seat), TimeOut(deal.version))
        missed = self.deal().state.missed[seat]
        self.log.append(f"seat {seat} timed out at step {deal.version} ({missed} in a row)")
        limit = self.table_now().missed_turns_limit
        if limit and missed >= limit:
            self.canasta.take_over_seat(UUID(self.table), seat, MISSED_TURNS)
            self.log.append(f"the bot took seat {seat} over (missed turns)")

    @contextlib.contextmanager
    def watching(self, names: list[str | None]) -> Iterator[None]:
        """The deal's stream of each of ``names`` (None: anonymous) is open while the body
        runs (a change of seat and the commands after it), and read to its end or until it
        falls silent; the next sweep checks what it sent, each message at its step."""
        if not names:
            yield
            return
        deal = self.deal_id
        last: list[int] = []  # the deal's step once the body has run: read no further
        with ThreadPoolExecutor(len(names)) as pool:
            futures = [
                (
                    name,
                    pool.submit(
                        fetch,
                        self.client,
                        f"/deals/{deal}/stream",
                        headers=self.people[name].headers if name else {},
                        target_step=lambda: last[0] if last else None,
                        idle_seconds=LIVE_IDLE_SECONDS,
                        total_seconds=LIVE_TOTAL_SECONDS,
                    ),
                )
                for name in names
            ]
            time.sleep(LIVE_OPEN_SECONDS)
            yield
            step = self.canasta.get_deal(UUID(deal)).version
            last.append(step)
            for name, future in futures:
                self.live.append((name, deal, future.result(timeout=60).text, step))

    # --- the sweep --------------------------------------------------------------------------------
    def sweep(self, focus: list[str | None] | None = None, every_deal: bool = False) -> None:
        """Every viewer reads every route; nothing he reads may hold a card hidden from him.
        The routes whose answer depends on who asks (a deal's view, history, replay, logs,
        menu, stream, dry run) are read by each viewer of ``focus`` and two others drawn at
        random (None: by everybody), about the current deal (every deal with
        ``every_deal``); the others (the discard log, ``?as=spectator``, the table, its
        stream and scores, the lobby, ``/me``...) by one viewer drawn at random."""
        self.sweeps += 1
        auditor = self.people[AUDITOR].headers
        histories = {
            d: self.client.get(f"/audit/deals/{d}", headers=auditor).json() for d in self.deals
        }
        secrets = {d: Secrets(history) for d, history in histories.items()}
        seeds = [str(history["seed"]) for history in histories.values()]
        ledgers = []
        for d in self.deals:
            state = self.canasta.get_deal(UUID(d)).state
            decks = get_variant(state.variant).decks
            ledger = DealLedger(UUID(d), self.table, state.number, full_deck(decks))
            ledger.sync(self.canasta)
            ledgers.append(ledger)

        def secret_at(name: str | None, deal: str | None) -> Callable[[int | None], frozenset[str]]:
            if deal is not None:
                known = secrets[deal]
                return lambda step: (
                    known.hidden_for(name, step)
                    if step is not None
                    else known.hidden_ever(name, known.last_step)
                )
            # about the table or nothing in particular: a card's name is reused by each deal
            every = [s.hidden_ever(name, s.last_step) for s in secrets.values()]
            table_level = frozenset.intersection(*every)
            return lambda step: table_level

        def check(name: str | None, deal: str | None, what: str, text: str, **kind: Any) -> None:
            leaks = find_leaks(text, secret_at=secret_at(name, deal), seeds=seeds, **kind)
            assert not leaks, (
                f"SECRECY LEAK {self.where()}: {what} shown to {name or 'an anonymous viewer'}: "
                + "; ".join(
                    f"{leak.card} (secret at step {leak.step}): ...{leak.context}..."
                    for leak in leaks[:5]
                )
            )

        for sender, about, text in self.pending:
            check(sender, about, "the answer to his own request", text, is_json=True)
        self.pending.clear()
        for watcher, about, text, step in self.live:
            check(
                watcher, about, "his stream, left open across a change of seat", text, is_sse=True
            )
            assert f"id: {step}" in text or "event: end" in text, (
                f"{self.where()} {watcher}'s open stream did not follow the deal to step {step}: "
                f"...{text[-300:]}"
            )
        self.live.clear()
        self.scan_logs(secrets, seeds)

        ctx = SweepContext(
            table_id=self.table,
            table_version=self.table_now().version,
            ledgers=ledgers,
            players=self.players,
            names=[],
            rng=self.rng,
            all_deals=every_deal,
            variants=True,
        )
        probes = [p for e in self.endpoints for p in probes_for(e, ctx)]
        personal = [p for p in probes if _personal(p)]
        shared = [p for p in probes if not _personal(p)]
        viewers = self.viewers()
        sharer = self.rng.choice(viewers)
        if focus is not None:
            chosen = set(focus) | {p.name if p else None for p in self.rng.sample(viewers, 2)}
            viewers = [p for p in viewers if (p.name if p else None) in chosen or p is sharer]
        for person in viewers:
            name = person.name if person else None
            auth = person.headers if person else {}
            for probe in personal + (shared if person is sharer else []):
                # a stream resumed at its last step has nothing due: listened to briefly
                due = probe.target_step is None or probe.resumes_after < probe.target_step
                got = fetch(
                    self.client,
                    probe.url,
                    query=probe.query,
                    headers={**auth, **probe.headers},
                    target_step=probe.target_step,
                    idle_seconds=STREAM_IDLE_SECONDS if due else QUIET_STREAM_SECONDS,
                )
                self.requests += 1
                of_deal = str(probe.ledger.deal_id) if probe.ledger is not None else None
                sse = "event-stream" in got.content_type
                check(name, of_deal, probe.label, got.text, is_json=got.is_json, is_sse=sse)
                check(name, of_deal, f"the headers of {probe.label}", got.header_text)
                if sse and got.status == 200 and due:
                    assert got.complete, f"{self.where()} {probe.label}: the stream stopped short"
            if person is not None:
                self.positive(person, secrets, histories)
                self.dry_run(person, secrets, check)
                self.not_his_seat(person, secrets, check)

    def scan_logs(self, secrets: dict[str, Secrets], seeds: list[str]) -> None:
        """No log line (of any logger, at DEBUG) shows a card hidden from a spectator now, in
        any deal of the table, nor a seed; the cards a viewer named himself excepted."""
        if self.logs is None:
            return
        lines = self.logs.take()
        self.log_lines += len(lines)
        hidden = frozenset.intersection(
            *(s.hidden_ever(None, s.last_step) for s in secrets.values())
        ) - frozenset(self.log_exempt)
        for line in lines:
            leaks = find_leaks(line, secret_at=lambda _step: hidden, seeds=seeds)
            assert not leaks, f"SECRECY LEAK {self.where()}: log line {line[:500]!r}: {leaks}"
        self.log_exempt.clear()

    def positive(
        self, person: Person, secrets: dict[str, Secrets], histories: dict[str, Any]
    ) -> None:
        """What he is shown of his seat is exactly what he may see: the hand of the seat he
        plays now, and the draws he made (the history's and the draw log's)."""
        name = person.name
        for d in self.deals:
            known = secrets[d]
            state = self.canasta.get_deal(UUID(d)).state
            now = known.last_step
            seat = known.seat_of(name, now)
            view = self.client.get(f"/deals/{d}", headers=person.headers).json()
            expected_hand = sorted(state.hands[seat]) if seat is not None else None
            assert view["hand"] == expected_hand, f"{self.where()} {name}'s hand in deal {d}"
            drawn = {  # every draw of the deal: step -> seat
                int(e["step"]): int(e["seat"])
                for e in histories[d]["events"]
                if e["kind"] == "CardsDrawn"
            }
            his = {s for s, by in drawn.items() if known.seat_of(name, s) == by}
            history = self.client.get(f"/deals/{d}/events", headers=person.headers).json()
            shown = {e["step"] for e in history if e["kind"] == "CardsDrawn" and "cards" in e}
            assert shown == his, f"{self.where()} {name}'s draws in his history of {d}"
            log = self.client.get(f"/deals/{d}/draw-log", headers=person.headers)
            if name in state.player_ids:
                mine = {s for s in his if drawn[s] == state.player_ids.index(name)}
                assert log.status_code == 200, log.text
                assert {row["step"] for row in log.json()} == mine, (
                    f"{self.where()} {name}'s draw log of {d}: {log.text[:300]}"
                )
            else:
                assert log.status_code in (401, 403), log.text

    def dry_run(
        self, person: Person, secrets: dict[str, Secrets], check: Callable[..., None]
    ) -> None:
        """``POST /deals/{id}/commands/check`` of a discard naming a card hidden from him:
        one a seat holds (his seat's first, e.g. drawn by the bot while he was away), and one
        in the stock. Nothing but the card he named may appear, and the two answers agree."""
        deal = self.deal()
        state = deal.state
        if state.phase == OVER:
            return
        known = secrets[self.deal_id]
        hidden = known.hidden_for(person.name, known.last_step)
        in_hands = [
            card
            for seat in self.seat_order(person.name)
            for card in sorted(state.hands[seat])
            if card in hidden
        ]
        in_stock = [card for card in state.stock if card in hidden]
        if not in_hands or not in_stock:
            return
        answers = []
        for card in (in_hands[0], in_stock[-1]):
            self.log_exempt.add(card)
            body = {"expect": expectation(deal), "command": {"type": "discard", "card": card}}
            got = self.client.post(
                f"/deals/{deal.id}/commands/check", json=body, headers=person.headers
            )
            self.requests += 1
            check(
                person.name,
                self.deal_id,
                f"the dry run of a discard of {card}",
                got.text,
                is_json=True,
                exempt=frozenset({card}),
            )
            answers.append((got.status_code, CARD_TOKEN.sub("<card>", got.text)))
        assert answers[0] == answers[1], (
            f"{self.where()} {person.name}'s dry runs tell a held card from a stock card: {answers}"
        )

    def not_his_seat(
        self, person: Person, secrets: dict[str, Secrets], check: Callable[..., None]
    ) -> None:
        """A person who plays no seat now (away, or his seat given) sends the move of the
        seat to act as if it were his: refused (403), nothing recorded, nothing told."""
        deal = self.deal()
        state = deal.state
        seat = seat_to_act(state)
        if seat is None or person.name in state.player_ids:
            return
        command = legal_command(state, seat, random.Random(deal.version))
        self.log_exempt.update(CARD_TOKEN.findall(str(command_body(command))))
        body = {
            "seq": self.canasta.last_seq(self.table, person.name) + 1,
            "expect": expectation(deal),
            "command": command_body(command),
        }
        for route in ("commands", "commands/check"):
            got = self.client.post(f"/deals/{deal.id}/{route}", json=body, headers=person.headers)
            self.requests += 1
            check(
                person.name,
                self.deal_id,
                f"POST {route} of another seat's move",
                got.text,
                is_json=True,
            )
            assert got.status_code in (401, 403), f"{self.where()} {person.name}: {got.text}"
        assert self.canasta.get_deal(deal.id).version == deal.version, "it was recorded"

    def seat_order(self, name: str) -> list[int]:
        """The seats, those he ever played in this table's current deal first."""
        ids = self.deal().state.player_ids
        table = self.table_now()
        first = [s for s, p in enumerate(table.seats) if p == name]
        first += [s for s, p in enumerate(ids) if p.endswith(f":for:{name}") and s not in first]
        return first + [s for s in range(self.players) if s not in first]


def _personal(probe: Probe) -> bool:
    """Whether the answer depends on who asks: a route about a deal, but for its public
    discard log and the spectator's view asked for with ``?as=spectator``."""
    return (
        probe.ledger is not None
        and not probe.url.endswith("/discard-log")
        and probe.query.get("as") != "spectator"
    )
