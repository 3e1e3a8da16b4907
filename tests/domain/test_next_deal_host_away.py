"""The next deal while the host is away (docs/tables.md, "The next deal while the host is
away"): the host may always open it; while the bot plays his seat, any person who plays his
own seat may too; when nobody does, the bot playing the host's seat (the bots process). The
host's own seat is never given away. Every refusal keeps its code and changes nothing."""

from __future__ import annotations

import pytest

from domain.bot_names import bot_name, stand_in_name
from domain.errors import Conflict, Forbidden, SetupError
from domain.table import HOST_SEAT, Table

AT = "2026-12-02T04:00:00+00:00"


def table_between_deals(players: tuple[str, ...] = ("ann", "bob", "cy", "di")) -> Table:
    """A classic table of four whose first deal is over (recorded, the game goes on)."""
    table = Table(host="ann", entry="classic", players=4, options={}, target=5000)
    for player in players:
        if player.startswith("bot:"):
            table.seat_bot("ann", "basic")
        else:
            table.join(player)
    sides = table.check_can_start("ann")
    table.start(sides=sides, totals=Table.opening_totals(sides), rotation=0)
    table.open_deal(deal_id="d1", number=1, dealer=0, order=table.virtual_table(1), by="ann")
    table.record_deal("d1", {"A": 100, "B": 50})
    return table


def refused_next_deal(table: Table, player: str) -> str:
    version = table.version
    with pytest.raises(Forbidden) as refused:
        table.next_deal(player)
    assert table.version == version
    return refused.value.code


def test_only_the_host_opens_it_while_he_is_present_r_seat_3() -> None:
    table = table_between_deals()
    assert table.may_open_next_deal("ann")
    assert refused_next_deal(table, "bob") == "R-SEAT-3"
    table.leave("bob", AT)  # another player away changes nothing
    assert refused_next_deal(table, "cy") == "R-SEAT-3"
    assert table.next_deal_by_bot() is None
    assert table.next_deal("ann")[0] == 2


def test_while_the_host_is_away_a_present_player_opens_it() -> None:
    table = table_between_deals()
    table.leave("ann", AT)
    table.leave("bob", AT)
    assert table.present_players() == ["cy", "di"]
    number, order, dealer = table.next_deal("cy")
    assert number == 2 and sorted(order) == [0, 1, 2, 3] and dealer in order
    assert table.may_open_next_deal("di") and table.may_open_next_deal("ann")
    assert not table.may_open_next_deal("bob")  # away himself
    assert not table.may_open_next_deal(stand_in_name(0, "ann"))  # people are waited for
    assert table.next_deal_by_bot() is None
    assert refused_next_deal(table, "eve") == "R-SEAT-3"
    table.open_deal(deal_id="d2", number=number, dealer=dealer, order=order, by="cy")
    opened = [e for e in table.collect_events() if type(e).__name__ == "DealOpened"]
    assert [getattr(e, "by", None) for e in opened] == ["ann", "cy"]
    with pytest.raises(SetupError) as not_over:
        table.next_deal("cy")
    assert not_over.value.code == "R-GAME-1"


def test_when_nobody_is_present_the_bot_for_the_host_opens_it() -> None:
    table = table_between_deals(("ann", "bot:basic:1", "cy", "bot:basic:3"))
    assert table.next_deal_by_bot() is None  # the host plays his seat
    table.leave("cy", AT)
    assert table.next_deal_by_bot() is None
    table.leave("ann", AT)
    assert table.present_players() == []
    by = table.next_deal_by_bot()
    assert by == stand_in_name(0, "ann") == table.plays(0)
    assert table.next_deal(by)[0] == 2
    assert refused_next_deal(table, bot_name("basic", 1)) == "R-SEAT-3"  # a seated bot: no
    assert refused_next_deal(table, stand_in_name(2, "cy")) == "R-SEAT-3"
    table.take_back("cy", AT)
    assert table.next_deal_by_bot() is None and table.may_open_next_deal("cy")


def test_a_host_without_a_seat_is_never_away() -> None:
    table = Table(host="hal", entry="classic", players=2, options={}, target=5000)
    table.seat_bot("hal", "basic")
    table.seat_bot("hal", "basic")
    sides = table.check_can_start("hal")
    table.start(sides=sides, totals=Table.opening_totals(sides), rotation=0)
    table.open_deal(deal_id="d1", number=1, dealer=0, order=table.virtual_table(1))
    table.record_deal("d1", {"A": 10, "B": 0})
    assert table.next_deal_by_bot() is None
    assert refused_next_deal(table, bot_name("basic", 0)) == "R-SEAT-3"
    assert table.next_deal("hal")[0] == 2


def test_the_hosts_own_seat_is_not_given_away() -> None:
    table = table_between_deals()
    table.leave("ann", AT)
    version = table.version
    with pytest.raises(Conflict) as refused:
        table.give_seat("ann", 0, "eve", AT)
    assert refused.value.code == HOST_SEAT and table.version == version
    assert table.seats[0] == "ann" and table.away(0)
    table.leave("bob", AT)
    assert table.give_seat("ann", 1, "eve", AT) == "bob"  # while away he gives other seats
