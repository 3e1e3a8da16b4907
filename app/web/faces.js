// The cards' faces in words (docs/web.md, "Accessibility"): a card's code, its printed face
// ("Q♥") and its spoken name ("queen of hearts, deck 2"), and printed words with their cards
// said by name. Pages import them from common.js, which passes them on.

import { t } from "./i18n.js";

// A card's code is "<face>/<deck>": "QH/2" is the queen of hearts of deck 2, "BJ/1" and "LJ/1"
// the jokers (big and little). The hidden card of a view is null.

export const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };

export function parseCard(code) {
  const [face, deck] = code.split("/");
  if (face === "BJ" || face === "LJ") {
    return { code, face, rank: face, suit: null, deck: Number(deck), joker: true };
  }
  return { code, face, rank: face.slice(0, -1), suit: face.slice(-1), deck: Number(deck), joker: false };
}

// The rank as cards print it ("10", "Q"); the big joker "★", the little one "☆", as the log
// names them (a card printed "★" that the log calls "☆" was not to be found in the hand).
export function rankText(rank) {
  return rank === "BJ" || rank === "LJ" ? t(`joker_short_${rank}`) : rank;
}

// Short printed face: "Q♥", "10♣", "★" for the big joker, "☆" for the little one.
export function cardText(code) {
  const card = parseCard(code);
  return card.joker ? t(`joker_short_${card.rank}`) : `${card.rank}${SUIT_SYMBOLS[card.suit]}`;
}

// The spoken name, for screen readers and words: "queen of hearts, deck 2".
export function cardName(code) {
  const card = parseCard(code);
  const name = card.joker
    ? t(`joker_${card.rank}`)
    : t("card_name", { rank: t(`rank_${card.rank}`), suit: t(`suit_${card.suit}`) });
  return t("card_of_deck", { card: name, deck: card.deck });
}

// A face as cards print it in words ("Q♥", "10♣", "★"), and the suits by their symbols; a row
// of faces, one space apart ("Q♥ Q♣ ★").
const FACE = "(?:(?:10|[2-9AKQJ])[♠♥♦♣]|[★☆])";
const PRINTED_FACE = /^(10|[2-9AKQJ])([♠♥♦♣])$/;
const FACE_ROW = new RegExp(`${FACE}(?: ${FACE})*`, "g");
const SUIT_CODES = Object.fromEntries(Object.entries(SUIT_SYMBOLS).map(([code, symbol]) => [symbol, code]));

function spokenFace(face) {
  const [, rank, suit] = PRINTED_FACE.exec(face) ?? [];
  if (!rank) return t(face === t("joker_short_BJ") ? "joker_BJ" : "joker_LJ");
  return t("card_name", { rank: t(`rank_${rank}`), suit: t(`suit_${SUIT_CODES[suit]}`) });
}

// Words as printed ("bob discarded Q♥.") with each card by its spoken name, for a screen reader
// ("bob discarded queen of hearts."): it read the symbols as they came, or not at all. A row of
// cards is a list, "queen of hearts, queen of clubs" (Chinese "红心Q、梅花Q"): one space apart
// they ran together, "jack of hearts ten of hearts queen of spades ...".
export function spokenFaces(text) {
  return String(text).replace(FACE_ROW, (row) =>
    row.split(" ").map(spokenFace).reduce((card, next) => t("card_and_next", { card, next })));
}

export function isWild(code) {
  const card = parseCard(code);
  return card.joker || card.rank === "2";
}

export function isRed(code) {
  const card = parseCard(code);
  return card.suit === "H" || card.suit === "D";
}
