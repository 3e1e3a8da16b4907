"""The command encoder of app/schemas.py is the inverse of the API's command parsing: every
domain command a client can send survives ``command_body`` then ``to_command`` unchanged."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.command_io import to_command
from app.schemas import CommandIn, command_body
from domain import commands as c

EXPECT = {
    "game": "00000000-0000-0000-0000-000000000001",
    "deal": 1,
    "step": 1,
    "turn": 0,
    "phase": "play",
}

cards = st.just(c.TOP) | st.text(alphabet="0123456789ADHJKQSCW/", min_size=2, max_size=6)
ranks = st.none() | st.sampled_from(["A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "W"])
specs = st.builds(c.MeldSpec, cards=st.lists(cards, min_size=1, max_size=30).map(tuple), rank=ranks)
seats = st.integers(min_value=0, max_value=5)

commands: st.SearchStrategy[c.Command] = st.one_of(
    st.builds(c.Cut, n=st.integers(min_value=1, max_value=400)),
    st.just(c.Draw()),
    st.builds(c.TakePile, melds=st.lists(specs, min_size=1, max_size=20).map(tuple)),
    st.builds(c.Meld, melds=st.lists(specs, max_size=20).map(tuple), discard=st.none() | cards),
    st.builds(c.Discard, card=cards),
    st.builds(c.AskPartner, partner=st.none() | seats),
    st.builds(c.Answer, yes=st.booleans()),
    st.just(c.DeclinePile()),
    st.just(c.PickUpPonytail()),
)


def round_trip(command: c.Command) -> c.Command:
    body = CommandIn.model_validate({"seq": 1, "expect": EXPECT, "command": command_body(command)})
    return to_command(body.command)


def test_every_command_type_is_encoded() -> None:
    assert {type(cmd) for cmd in EXAMPLES} == set(c.COMMAND_NAMES)
    for command in EXAMPLES:
        assert round_trip(command) == command


EXAMPLES: list[c.Command] = [
    c.Cut(52),
    c.Draw(),
    c.TakePile((c.MeldSpec(("TOP", "QH/1", "QS/2")),)),
    c.Meld((c.MeldSpec(("2C/1",), rank="K"),), discard="4D/1"),
    c.Meld(()),
    c.Discard("7S/2"),
    c.AskPartner(),
    c.AskPartner(2),
    c.Answer(False),
    c.DeclinePile(),
    c.PickUpPonytail(),
    c.TimeOut(5),
]


@given(commands)
def test_command_body_is_the_inverse_of_the_api_parsing(command: c.Command) -> None:
    assert round_trip(command) == command
