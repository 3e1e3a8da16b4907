"""A dry run records nothing (docs/dry_run.md, R-CMD-1), on a real server over SQLite and
over PostgreSQL with two workers: no event, no sequence number used, no command-log entry,
nothing at all in the store's log, whether the command would be accepted or refused."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import httpx
from eventsourcing.application import AggregateNotFoundError

from app.application import CanastaApp
from domain import commands as c
from domain.command_log import CommandLog, command_log_id
from tests.e2e.conftest import Backend
from tests.support.http import Game, open_table


def recorded(game: Game, shadow: CanastaApp) -> dict[str, Any]:
    """Everything a dry run could have changed: the store's last notification, the deal's
    events, and each player's command log (its version, last seq and kept answers) and
    ``your_last_seq``."""
    logs: dict[str, Any] = {}
    for name in game.names:
        try:
            log: CommandLog = shadow.repository.get(command_log_id(game.table, name))
            logs[name] = (log.version, log.last_seq, dict(log.answers))
        except AggregateNotFoundError:
            logs[name] = None
        table = game.http.get(f"/tables/{game.table}", headers=game.headers[name]).json()
        logs[name + ":your_last_seq"] = table["your_last_seq"]
    return {
        "notification": shadow.recorder.max_notification_id(),
        "events": [e.originator_version for e in shadow.events.get(UUID(game.deal_id))],
        "logs": logs,
    }


def check(game: Game, name: str, body: dict[str, Any]) -> dict[str, Any]:
    url = f"/deals/{game.deal_id}/commands/check"
    response = game.http.post(url, json=body, headers=game.headers[name])
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_dry_run_changes_nothing(backend: Backend) -> None:
    shadow = backend.shadow()
    with httpx.Client(base_url=backend.server.url, timeout=30) as http:
        game = open_table(http)
        view = http.get(f"/deals/{game.deal_id}", headers=game.host).json()
        cutter = game.names[view["cutter"]]
        other = next(name for name in game.names if name != cutter)
        before = recorded(game, shadow)
        cut = game.request(cutter, c.Cut(40), None)
        stale = {**cut, "expect": {**cut["expect"], "step": cut["expect"]["step"] + 1}}
        accepted = check(game, cutter, cut)
        assert accepted["accepted"] is True
        assert check(game, cutter, {**cut, "seq": 1})["accepted"] is True
        assert check(game, other, game.request(other, c.Cut(40), 1))["accepted"] is False
        assert check(game, cutter, stale)["error"]["code"] == "R-CMD-1"
        assert check(game, cutter, {**cut, "seq": 5000})["error"]["code"] == "seq_too_far"
        assert recorded(game, shadow) == before

        # the real command then takes the seq the dry runs named, and records what they told
        sent = game.send(cutter, c.Cut(40))  # seq 1
        assert sent.status_code == 200, sent.text
        assert sent.json()["events"][0] == accepted["events"][0]  # DeckCut
        assert recorded(game, shadow) != before

        view = http.get(f"/deals/{game.deal_id}", headers=game.host).json()
        player = game.names[view["turn"]]
        seq = game.seqs.get(player, 0) + 1
        before = recorded(game, shadow)
        draw = check(game, player, game.request(player, c.Draw(), seq))
        assert draw["accepted"] is True and draw["undisclosed"]["kind"] == "CardsDrawn"
        assert "cards" not in draw["undisclosed"]
        discard = check(game, player, game.request(player, c.Discard("AS/1"), seq))
        assert discard["accepted"] is False and discard["error"]["code"] == "R-TURN-1"
        assert recorded(game, shadow) == before
        drawn = game.send(player, c.Draw())  # under the seq the dry runs named
        assert drawn.status_code == 200, drawn.text
        assert game.seqs[player] == seq
