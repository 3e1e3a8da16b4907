"""The Table aggregate's privacy and rematch, on plain objects (docs/tables.md): the invite
check, who may watch, the rematch's copy of the table, and the defaults of older tables."""

from __future__ import annotations

import pytest

from domain.accounts import token_hash
from domain.errors import Conflict, Forbidden, SetupError
from domain.table import INVITE_INVALID, INVITE_REQUIRED, Table, rematch_id

CODE = token_hash("the-code")


def private_table(**kwargs: object) -> Table:
    return Table(
        host="ann",
        entry="classic",
        players=4,
        options={},
        target=5000,
        private=True,
        invite=CODE,
        **kwargs,  # type: ignore[arg-type]
    )


def test_an_older_table_reads_as_listed_watchable_and_no_rematch() -> None:
    table = Table(host="ann", entry="classic", players=4, options={}, target=5000)
    assert (table.private, table.invite, table.spectators) == (False, None, True)
    assert (table.rematch_of, table.rematch) == (None, None)
    assert table.join("bob") == 0  # no code needed
    assert table.may_watch(None)


@pytest.mark.parametrize(
    ("invite", "code"), [(None, INVITE_REQUIRED), (token_hash("other"), INVITE_INVALID)]
)
def test_a_seat_at_a_private_table_needs_the_codes_hash(invite: str | None, code: str) -> None:
    table = private_table()
    with pytest.raises(Forbidden) as refused:
        table.join("bob", invite=invite)
    assert refused.value.code == code
    assert table.seats == [None] * 4 and table.version == 1
    assert table.join("bob", 2, invite=CODE) == 2
    assert table.join("ann") == 0  # the host needs no code


def test_only_the_host_rotates_the_code_of_a_private_table_before_the_end() -> None:
    table = private_table()
    with pytest.raises(Forbidden):
        table.rotate_invite("bob", "new")
    table.rotate_invite("ann", "new")
    assert table.invite == "new"
    public = Table(host="ann", entry="classic", players=4, options={}, target=5000)
    with pytest.raises(SetupError):
        public.rotate_invite("ann", "new")


def test_without_spectators_only_the_host_and_the_seated_may_watch() -> None:
    table = private_table(spectators=False)
    table.join("bob", invite=CODE)
    assert [table.may_watch(who) for who in ("ann", "bob", "eve", None)] == [
        True,
        True,
        False,
        False,
    ]
    table.allow_spectators("ann", True)
    assert table.may_watch(None)


def finished(table: Table) -> Table:
    for name in ("ann", "bob", "cyd", "dee"):
        table.join(name, invite=CODE)
    table.start(sides=table.check_can_start("ann"), totals={"A": 0, "B": 0}, rotation=0)
    table.stop("ann")
    return table


def test_a_rematch_copies_the_table_with_its_players_seated_and_is_recorded() -> None:
    with pytest.raises(Conflict):
        private_table().check_rematch("ann")
    table = finished(private_table(spectators=False))
    with pytest.raises(Forbidden):
        table.check_rematch("eve")
    table.check_rematch("dee")
    new = table.open_rematch()
    assert new.id == rematch_id(table.id) and table.rematch == str(new.id)
    assert new.seats == table.seats and new.status == "open"
    assert (new.private, new.invite, new.spectators) == (True, CODE, False)
    assert new.rematch_of == str(table.id)
    assert [type(e).__name__ for e in new.collect_events()] == ["Created"] + ["PlayerSeated"] * 4
