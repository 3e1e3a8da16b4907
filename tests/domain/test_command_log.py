"""The command log keeps each sender's first answers for retries (R-CMD-1)."""

from __future__ import annotations

import gc
from copy import deepcopy

from domain.command_log import KEEP_ANSWERS, CommandLog

BODY = {"step": 7, "events": [{"type": "Drew", "seat": 1, "cards": ["7H", "JK"]}, {"n": None}]}


def test_a_retry_gets_the_first_answer_back_exactly_r_cmd_1() -> None:
    log = CommandLog(table_id="t", player="ann")
    log.record(seq=3, digest="d3", status=200, body=BODY)
    log.record(seq=4, digest="d4", status=409, body={"error": {"code": "R-CMD-1"}})
    assert log.answer_for(3) == {"digest": "d3", "status": 200, "body": BODY}
    assert log.answer_for(4) == {
        "digest": "d4",
        "status": 409,
        "body": {"error": {"code": "R-CMD-1"}},
    }
    assert log.answer_for(5) is None
    assert log.last_seq == 4
    # what a caller does with an answer never changes the kept one
    log.answer_for(3)["body"]["step"] = 99  # type: ignore[index]
    assert deepcopy(log).answer_for(3) == {"digest": "d3", "status": 200, "body": BODY}


def test_only_the_last_answers_are_kept_and_sequence_numbers_still_grow_r_cmd_1() -> None:
    log = CommandLog(table_id="t", player="ann")
    for seq in range(1, KEEP_ANSWERS + 11):
        log.record(seq=seq, digest=f"d{seq}", status=200, body={"step": seq})
    assert log.answer_for(10) is None and log.answer_for(11) is not None
    assert len(log.answers) == KEEP_ANSWERS and log.last_seq == KEEP_ANSWERS + 10


def test_kept_answers_are_not_walked_by_the_cyclic_garbage_collector() -> None:
    """A server keeps the last answers of every sender; held as nested dicts and lists
    they were most of what each young collection walked, pausing every command (``make
    bench``). Kept as text, an answer is a dict of atoms, which CPython does not track."""
    log = CommandLog(table_id="t", player="ann")
    log.record(seq=1, digest="d1", status=200, body=BODY)
    assert not gc.is_tracked(log.answers["1"])
