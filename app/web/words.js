// A deal's or a table's events in words (docs/web.md, "Replay and audit"): one sentence per
// event, in the chosen language, from the event as the viewer got it. The same function reads
// the three shapes an event comes in (app/schemas_events.py, app/schemas_records.py): a
// player's or spectator's view (GET /deals/{id}/events, the streams, the replay), the
// auditor's full record (GET /audit/deals/{id}), and a table's events. It says only what the
// event holds: a spectator's "drew a card" has no card, the drawer's own view names it.

import { cardText, rankText, spokenFaces, t } from "./common.js";

// The name of a room seat: the player's name when `names` (an array or an object by seat)
// has it, else "seat N" (seats are numbered from 1 on screen, as in the lobby).
export function seatName(seat, names = null) {
  const name = names?.[seat];
  return name ? String(name) : t("event_seat", { number: Number(seat) + 1 });
}

// "Q♥ Q♣ Q♠"
export function cardsText(cards) {
  return (cards ?? []).map(cardText).join(" ");
}

// A catalogue text that may not exist (a reason or an entry the catalogue does not know yet):
// the key's text, else the raw value.
function known(key, raw) {
  const text = t(key);
  return text === key ? String(raw) : text;
}

// Who plays a seat: a person's name, or "the basic bot (for bob)" for the bot standing in for
// an absent player (its name is bot:basic:<seat>:for:<player>, docs/tables.md).
export function playerText(name) {
  const standIn = /^bot:(\w+):\d+:for:(.+)$/.exec(String(name ?? ""));
  if (!standIn) return String(name ?? "");
  const text = t("event_stand_in", { level: standIn[1], player: standIn[2] });
  if (!t("event_stand_in").startsWith("{")) phrases.add(text); // its first word is the language's
  return text;
}

// A seat's name as a screen reader is given it (sayEvent, the table's status and move panel):
// a seated bot, printed "bot:basic:1 (bot, basic)" (seatNames), is "bot 1", the number of its
// name ("бот 1", "机器人1", "บอท 1"); heard on every line of a round of four, the full name made
// each bot's turn three times as long. Anyone else's name stays as it is (a person's name
// cannot hold ":", and the stand-in's "the basic bot (for bob)" is words already).
const SEATED_BOT = /^bot:\w+:(\d+)(?![:\w])/;

export function spokenName(name) {
  const bot = SEATED_BOT.exec(String(name ?? ""));
  if (!bot) return name;
  const text = t("bot_spoken", { number: Number(bot[1]) });
  phrases.add(text); // words of the language: a sentence that begins with it begins with a capital
  return text;
}

// `names` (an array or an object by seat, as seatName takes them) in their spoken form.
export function spokenNames(names) {
  if (!names) return names;
  if (Array.isArray(names)) return names.map((name) => (name ? spokenName(name) : name));
  return Object.fromEntries(Object.entries(names).map(([seat, name]) => [seat, name ? spokenName(name) : name]));
}

// The stand-ins' phrases said so far: words of the language, not a person's name, so a
// sentence that begins with one begins with a capital ("The basic bot (for fay) drew a
// card", "Бот «basic» (вместо fay) ..."), as "Seat 3 ..." does (describeEvent).
const phrases = new Set();

// The sentence of a deal's change of who plays a seat, by its reason.
const SEAT_CHANGES = {
  left: "event_SeatPlayerChanged_left",
  missed_turns: "event_SeatPlayerChanged_missed_turns",
  taken_back: "event_SeatPlayerChanged_taken_back",
  given: "event_SeatPlayerChanged_given",
};

function sideText(side) {
  return t("side", { side });
}

// Per seat counts, from a view's {seat: count} or a record's [[seat, card], ...].
function countsOf(event) {
  if (event.counts) return event.counts;
  const counts = {};
  for (const [seat] of event.cards ?? []) counts[seat] = (counts[seat] ?? 0) + 1;
  return counts;
}

// "11 cards to each player" or "seat 1: 11, seat 2: 13" when they differ.
function countsText(counts, names) {
  const values = Object.values(counts);
  if (values.length && values.every((n) => n === values[0])) {
    return t("event_each", { count: values[0] });
  }
  return Object.entries(counts)
    .map(([seat, n]) => t("event_seat_count", { who: seatName(seat, names), count: n }))
    .join(", ");
}

// A view's own cards are codes; a record's dealt cards are [seat, code] pairs (not listed).
function ownCards(event) {
  const cards = event.cards ?? [];
  return cards.length && typeof cards[0] === "string" ? cards : [];
}

// Whether the sentence being made is the one a screen reader is given (sayEvent): a meld's
// rank is then its name, "the queen meld", "к комбинации «дама»", where the page prints "the
// Q meld" (read "the queue meld"; "the A meld" as "the uh meld").
let speaking = false;

function meldRank(rank) {
  if (rank === "W") return t("event_rank_W");
  return speaking ? t(`rank_${rank}`) : rankText(rank);
}

// "Side A 1200, Side B -35" from a {side: breakdown} or a {side: total}.
export function scoresText(scores) {
  return Object.entries(scores ?? {})
    .map(([side, score]) => t("event_side_score", { side: sideText(side), score: score?.total ?? score }))
    .join(", ");
}

// The hand cards that went with the pile's top: the meld laid or extended right after the
// take (R-PILE-*: the top is melded at once), less the top itself.
function pileMates(taken, next) {
  if (!next || !["MeldLaid", "MeldExtended"].includes(next.kind) || next.seat !== taken.seat) return [];
  const cards = [...(next.cards ?? [])];
  const top = cards.indexOf(taken.top);
  if (top < 0) return [];
  cards.splice(top, 1);
  return cards;
}

// A three laid is a red three, but for a black one (modern_american lays every three,
// R-MA-THREE-1): its sentence, and that of the replacement drawn right after it, say so.
function blackThree(event) {
  return event?.kind === "RedThreeLaid" && /^3[SC]\//.test(String(event.card ?? ""));
}

function drawn(event, who, previous) {
  const cards = event.cards ?? [];
  const count = event.count ?? cards.length;
  const replaced = blackThree(previous) && previous.seat === event.seat
    ? "event_CardsDrawn_replacement_black" : "event_CardsDrawn_replacement";
  const prefix = event.replacement ? replaced : "event_CardsDrawn";
  if (cards.length) return t(`${prefix}_cards`, { who, cards: cardsText(cards) });
  return count === 1 ? t(`${prefix}_one`, { who }) : t(`${prefix}_many`, { who, count });
}

// One describer per kind: (event, who = the acting seat's name, names, next event, previous
// event) -> sentence.
export const DESCRIBE = {
  // --- a deal's events --------------------------------------------------------------------
  Started: (e, _who, names) =>
    t("event_Started", {
      number: e.number,
      entry: known(`entry_${e.variant}`, e.variant),
      dealer: seatName(e.dealer, names),
      cutter: seatName(e.cutter, names),
    }),
  DeckShuffled: (e) => (e.seed ? t("event_DeckShuffled_seed", { seed: String(e.seed) }) : t("event_DeckShuffled")),
  DeckStacked: () => t("event_DeckStacked"),
  DeckCut: (e, who) => t("event_DeckCut", { who, n: e.n }),
  CardsDealt: (e, _who, names) => {
    const dealt = t("event_CardsDealt", { counts: countsText(countsOf(e), names) });
    const mine = ownCards(e);
    return mine.length ? `${dealt} ${t("event_your_cards", { cards: cardsText(mine) })}` : dealt;
  },
  PonytailsDealt: (e, _who, names) => t("event_PonytailsDealt", { counts: countsText(countsOf(e), names) }),
  PonytailPickedUp: (e, who) => {
    const cards = e.cards ?? [];
    if (cards.length) return t("event_PonytailPickedUp_cards", { who, cards: cardsText(cards) });
    return t("event_PonytailPickedUp", { who, count: e.count ?? 0 });
  },
  CardsDrawn: (e, who, _names, _next, previous) => drawn(e, who, previous),
  RedThreeLaid: (e, who) => t(blackThree(e) ? "event_BlackThreeLaid" : "event_RedThreeLaid", { who, card: cardText(e.card) }),
  CardTurnedUp: (e) => t(e.crosswise ? "event_CardTurnedUp_crosswise" : "event_CardTurnedUp", { card: cardText(e.card) }),
  PlayStarted: (_e, who) => t("event_PlayStarted", { who }),
  PartnerAsked: (e, who, names) => t("event_PartnerAsked", { who, partner: seatName(e.partner, names) }),
  PartnerAnswered: (e, who, names) =>
    t(e.yes ? "event_PartnerAnswered_yes" : "event_PartnerAnswered_no", { who, asker: seatName(e.asker, names) }),
  PileTaken: (e, who, _names, next) => {
    const values = { who, count: e.size, top: cardText(e.top) };
    const mates = pileMates(e, next);
    return mates.length ? t("event_PileTaken_with", { ...values, cards: cardsText(mates) }) : t("event_PileTaken", values);
  },
  MeldLaid: (e, who) => t("event_MeldLaid", { who, cards: cardsText(e.cards) }),
  MeldExtended: (e, who) =>
    t("event_MeldExtended", { who, cards: cardsText(e.cards), rank: meldRank(e.rank), side: sideText(e.side) }),
  CardDiscarded: (e, who) => t("event_CardDiscarded", { who, card: cardText(e.card) }),
  WentOut: (e, who) => t(e.concealed ? "event_WentOut_concealed" : "event_WentOut", { who }),
  PileDeclined: (_e, who) => t("event_PileDeclined", { who }),
  DealScored: (e) =>
    t("event_DealScored", { reason: known(`event_reason_${e.reason}`, e.reason), scores: scoresText(e.scores) }),
  DealAbandoned: (e) => t("event_DealAbandoned", { reason: known(`event_reason_${e.reason}`, e.reason) }),
  SeatPlayerChanged: (e, who) =>
    t(SEAT_CHANGES[e.reason] ?? "event_SeatPlayerChanged", { who, seat: seatName(e.seat), player: playerText(e.player) }),
  TurnTimedOut: (_e, who) => t("event_TurnTimedOut", { who }),
  TurnClockRestarted: (_e, who) => t("event_TurnClockRestarted", { who }),
  // --- a table's events (GET /tables/{id}/stream) -----------------------------------------
  Created: (e) =>
    t("event_Created", { host: e.host, entry: known(`entry_${e.entry}`, e.entry), players: e.players }),
  PlayerSeated: (e) => t("event_PlayerSeated", { player: e.player, seat: seatName(e.seat) }),
  TeamsChosen: (e, _who, names) => t("event_TeamsChosen", { sides: sidesText(e.sides, names) }),
  GameStarted: (e, _who, names) => t("event_GameStarted", { sides: sidesText(e.sides, names) }),
  DealOpened: (e, _who, names) => e.by
    ? t("event_DealOpened_by", { number: e.number, dealer: seatName(e.dealer, names), by: playerText(e.by) })
    : t("event_DealOpened", { number: e.number, dealer: seatName(e.dealer, names) }),
  DealRecorded: (e) => t("event_DealRecorded", { scores: scoresText(e.scores), totals: scoresText(e.totals) }),
  GameEnded: (e) => t("event_GameEnded", { winners: (e.winners ?? []).map(sideText).join(", ") }),
  GameStopped: (e) => t("event_GameStopped", { count: e.completed_deals }),
  InviteRotated: () => t("event_InviteRotated"),
  SpectatorsSet: (e) => t(e.allowed ? "event_SpectatorsSet_allowed" : "event_SpectatorsSet_refused"),
  TurnClockSet: (e) =>
    e.turn_seconds == null
      ? t("event_TurnClockSet_off")
      : t("event_TurnClockSet", { seconds: e.turn_seconds }),
  RematchOpened: () => t("event_RematchOpened"),
  MissedTurnsLimitSet: (e) =>
    (e.limit ? t("event_MissedTurnsLimitSet", { count: e.limit }) : t("event_MissedTurnsLimitSet_never")),
  SeatLeft: (e) => t(e.freed ? "event_SeatLeft_freed" : "event_SeatLeft", { player: e.player, seat: seatName(e.seat) }),
  SeatTakenOver: (e) => t(e.reason === "missed_turns" ? "event_SeatTakenOver_missed_turns" : "event_SeatTakenOver",
    { player: e.player, seat: seatName(e.seat) }),
  SeatTakenBack: (e) => t("event_SeatTakenBack", { player: e.player, seat: seatName(e.seat) }),
  SeatGiven: (e) => t("event_SeatGiven", { player: e.player, previous: e.previous, seat: seatName(e.seat) }),
};

function sidesText(sides, names) {
  return Object.entries(sides ?? {})
    .map(([side, seats]) => `${sideText(side)}: ${seats.map((s) => seatName(s, names)).join(", ")}`)
    .join("; ");
}

// One event in words. `names`: the players' names by room seat (null: "seat N"). `next`, the
// event after it when known, lets a pile taken name the hand cards that went with its top;
// `previous`, the event before it, lets a replacement say which three it replaced.
export function describeEvent(event, names = null, next = null, previous = null) {
  const describe = DESCRIBE[event?.kind];
  const who = event?.seat === undefined || event?.seat === null ? "" : seatName(event.seat, names);
  if (!describe) return t("event_unknown", { kind: String(event?.kind ?? "?"), step: event?.step ?? "?" });
  try {
    const sentence = describe(event, who, names, next, previous);
    // "seat 3 drew a card" starts a sentence: "Seat 3 ..." (a player's name stays as it is).
    const named = Boolean(names?.[event.seat]) && !phrases.has(who);
    return !named && who && sentence.startsWith(who) ? sentence.charAt(0).toUpperCase() + sentence.slice(1) : sentence;
  } catch {
    // A tampered record may hold anything: say what it claims to be rather than fail.
    return t("event_unreadable", { kind: String(event.kind), step: event.step ?? "?" });
  }
}

// The same sentence in the words a screen reader is given: each card and meld rank by its name
// ("kim added queen of spades to the queen meld of Side A."), not by the printed symbols; a
// seated bot by its short name ("Bot 1 drew a card.", spokenName).
export function sayEvent(event, names = null, next = null, previous = null) {
  speaking = true;
  try {
    return spokenFaces(describeEvent(event, spokenNames(names), next, previous));
  } finally {
    speaking = false;
  }
}

// A step the viewer's history does not show (the shuffle's seed or a prepared deck: secret).
export function secretStep() {
  return t("event_secret");
}
