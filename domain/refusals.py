"""What a refusal says this time, by a stable key and its parameters: the one place its
English wording lives (docs/api.md, "Errors"; docs/web.md, "Refusals").

A ``RuleViolation`` carries a key of ``MESSAGES`` and the parameters its template names; its
English ``message`` is the template filled in, so that API clients and logs read it as before.
The web pages fill their own templates of the same key (``app/web/i18n/details/<lang>.json``)
with the same parameters. A parameter is a number, a word or a card the sender may see (his
own command's cards, the pile's top card, ranks of melds on the table, seat numbers), or a
list of them.

A template names a parameter ``{name}``; a list parameter may name the separator its items
are joined with in English, ``{ranks: and }`` (default ``", "``). ``WORDS`` lists the
parameters whose values are English words from a fixed set, which the pages translate one by
one (the action a player tried, the kinds of canasta missing).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

#: A parameter's value: a number, a word or card code (None where the state has none), or a
#: list of them.
Param = int | str | None | Sequence[int | str]

MESSAGES: Final[dict[str, str]] = {
    # --- whose turn, and what now (R-TURN-1, R-CMD-1) ---
    "turn.deal_over": "the deal is over",
    "turn.sits_out": "seat {seat} does not play this deal (R-SEAT-4)",
    "turn.await_partner": "waiting for your partner's answer",
    "turn.await_answer": "waiting for seat {seat}'s answer",
    "turn.await_cut": "waiting for seat {seat} to cut",
    "turn.not_yours": "it is seat {turn}'s turn, not seat {seat}'s",
    "turn.time_to_draw": "cannot {action} now: it is time to draw",
    "turn.time_to_meld": "cannot {action} now: it is time to meld or discard",
    "timeout.nobody": "nobody is to act: no turn can time out",
    "timeout.other_seat": "seat {to_act} is to act, not seat {seat}",
    "timeout.already": "seat {seat}'s turn has already timed out",
    "timeout.stale": "a timeout decided on step {step}; the deal is at step {at}",
    "command.unknown": "unknown command {command}",
    # --- the cards named (R-CARD-1, R-CMD-3) ---
    "card.unknown": "unknown card '{code}': a card is RANK SUIT/DECK, e.g. 'QH/2', '10S/1', 'BJ/1'",
    "card.no_deck": "unknown card '{code}': a card is named with its deck number, e.g. '{example}'",
    "card.no_such": "there is no {code}: this game has {decks} decks",
    "hand.twice": "{card} is named twice: you hold it once",
    "hand.not_held": "you do not hold {card}",
    # --- the cut (R-DEAL-4) ---
    "cut.not_now": "the deck is not waiting to be cut",
    "cut.other_seat": "seat {cutter} cuts, not seat {seat} (R-DEAL-4)",
    "cut.range": "the cut must lift 1 to {most} cards",
    # --- drawing, the ponytails (R-END-1, R-PT-PONY-1) ---
    "draw.stock_empty": "the stock is empty: take the pile or decline it",
    "ponytail.none": "{entry} has no ponytails",
    "ponytail.already": "you have already picked up your ponytail",
    "ponytail.too_early": "your side must complete its first canasta before the ponytails",
    # --- the initial meld (R-INIT-1, R-MA-INIT-1/2) ---
    "init.short": "the initial meld counts {points}; this side needs at least {minimum}",
    "init.short_from_hand": "the initial meld counts {points} from the hand; this side needs "
    "{minimum}",
    "init.clean_or_wild": "the initial meld needs a clean meld (three naturals) or wild meld",
    # --- the pile (R-PILE-*, R-FROZEN-1, R-MA-PILE-1, R-END-1) ---
    "pile.empty": "the discard pile is empty",
    "pile.blocked": "the pile cannot be taken with {card} on top",
    "pile.top_first": "the first meld must hold the pile's top card (TOP)",
    "pile.top_once": "only the first meld may hold the top card",
    "pile.top_meld_rank": "the top card's meld holds only {rank}s and wild cards",
    "pile.frozen_naturals": "the pile is frozen: meld the top with two naturals",
    "pile.top_alone": "the top card alone may join only your side's meld of six cards or fewer",
    "pile.frozen_pair": "the pile is frozen: meld the top card with two natural {rank}s from "
    "your hand",
    "pile.unopened_pair": "your side has not melded yet: meld the top card with two natural "
    "{rank}s from your hand",
    "pile.pair_or_meld": "meld the top with two natural {rank}s, or one and a wild, or add it "
    "to your meld",
    "pile.natural_pair": "taking the pile needs a natural pair of {rank}s from your hand",
    "pile.pair_joins": "the pair joins your meld of {rank}s only when it has 3 or 4 cards",
    "pile.decline_stock": "the pile may be declined only when the stock is empty",
    "pile.must_take": "the top card matches your side's meld: you must take the pile",
    # --- melds (R-MELD-*, R-OUT-4, the entries' own) ---
    "meld.nothing": "nothing to meld",
    "meld.empty": "an empty meld",
    "meld.red_three": "a red three is never melded",
    "meld.black_threes_3_4": "black threes meld only as three or four alone",
    "meld.black_threes_3_up": "black threes meld only as three or more alone",
    "meld.black_threes_out": "black threes may be melded only when going out",
    "meld.black_threes_once": "black threes make one meld only",
    "meld.mixed_ranks": "a meld is of one rank, not {ranks: and }",
    "meld.wrong_rank": "cards of {rank} cannot join a meld of {meld_rank}",
    "meld.complete": "your meld of {rank}s is complete",
    "meld.wilds_no_meld": "wild cards alone can only join an existing meld; no meld of {rank}",
    "meld.wilds_alone": "wild cards never form a meld on their own",
    "meld.closed_rank": "{rank}s are closed: a natural canasta of {rank}s is complete",
    "meld.wild_meld_short": "a wild-card meld needs at least {cards} cards",
    "meld.wild_meld_full": "a wild-card meld is complete at {cards}",
    "meld.short": "a new meld of {rank} needs at least {cards} cards",
    "meld.too_big": "a meld holds at most {most} cards ({rank}: {cards})",
    "meld.few_naturals": "a meld of {rank} needs at least {naturals} natural cards",
    "meld.many_wilds": "a meld holds at most {most} wild cards ({rank}: {wilds})",
    "meld.wilds_outnumber": "a meld needs more natural cards than wild cards ({rank}: "
    "{naturals} vs {wilds})",
    "meld.wild_meld_first": "no wild elsewhere until your wild-card meld is complete",
    # the wild-card limits of modern_american (``meld_limits.WildLimit``): their text without
    # " ({rank})" is the limit's message in the move menu
    "limit.sevens": "sevens never take wild cards ({rank})",
    "limit.aces": "aces take wild cards only in the initial meld ({rank})",
    "limit.five_naturals": "after the initial meld a wild joins only a meld of five naturals "
    "({rank})",
    "limit.wild_meld_first": "no wild elsewhere until your wild-card meld is complete ({rank})",
    # --- discarding (R-DISC-1, R-MA-DISC-1) ---
    "discard.red_three": "a red three can never be discarded",
    "discard.three": "threes are never discarded",
    "discard.wild": "a wild card is discarded only when going out or when only wilds remain",
    "discard.ace_seven": "on an empty pile an ace or seven only when no other natural is held",
    "discard.closed_rank": "a card of a closed rank only when nothing else can go",
    # --- asking the partner, going out (R-OUT-*, R-MA-OUT-1, R-PT-OUT-1) ---
    "ask.once_per_turn": "you may ask only once per turn",
    "ask.before_meld": "ask before your first meld of the turn",
    "ask.once_per_deal": "you may ask your partner once per deal",
    "ask.after_draw": "ask right after drawing, before melding",
    "ask.no_partner": "you have no partner playing this deal",
    "ask.which_partner": "name the partner to ask: one of [{partners}]",
    "ask.not_partner": "seat {seat} is not your partner in this deal",
    "answer.nobody_asked": "nobody asked you a question",
    "answer.not_asked": "only seat {seat} was asked",
    "answer.yes_or_no": "the answer is yes (true) or no (false)",
    "out.partner_said_no": "your partner answered no: you may not go out this turn",
    "out.needs_canasta": "going out needs 1 canasta; keep at least one card",
    "out.needs_canastas": "going out needs {needed} canastas; keep at least one card",
    "out.needs_two_canastas": "going out needs two canastas; keep a card",
    "out.keep_discard": "keep a card: you go out with a discard",
    "out.ponytail_down": "you cannot go out while your ponytail is still face down",
    "out.canasta_kinds": "going out needs a {kinds:, a } canasta too",
    # --- accounts, tables and seats (``SetupError``: R-CMD-2, R-SEAT-*, R-DEAL-*, R-GAME-*) ---
    "name.invalid": "a name is 1 to 32 letters, digits, '.', '_' or '-', starting with a letter "
    "or a digit",
    "table.unknown_entry": "unknown entry '{name}' (known: {known})",
    "table.players": "{entry} is played by {counts} players, not {players}",
    "table.option_bool": "option '{name}' is true or false",
    "table.no_option": "{entry} has no option '{name}'",
    "table.one_target": "{entry} plays to {target}; no other target",
    "table.targets": "{entry} plays to {target} or {others}, not {chosen}",
    "table.turn_seconds_whole": "turn_seconds is a whole number of seconds, or null",
    "table.turn_seconds_range": "turn_seconds is from {least} to {most}, not {chosen}",
    "table.missed_turns_range": "the limit is 0 to {most} turns",
    "table.missed_turns_before_start": "the missed turns limit is set before the start only",
    "table.clock_before_start": "the turn clock is set before the start only",
    "table.spectators_before_start": "spectators are allowed or not before the start only",
    "table.invite_public": "only a private table has an invite code",
    "table.invite_over": "the game is {status}: no more invitations",
    "table.bot_level": "no bot level '{level}'; the levels are {levels}",
    "table.test_only": "{what} can be fixed only on a server set up for tests",
    "table.stacked_deck": "a stacked deck must hold every card once",
    "seat.started": "the game has started; no seat can be taken",
    "seat.have_one": "you already have a seat at this table",
    "seat.full": "the table is full",
    "seat.no_such": "there is no seat {seat}",
    "seat.taken": "seat {seat} is taken",
    "seat.fixed": "the game is {status}: seats no longer change",
    "seat.no_person": "seat {seat} has no person to stand in for",
    "seat.not_away": "you are not away from a seat of a game in play",
    "seat.not_yours": "your seat is {own}, not {seat}",
    "seat.none_to_give": "the game is {status}: no seat to give",
    "seat.cannot_give": "{player} cannot be given a seat at this table",
    "seat.all_taken_first": "every seat must be taken before the start",
    "teams.host_chooses": "{players} players need teams chosen by the host",
    "teams.choose_for": "the host must choose the teams for {players} players",
    "teams.choose_first": "the host must choose the teams first",
    "teams.bad_seats": "a team lists unknown or repeated seats: [{seats}]",
    "teams.seat_twice": "a seat is in two teams",
    "teams.shape": "teams of {shape:+} are not allowed here ({allowed: or })",
    "teams.fixed_started": "teams are fixed once the game has started",
    "teams.fixed_for": "teams are fixed for {players} players",
    "teams.unknown_side": "no such side: {sides}",
    "teams.sit_out": "no deal of the sit-out rotation sits out seats [{seats}]",
    "game.started": "the game has already started",
    "game.not_playing": "the game is {status}",
    "game.deal_not_over": "the current deal is not over",
    "game.stop_not_playing": "only a game in play can be stopped (it is {status})",
    "game.dealer_sits_out": "seat {seat} does not play the first deal",
    # --- who may do it (``Forbidden``, HTTP 403: R-CMD-2, R-SEAT-3, R-VIEW-*, the codes of
    # docs/rules/common.md) ---
    "session.csrf": "a request signed in by the session cookie that changes something needs the "
    "header {header}: 1 (or use the bearer token)",
    "seat.none_here": "you have no seat at this table",
    "seat.away_played": "seat {seat} is played by {player} while you are away; take it back "
    "with POST /tables/{{id}}/seats",
    "host.only": "only the host may do this",
    "host.next_deal": "only the host may open the next deal (or, while he is away, a player who "
    "plays his own seat)",
    "host.rematch_ask": "only the host or a player of this table may ask",
    "invite.required": "this table is private: its invite code is needed",
    "invite.invalid": "that is not this table's invite code",
    "table.no_spectators": "this table allows no spectators: only its host, its players and "
    "auditors see it",
    "audit.not_auditor": "auditing needs the auditor role, granted by the operator",
    "moves.not_seated": "the move menu is for the players seated at this table",
    "draws.private": "a draw log is private to its player: you have no seat here",
    "clock.timeout_not_allowed": "only the turn clock (the bots process) times a turn out",
    "clock.not_timed_out": "seat {seat}'s turn has not timed out: not yours to play",
    # --- what collides with what is recorded (``Conflict``, HTTP 409: R-CMD-1 and the codes
    # of docs/rules/common.md) ---
    "stale.game": "expect.game is the deal's table, {table}, not {believed}: send the table's "
    "id (the deal view's table)",
    "stale.deal": "this is deal {deal} of its table, not deal {believed}: send the command to "
    "the deal it is meant for (the table's current_deal)",
    "stale.step": "stale command: step is {value}, not {believed}; reload and retry",
    "stale.turn": "stale command: turn is {value}, not {believed}; reload and retry",
    "stale.phase": "stale command: phase is {value}, not {believed}; reload and retry",
    "deal.at_step": "the deal is at step {step}, not {expected}",
    "seq.used": "sequence number {seq} is used: numbers must grow, your last was {last}",
    "seq.too_far": "sequence number {seq} is too far ahead: your last was {last}, the next may "
    "be at most {most}",
    "seq.other_command": "sequence number {seq} was used for a different command: your last "
    "was {last}; send a new command under a greater number",
    "race.game": "another command changed this game first; reload and retry",
    "race.table": "another request changed this table first; retry",
    "name.taken": "the name {name!r} is taken",
    "clock.timed_out": "seat {seat}'s turn timed out: the basic bot plays the rest of it",
    "clock.not_run_out": "seat {seat}'s turn clock has not run out",
    "clock.outage_restart": "seat {seat}'s turn ran through an outage of the server: its clock "
    "starts again",
    "clock.out_of_service": "the server is out of service: no turn times out",
    "game.no_rematch_yet": "the game is {status}: no rematch yet",
    "seat.away_already": "you are away already: the bot plays your seat",
    "seat.bot_plays": "the bot plays seat {seat} already",
    "seat.player_plays": "seat {seat} is played by its player",
    "seat.own_not_given": "your own seat is not given away: take it back (POST "
    "/tables/{{id}}/seats)",
    # --- what does not exist (``NotFound``, HTTP 404: not_found) ---
    "table.not_found": "no table {id}",
    "deal.not_found": "no deal {id}",
    "deal.not_found_at": "no deal {id} at step {step}",
    "account.not_found": "no account {name!r}",
    # --- what an audit finds (``Said``: domain/audit; the audit page, docs/web.md) ---
    "audit.rules_refuse": "the rules refuse {command}: {code} {why}",
    "audit.rules_cannot_decide": "the rules cannot decide {command}: {error}",
    "audit.history_ends": "{command} records {decided} events, but the history ends after "
    "{stored} of them",
    "audit.other_event": "{command} records {kind} at step {step}, but the store holds "
    "{stored} with other data",
    "audit.records_nothing": "{command} records nothing",
    "audit.no_started": "the history does not begin with the deal's Started event",
    "audit.started_malformed": "the Started event is malformed: {error}",
    "audit.dealer_off_table": "the dealer {dealer} is not on the deal's virtual table",
    "audit.wrong_cutter": "seat {seat} cuts, but the entry's cutter is seat {cutter} (R-DEAL-4)",
    "audit.not_the_shuffle": "step 2 is {kind}, not the shuffle",
    "audit.shuffle_no_fold": "the shuffle does not fold: {error}",
    "audit.event_malformed": "the stored {kind} event is malformed: {error}",
    "audit.begins_no_command": "a {kind} event begins no command: the rules record it only as "
    "part of one",
    "audit.abandon_finished": "a finished deal cannot be abandoned",
    "audit.abandon_differs": "the abandonment differs from the one the rules record (R-GAME-2)",
    "audit.change_here": "a change of player that the deal cannot record here",
    "audit.restart_here": "a turn clock restarted that the deal cannot record here",
    "audit.unreadable": "the stored event at step {step} cannot be read",
    "audit.no_shuffle": "the history has no shuffle event",
    "audit.seed_bits": "the recorded seed has {bits} bits, not 256",
    "audit.seed_malformed": "the recorded seed is malformed: {error}",
    "audit.commitment_seed": "the seed recorded at step 2 does not match the commitment "
    "published at the deal's start ({published} expected, the seed gives {proof})",
    "audit.commitment_deck": "the prepared deck recorded at step 2 does not match the "
    "commitment published at the deal's start ({published} expected, the prepared deck gives "
    "{proof})",
    "audit.unsigned": "the table's record of this deal carries no signature",
    "audit.record_unbuildable": "the signed record cannot be rebuilt: {error}",
    "audit.unknown_key": "signed with key {key}, which this server does not publish",
    "audit.signature_mismatch": "the signature does not match the table's record of this deal "
    "(its scores, totals or last chain link were changed after it was signed)",
    "audit.history_rewritten": "the deal's stored history no longer ends at the chain link the "
    "server signed (it was rewritten after it was scored)",
    "audit.started_no_fold": "step 1 (Started) does not fold: {error}",
    "audit.step_no_fold": "step {step} ({kind}) does not fold: {error}",
    "audit.nothing_readable": "no stored event of this deal can be read",
    "history.first_unreadable": "the deal's first event cannot be read",
    "history.no_fold": "the stored history does not fold to step {step}: {why}",
    # --- the server's limits and retries (app.rate_limits, app.limits, app.idempotency) ---
    "limits.rate": (
        "too many {requests} from this {per} (at most {amount} in {seconds} s): retry in {retry} s"
    ),
    "limits.streams": (
        "{held} live streams already open from this {per} (at most {cap}): close one first"
    ),
    "limits.body_too_large": "request body larger than {max_bytes} bytes",
    "idempotency.reused": (
        "this Idempotency-Key was used with another request body on this route: send a new "
        "key for a new request"
    ),
    "idempotency.in_progress": (
        "a request with this Idempotency-Key is still being processed: retry shortly"
    ),
}

#: The parameters whose values are English words of a fixed set, by parameter name: the
#: pages translate each value (``"@action": {"take the pile": ...}`` in their templates).
WORDS: Final[dict[str, tuple[str, ...]]] = {
    "action": (  # domain.commands.ACTIONS
        "cut",
        "draw",
        "take the pile",
        "meld",
        "discard",
        "ask your partner",
        "answer",
        "decline the pile",
        "pick up your ponytail",
        "time a turn out",
    ),
    "kinds": ("natural", "mixed", "natural 7s", "wild"),  # ponytail's kinds of canasta
    "requests": ("registrations", "commands", "reads"),  # app.rate_limits' kinds
    "per": ("player", "client address"),  # whom a limit counts
}


class _English(string.Formatter):
    """Fills a template: a list joined with the separator its field names (``{ranks: and }``),
    or ", "."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, list | tuple):
            return (format_spec or ", ").join(map(str, value))
        return format(value, format_spec)


_ENGLISH = _English()


def render(key: str, params: Mapping[str, Param] | None = None) -> str:
    """The English message of ``key`` with ``params`` filled in (KeyError: no such key, or a
    parameter its template names is missing)."""
    return _ENGLISH.vformat(MESSAGES[key], (), dict(params or {}))


def fields(template: str) -> set[str]:
    """The parameter names a template uses."""
    return {name for _text, name, _spec, _conv in string.Formatter().parse(template) if name}


@dataclass(frozen=True)
class Said:
    """What a report says, worded as a refusal is (a key of ``MESSAGES`` and its params),
    for what is no refusal: the audit's findings. ``refusal``: the rules' own refusal it
    quotes (``audit.rules_refuse``), said apart so that a page says it in its language too."""

    key: str
    params: Mapping[str, Param] = field(default_factory=dict)
    refusal: Said | None = None

    @property
    def message(self) -> str:
        """The English sentence (the template filled in)."""
        return render(self.key, self.params)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "params": dict(self.params)}
        if self.refusal is not None:
            out["refusal"] = self.refusal.to_dict()
        return out


def said(key: str, /, **params: Param) -> Said:
    """``Said(key, params)``, checked: KeyError if the key or a parameter is missing."""
    render(key, params)
    return Said(key, params)
