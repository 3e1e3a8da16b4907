"""Live updates over Server-Sent Events: ``GET /deals/{id}/stream`` and ``GET /tables/{id}/stream``.

Every viewer's stream must carry every event of the deal he may see, in order, exactly as
``projections.visibility.event_view`` shows it to him (R-VIEW-1..4): a player sees his own dealt
and drawn cards and no other seat's; a spectator no card that was ever private and never became
public; nobody the shuffle seed. Streams resume after the ``Last-Event-ID`` (or ``?after=``) the
client sends. The live tests run real uvicorn processes (SQLite, and PostgreSQL with two
processes sharing one database: commands to one, streams from the other) and play a whole deal
through HTTP with the random legal player while the streams are read.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx
import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.routes.stream import table_event_view
from domain.cards import full_deck
from projections.visibility import Viewer, event_view
from tests.api.conftest import Server
from tests.support.http import Game, open_table, state_reader

HIDDEN_KINDS = frozenset({"DeckShuffled", "DeckStacked"})  # never shown but to an auditor
READ_TIMEOUT = 60.0  # seconds a live stream may stay silent before a test gives up
FAST = {"CANASTA_STREAM_POLL_SECONDS": "0.05", "CANASTA_STREAM_HEARTBEAT_SECONDS": "0.5"}


# --- reading streams ----------------------------------------------------------------------------


@dataclass
class Message:
    event: str | None
    id: int | None
    data: Any


def parse_sse(lines: Iterable[str]) -> Iterable[Message | str]:
    """SSE messages as they arrive; a comment line comes out as its text (``": x"`` -> ``"x"``)."""
    event: str | None = None
    ident: int | None = None
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield Message(event, ident, json.loads("\n".join(data)))
            event, ident, data = None, None, []
        elif line.startswith(":"):
            yield line[1:].strip()
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "id":
                ident = int(value)
            elif name == "data":
                data.append(value)


@dataclass
class StreamReader:
    """Reads one stream in a thread until ``event: end`` (or ``stop_after`` messages)."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    stop_after: int | None = None
    messages: list[Message] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    status: int | None = None
    ended: bool = False
    error: BaseException | None = None
    connected: threading.Event = field(default_factory=threading.Event)
    heartbeat: threading.Event = field(default_factory=threading.Event)

    def start(self) -> StreamReader:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            timeout = httpx.Timeout(10.0, read=READ_TIMEOUT)
            with httpx.stream(
                "GET", self.url, headers=self.headers, params=self.params, timeout=timeout
            ) as response:
                self.status = response.status_code
                assert response.headers["content-type"].startswith("text/event-stream")
                lines = response.iter_lines()
                for item in parse_sse(self._keep(lines)):
                    if isinstance(item, str):
                        self.comments.append(item)
                        self.heartbeat.set()
                        continue
                    if item.event == "end":
                        self.ended = True
                        return
                    self.messages.append(item)
                    self.connected.set()
                    if self.stop_after is not None and len(self.messages) >= self.stop_after:
                        return
        except BaseException as error:
            self.error = error
        finally:
            self.connected.set()

    def _keep(self, lines: Iterable[str]) -> Iterable[str]:
        for line in lines:
            self.raw.append(line)
            yield line

    def wait(self, timeout: float = READ_TIMEOUT) -> StreamReader:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"stream {self.url} did not end"
        if self.error is not None:
            raise self.error
        return self

    @property
    def text(self) -> str:
        return "\n".join(self.raw)

    @property
    def steps(self) -> list[int]:
        return [m.id for m in self.messages if m.id is not None]

    @property
    def data(self) -> list[Any]:
        return [m.data for m in self.messages]


def read_all(url: str, **kwargs: Any) -> StreamReader:
    return StreamReader(url, **kwargs).start().wait()


# --- what each viewer must see ------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value))


def expected_events(stored: list[Any], viewer: Viewer, canasta: CanastaApp, deal: str) -> list[Any]:
    seating = canasta.get_deal(UUID(deal)).state
    shown = (event_view(event, viewer, seating) for event in stored)
    return [jsonable(view) for view in shown if view is not None]


def public_cards(stored: list[Any]) -> set[str]:
    """Every card some public event showed (R-VIEW-2)."""
    cards: set[str] = set()
    for event in stored:
        kind = type(event).__name__
        if kind in ("CardTurnedUp", "CardDiscarded", "RedThreeLaid"):
            cards.add(event.card)
        elif kind in ("MeldLaid", "MeldExtended"):
            cards.update(event.cards)
        elif kind == "PileTaken":
            cards.add(event.top)
    return cards


def own_cards(stored: list[Any], seat: int) -> set[str]:
    """The cards ``seat`` was dealt or drew (his private knowledge, R-VIEW-1/3)."""
    cards: set[str] = set()
    for event in stored:
        kind = type(event).__name__
        if kind == "CardsDealt":
            cards.update(card for s, card in event.cards if s == seat)
        elif kind == "CardsDrawn" and event.seat == seat:
            cards.update(event.cards)
    return cards


def assert_shows_none_of(reader: StreamReader, cards: set[str], what: str) -> None:
    text = reader.text
    leaked = sorted(card for card in cards if f'"{card}"' in text)
    assert not leaked, f"{what} was shown {leaked}"


def check_deal_streams(
    canasta: CanastaApp,
    game: Game,
    spectators: list[StreamReader],
    players: dict[int, StreamReader],
) -> list[Any]:
    """Every reader got exactly its viewer's events, in order, and nothing secret."""
    assert game.deal is not None
    stored: list[Any] = list(canasta.events.get(UUID(game.deal)))
    final = stored[-1]
    assert type(final).__name__ == "DealScored"
    visible_steps = [e.originator_version for e in stored if type(e).__name__ not in HIDDEN_KINDS]
    never_public = set(full_deck(canasta.get_deal(UUID(game.deal)).state.decks))
    never_public -= public_cards(stored)
    seeds = [e.seed for e in stored if type(e).__name__ == "DeckShuffled"]
    assert seeds and never_public

    for reader in [*spectators, *players.values()]:
        assert reader.status == 200 and reader.ended, reader.url
        assert reader.steps == visible_steps, "every step in order, none but hidden ones skipped"
        assert all(m.event == m.data["kind"] and m.id == m.data["step"] for m in reader.messages)
        assert not any(seed in reader.text for seed in seeds), "R-VIEW-4: the seed is never shown"

    spectator_view = expected_events(stored, Viewer.spectator(), canasta, game.deal)
    for reader in spectators:
        assert reader.data == spectator_view
        assert_shows_none_of(reader, never_public, "a spectator (R-VIEW-1/4)")
        assert not any(
            "cards" in d for d in reader.data if d["kind"] in ("CardsDealt", "CardsDrawn")
        )

    for seat, reader in players.items():
        assert reader.data == expected_events(stored, Viewer.player(seat), canasta, game.deal)
        own = own_cards(stored, seat)
        dealt = [c for d in reader.data if d["kind"] == "CardsDealt" for c in d["cards"]]
        assert dealt == [
            card
            for e in stored
            if type(e).__name__ == "CardsDealt"
            for s, card in e.cards
            if s == seat
        ], "R-VIEW-1: a player sees the cards dealt to him"
        for shown in reader.data:
            if shown["kind"] == "CardsDrawn":
                assert ("cards" in shown) == (shown["seat"] == seat), "R-VIEW-3: own draws only"
        drawn = [c for d in reader.data if d["kind"] == "CardsDrawn" for c in d.get("cards", ())]
        assert drawn == [
            card
            for e in stored
            if type(e).__name__ == "CardsDrawn" and e.seat == seat
            for card in e.cards
        ], "R-VIEW-3: a player sees his own draws"
        assert_shows_none_of(reader, never_public - own, f"player {seat} (R-VIEW-1)")
    return stored


class Autoplayer(threading.Thread):
    """Plays the current deal to its end with random legal commands sent over HTTP."""

    def __init__(self, game: Game, canasta: CanastaApp, seed: int) -> None:
        super().__init__(daemon=True)
        self.game, self.canasta, self.seed = game, canasta, seed
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.game.play_deal(state_reader(self.canasta), random.Random(self.seed))
        except BaseException as error:
            self.error = error

    def finish(self) -> None:
        self.join(READ_TIMEOUT)
        assert not self.is_alive(), "the deal did not end"
        if self.error is not None:
            raise self.error


def live_deal(
    server: Server,
    commands: httpx.Client,
    canasta: CanastaApp,
    *,
    seed: int,
    resume_on: Server,
) -> None:
    """Open every viewer's stream (and the table's) of a new game on ``server``, play its first
    deal by sending the commands through ``commands`` (possibly to another process), and check
    every stream. One spectator drops his stream after 12 events and resumes it on
    ``resume_on`` with ``Last-Event-ID``: what he got in all must be the whole deal."""
    game = open_table(commands, start=False)
    table = StreamReader(f"{server.url}/tables/{game.table}/stream").start()
    assert table.connected.wait(READ_TIMEOUT)  # its first message: the server follows the store
    deal = game.start()
    url = f"{server.url}/deals/{deal}/stream"
    spectators = [
        StreamReader(url).start(),
        StreamReader(url, headers=game.headers[game.names[0]], params={"as": "spectator"}).start(),
    ]
    players = {
        seat: StreamReader(url, headers=game.headers[name]).start()
        for seat, name in enumerate(game.names)
    }
    interrupted = StreamReader(url, stop_after=12).start()
    readers = [*spectators, *players.values()]
    for reader in [*readers, interrupted]:
        assert reader.connected.wait(READ_TIMEOUT) and reader.error is None, reader.error
    assert spectators[0].heartbeat.wait(10), "an idle stream sends heartbeat comments"

    player = Autoplayer(game, canasta, seed)
    player.start()
    interrupted.wait()
    assert len(interrupted.messages) == 12 and not interrupted.ended
    # The streams opened from here on find the deal in the follower's memory (see below).
    from_memory = catchups(server, "memory")
    resumed = StreamReader(
        f"{resume_on.url}/deals/{deal}/stream",
        headers={"Last-Event-ID": str(interrupted.steps[-1])},
    ).start()
    # Opened once the server's follower has passed the deal's first events (the table's
    # stream kept it reading from before the deal began): what came before is sent from its
    # memory, not read from the store (app/fanout.py), and must be the same.
    late = [
        StreamReader(url).start(),
        StreamReader(url, headers=game.headers[game.names[1]]).start(),
    ]
    player.finish()
    for reader in [*readers, resumed, *late]:
        reader.wait()
    stored = check_deal_streams(
        canasta, game, [*spectators, resumed_join(interrupted, resumed), late[0]], players
    )
    check_deal_streams(canasta, game, [], {1: late[1]})
    assert catchups(server, "memory") == from_memory + 2 + (resume_on is server)

    response = commands.post(f"/tables/{game.table}/stop", headers=game.host)
    assert response.status_code == 200, response.text
    table.wait()
    assert table.ended
    stored_table = [jsonable(table_event_view(e)) for e in canasta.events.get(UUID(game.table))]
    assert table.data == stored_table
    kinds = [d["kind"] for d in table.data]
    assert kinds == ["Created"] + ["PlayerSeated"] * 4 + [
        "GameStarted",
        "DealOpened",
        "DealRecorded",
        "GameStopped",
    ]
    opened = table.data[kinds.index("DealOpened")]
    recorded = table.data[kinds.index("DealRecorded")]
    assert opened["deal_id"] == deal and recorded["deal_id"] == deal
    totals = {side: b["total"] for side, b in stored[-1].scores.items()}
    assert recorded["scores"] == totals


def catchups(server: Server, source: str) -> float:
    """``canasta_stream_catchups_total{source=...}`` of the server (app/metrics.py)."""
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    line = f'canasta_stream_catchups_total{{source="{source}"}} '
    return sum(float(row[len(line) :]) for row in text.splitlines() if row.startswith(line))


def resumed_join(first: StreamReader, rest: StreamReader) -> StreamReader:
    """One reader holding what an interrupted client saw, then what its resumption brought."""
    joined = StreamReader(first.url)
    joined.messages = first.messages + rest.messages
    joined.raw = first.raw + rest.raw
    joined.status, joined.ended = rest.status, rest.ended
    return joined


# --- live, against real servers -----------------------------------------------------------------


def test_every_viewer_streams_every_event_of_a_whole_deal_live_as_he_may_see_it_r_view_1_to_4(
    uvicorn_server: Callable[..., Server], store_reader: Callable[..., CanastaApp]
) -> None:
    server = uvicorn_server(env=FAST)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        live_deal(server, http, store_reader(server.settings), seed=11, resume_on=server)
    assert "Traceback" not in server.log() and "ERROR" not in server.log()


@pytest.mark.postgres
def test_a_stream_served_by_another_process_shows_every_command_sent_to_the_first_r_hist_1(
    uvicorn_server: Callable[..., Server],
    store_reader: Callable[..., CanastaApp],
    migrated_postgres_url: str,
) -> None:
    writer = uvicorn_server(database_url=migrated_postgres_url, env=FAST)
    streamer = uvicorn_server(database_url=migrated_postgres_url, env=FAST)
    with httpx.Client(base_url=writer.url, timeout=30) as http:
        live_deal(streamer, http, store_reader(writer.settings), seed=12, resume_on=writer)
    for server in (writer, streamer):
        assert "Traceback" not in server.log() and "ERROR" not in server.log()


def test_open_streams_end_when_the_server_shuts_down(
    uvicorn_server: Callable[..., Server],
) -> None:
    server = uvicorn_server(env=FAST)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http)
    readers = [
        StreamReader(f"{server.url}/deals/{game.deal}/stream").start(),
        StreamReader(f"{server.url}/tables/{game.table}/stream").start(),
    ]
    for reader in readers:
        assert reader.connected.wait(READ_TIMEOUT)
    took = server.stop()
    for reader in readers:
        reader.wait(10)
        assert not reader.ended, "a shutdown closes the stream without `end`: clients reconnect"
    assert took < 10, f"shutdown took {took:.1f}s with open streams"


# --- resumption and refusals, in process (a finished deal's stream ends by itself) -------------


@pytest.fixture
def finished_deal(client: TestClient) -> tuple[Game, CanastaApp, list[Any]]:
    game = open_table(client)
    canasta: CanastaApp = client.app.state.canasta  # type: ignore[attr-defined]
    game.play_deal(state_reader(canasta), random.Random(5))
    assert game.deal is not None
    return game, canasta, list(canasta.events.get(UUID(game.deal)))


def stream_text(client: TestClient, url: str, **kwargs: Any) -> list[Message | str]:
    response = client.get(url, **kwargs)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return list(parse_sse(response.text.splitlines()))


def events_of(items: list[Message | str]) -> list[Message]:
    messages = [m for m in items if isinstance(m, Message)]
    assert messages and messages[-1].event == "end", "a finished deal's stream ends with `end`"
    return messages[:-1]


def test_resuming_with_last_event_id_continues_exactly_after_that_step_r_hist_2(
    client: TestClient, finished_deal: tuple[Game, CanastaApp, list[Any]]
) -> None:
    game, canasta, stored = finished_deal
    url = f"/deals/{game.deal}/stream"
    visible = [e.originator_version for e in stored if type(e).__name__ not in HIDDEN_KINDS]
    final = stored[-1].originator_version
    for last in [0, 1, 2, 3, len(stored) // 2, final - 1]:
        messages = events_of(stream_text(client, url, headers={"Last-Event-ID": str(last)}))
        assert [m.id for m in messages] == [s for s in visible if s > last]
        assert [m.id for m in events_of(stream_text(client, url, params={"after": last}))] == [
            s for s in visible if s > last
        ]
    seat = 2
    headers = {**game.headers[game.names[seat]], "Last-Event-ID": "7"}
    tail = events_of(stream_text(client, url, headers=headers))
    mine = expected_events(stored, Viewer.player(seat), canasta, str(game.deal))
    assert [m.data for m in tail] == [d for d in mine if d["step"] > 7]


def test_the_last_event_id_header_wins_over_after_and_a_resume_past_the_end_just_ends(
    client: TestClient, finished_deal: tuple[Game, CanastaApp, list[Any]]
) -> None:
    game, _canasta, stored = finished_deal
    url = f"/deals/{game.deal}/stream"
    both = events_of(stream_text(client, url, headers={"Last-Event-ID": "10"}, params={"after": 3}))
    assert both[0].id == 11
    final = stored[-1].originator_version
    for last in (final, final + 100):
        items = stream_text(client, url, headers={"Last-Event-ID": str(last)})
        assert events_of(items) == []
        end = [m for m in items if isinstance(m, Message)][-1]
        assert end.data == {"step": final}


def test_a_finished_deal_streams_whole_to_a_late_spectator_with_no_secret_r_view_1_r_view_4(
    client: TestClient, finished_deal: tuple[Game, CanastaApp, list[Any]]
) -> None:
    game, canasta, stored = finished_deal
    assert game.deal is not None
    messages = events_of(stream_text(client, f"/deals/{game.deal}/stream"))
    assert [m.data for m in messages] == expected_events(
        stored, Viewer.spectator(), canasta, game.deal
    )
    reader = StreamReader("late")
    reader.raw = [json.dumps(m.data) for m in messages]
    never_public = set(full_deck(2)) - public_cards(stored)
    assert_shows_none_of(reader, never_public, "a late spectator")


def test_stream_refusals_use_the_api_error_body(client: TestClient) -> None:
    missing = "00000000-0000-0000-0000-000000000000"
    for url in (f"/deals/{missing}/stream", f"/tables/{missing}/stream"):
        response = client.get(url)
        assert response.status_code == 404
        assert response.json()["error"]["code"]
    game = open_table(client)
    url = f"/deals/{game.deal}/stream"
    response = client.get(url, headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    for bad in ("x", "-1", "1.5"):
        response = client.get(url, headers={"Last-Event-ID": bad})
        assert response.status_code == 422, bad
        assert response.json()["error"]["code"] == "malformed"
    assert client.get(url, params={"after": -1}).status_code == 422
    assert client.get(f"/deals/{game.table}/stream").status_code == 404  # a table is no deal
