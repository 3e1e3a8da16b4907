// A READ-ONLY picture of one deal (docs/web.md, "The table page"), shared by the table page and
// the replay page. It draws what a DealView holds (GET /deals/{id}, GET /deals/{id}/replay?step=N)
// and nothing else: it asks the server for nothing, keeps no state and knows no move.
//
//   renderDeal(container, view, options) -> the root element it put in `container`
//
// `view` is the DealView JSON as the API answered it (a spectator's has `hand` null).
// `options` (all optional):
//   names:        the player's name per room seat (GET /tables/{id} `seats`); else "Seat N".
//   selectable:   the viewer's hand cards are toggle buttons (aria-pressed) instead of spans.
//   selected:     an iterable of card codes drawn as selected (aria-pressed="true").
//   onCardToggle: (code) => void, called when a selectable hand card is pressed (click,
//                 Enter or Space: they are real buttons).
//   onMeldClick:  (side, rank, index) => void; when given, the melds of the viewer's side are
//                 buttons calling it (index: the side's meld of that rank, 0 first).
//   ownSeat:      the viewer's room seat when he sits this deal out (the view's `seat` is
//                 null then): his seat is still marked as his.
//
// The root is `<div class="deal" data-step=N data-phase=... data-deal=id>`. Hooks for tests:
// seats `li[data-seat]` (with data-turn, data-sits-out), melds `[data-meld=<rank>][data-side]
// [data-meld-index]` (data-canasta="natural|mixed|wild"), hand cards `[data-card]` inside
// `#hand` (`.hand`), the pile `.pile` (data-frozen), the stock `.stock`, red threes
// `.red-threes [data-card]`, the score breakdown `table.breakdown` when the deal is scored.
// Keyboard focus on a hand card or meld is kept across a redraw.

import { cardBack, cardElement, codeLink, element, isWild, parseCard, rankText, t } from "./common.js";

// The order of the hand's groups: naturals high to low, then wild cards, then threes.
const GROUP_ORDER = ["A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "2", "LJ", "BJ", "3"];
const CANASTA_SIZE = 7;
// The parts of a side's score (R-SCORE-1), in the breakdown's order; the first five always show.
const SCORE_PARTS = [
  "melds", "canasta_bonus", "going_out", "red_threes", "hands",
  "concealed", "penalties", "ponytails", "cut_bonus",
];
const ALWAYS_SHOWN = 5;

// The seat's player's name, or "Seat N".
export function seatName(seat, names = []) {
  return names?.[seat] ?? t("seat", { number: seat + 1 });
}

// The room seats of a view: those that play and those that sit out, in order.
export function roomSeats(view, names = []) {
  const seats = new Set([...view.order, ...view.sitting_out, ...Object.keys(view.sides).map(Number)]);
  for (let seat = 0; seat < (names?.length ?? 0); seat += 1) seats.add(seat);
  return [...seats].sort((a, b) => a - b);
}

// A meld's kind once it is a canasta: "natural", "mixed" or "wild" (null before).
export function canastaKind(meld) {
  if (meld.cards.length < CANASTA_SIZE || meld.rank === "3") return null;
  if (meld.rank === "W") return "wild";
  return meld.cards.some(isWild) ? "mixed" : "natural";
}

function groupKey(code) {
  const card = parseCard(code);
  return card.joker ? card.face : card.rank;
}

// The hand grouped by rank, in GROUP_ORDER: [[rank, [codes...]], ...].
export function handGroups(hand) {
  const groups = new Map();
  for (const code of hand) {
    const key = groupKey(code);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(code);
  }
  return [...groups.entries()].sort(
    ([a], [b]) => GROUP_ORDER.indexOf(a) - GROUP_ORDER.indexOf(b),
  );
}

// A face-down card beside the words that already say what it shows (hidden from readers).
function back(label) {
  const node = cardBack(label);
  node.setAttribute("aria-hidden", "true");
  return node;
}

// The level of the deal's heading (h2 on the table page, whose deal stands under the page's
// title; h3 on the replay, under "The table at this step"), its parts' one level below:
// `renderDeal`'s `level`.
let level = 2;
const heading = (below) => `h${level + below}`;

function cards(codes, label, classes = "cards") {
  return element("ul", { class: classes, "aria-label": label },
    ...codes.map((code) => element("li", {}, cardElement(code))));
}

// --- the seats ---------------------------------------------------------------------------------

// `ownSeat`: the viewer's room seat when the view gives none because he sits this deal out
// (he sees what a spectator sees, but his own seat is still his).
function seatItem(view, seat, names, ownSeat = null) {
  const me = view.seat ?? ownSeat;
  const side = view.sides[String(seat)];
  const item = element("li", { class: "seat-box" });
  item.dataset.seat = String(seat);
  const title = element("p", { class: "seat-name" }, seatName(seat, names));
  const marks = [];
  if (seat === me) marks.push(t("table_you"));
  else if (me !== null && side !== undefined && side === view.sides[String(me)]) {
    marks.push(t("table_partner"));
  }
  if (side !== undefined) marks.push(t("side", { side }));
  if (seat === view.dealer) marks.push(t("table_dealer"));
  if (marks.length) title.append(element("span", { class: "marks", text: ` (${marks.join(", ")})` }));
  item.append(title);
  if (view.sitting_out.includes(seat)) {
    item.dataset.sitsOut = "true";
    item.append(element("p", { class: "sits-out", text: t("table_sits_out") }));
    return item;
  }
  const count = view.hand_counts[String(seat)] ?? 0;
  const label = t("table_hand_count", { count });
  // On an upright phone the words give way to the number (`data-count`) beside the card back
  // (deal.css): the words stay for a screen reader.
  const counted = element("p", { class: "count" }, back(label), element("span", { class: "count-words", text: label }));
  counted.dataset.count = String(count);
  item.append(counted);
  const ponytail = view.ponytail_counts?.[String(seat)];
  if (ponytail) item.append(element("p", { class: "count", text: t("table_ponytail_count", { count: ponytail }) }));
  const asked = view.question && view.question.answer === null;
  const acting = asked ? view.question.partner === seat : view.turn === seat && view.phase !== "over";
  if (acting || (view.phase === "cut" && view.cutter === seat)) {
    item.dataset.turn = "true";
    const key = asked ? "table_to_answer" : view.phase === "cut" ? "table_to_cut" : "table_turn";
    // The arrow is for the eye: a screen reader said "black right-pointing triangle, to play".
    item.append(element("p", { class: "turn" }, element("span", { "aria-hidden": "true", text: "▶ " }), t(key)));
  }
  return item;
}

function seatsSection(view, names, ownSeat) {
  return element("section", { class: "seats-area", "aria-label": t("table_seats") },
    element("ul", { class: "seat-list" }, ...roomSeats(view, names).map((s) => seatItem(view, s, names, ownSeat))));
}

// --- the stock and the pile --------------------------------------------------------------------

// Why the pile is frozen, in words (R-PILE-1, R-PILE-2, R-DEAL-7).
export function pileNotes(view) {
  const { pile } = view;
  const notes = [];
  if (pile.crosswise.length) notes.push(t("table_frozen_crosswise"));
  if (pile.always_frozen) notes.push(t("table_frozen_always"));
  // R-PILE-2's freeze for a side without its initial meld matters only while there is a pile
  // to take: not before the cut, over an empty pile, or once the deal is over.
  const taking = ["draw", "play", "answer"].includes(view.phase) && pile.size > 0;
  if (taking && view.seat !== null && !view.opened[view.sides[String(view.seat)]]) {
    notes.push(t("table_frozen_unopened"));
  }
  if (pile.top) {
    const top = parseCard(pile.top);
    if (isWild(pile.top) || top.rank === "3") notes.push(t("table_pile_blocked"));
  }
  return notes;
}

function centerSection(view) {
  const { pile } = view;
  const stock = element("div", { class: "stock" },
    element(heading(1), { text: t("table_stock") }),
    view.stock_size === null
      ? element("p", { text: t("table_not_cut") })
      : element("p", {}, back(t("table_stock_size", { count: view.stock_size })),
        element("span", { text: t("table_stock_size", { count: view.stock_size }) })));
  const pileBox = element("div", { class: "pile" }, element(heading(1), { text: t("table_pile") }));
  pileBox.dataset.frozen = String(pile.frozen || pile.always_frozen);
  pileBox.append(pile.top ? cardElement(pile.top)
    : element("p", { class: "empty", text: t("table_pile_empty") }));
  pileBox.append(element("p", { class: "size", text: t("table_pile_size", { count: pile.size }) }));
  if (pile.frozen || pile.always_frozen) {
    pileBox.append(element("p", { class: "frozen", text: t("table_frozen") }));
  }
  if (pile.crosswise.length) pileBox.append(cards(pile.crosswise, t("table_crosswise"), "cards crosswise"));
  const notes = pileNotes(view);
  if (notes.length) {
    pileBox.append(element("ul", { class: "notes" }, ...notes.map((text) => element("li", { text }))));
  }
  return element("section", { class: "center", "aria-label": t("table_center") }, stock, pileBox);
}

// --- each side's melds and threes -------------------------------------------------------------

// modern_american lays every three, red or black, in the side's threes area and scores them
// per colour (R-MA-THREE-1, R-MA-THREE-2): "Threes" there, "Red threes" elsewhere.
function threesKey(variant, prefix) {
  return variant === "modern_american" ? `${prefix}_threes` : `${prefix}_red_threes`;
}

// A meld in words: its rank and size, its wild cards, its canasta and, once a capped meld is
// complete, that it takes no more cards; in modern_american a natural canasta also closes its
// rank to both sides (R-MA-MELD-2), which the page says, since a mixed one does not.
// `spoken`: for a screen reader, "ace: a meld of 4 cards, 1 wild", where the page prints
// "A ×4 · 1 wild" (read "A times 4 dot 1 wild").
export function meldLabel(meld, variant = null, spoken = false) {
  const kind = canastaKind(meld);
  const printed = spoken ? t(`rank_${meld.rank}`) : rankText(meld.rank);
  const rank = meld.rank === "W" ? t("meld_wild") : meld.rank === "3" ? t("meld_black_threes") : printed;
  const parts = [t(spoken ? "meld_spoken" : "meld_of", { rank, count: meld.cards.length })];
  const wilds = meld.cards.filter(isWild).length;
  if (wilds && meld.rank !== "W") parts.push(t("meld_wilds", { count: wilds }));
  if (kind) parts.push(t(`meld_canasta_${kind}`));
  if (meld.closed) parts.push(t("meld_closed"));
  if (variant === "modern_american" && kind === "natural") parts.push(t("meld_rank_closed"));
  return spoken ? parts.reduce((first, next) => t("meld_parts_said", { first, next })) : parts.join(" · ");
}

function meldItem(meld, side, index, onMeldClick, variant) {
  const label = meldLabel(meld, variant);
  const kind = canastaKind(meld);
  // A complete capped meld takes no more cards (R-MA-MELD-1, R-PT-MELD-1): it is no target.
  // A tap on it sent the selected cards as a new meld of its rank, refused with a message
  // about new melds that the player, who meant to add to it, could not make sense of.
  if (meld.closed) onMeldClick = null;
  const tag = onMeldClick ? "button" : "div";
  const box = element(tag, {
    class: `meld${kind ? ` canasta canasta-${kind}` : ""}`, "aria-label": meldLabel(meld, variant, true),
    role: onMeldClick ? null : "group",
  });
  if (onMeldClick) {
    box.type = "button";
    box.addEventListener("click", () => onMeldClick(side, meld.rank, index));
  }
  box.dataset.meld = meld.rank;
  box.dataset.side = side;
  box.dataset.meldIndex = String(index);
  if (kind) box.dataset.canasta = kind;
  box.append(
    element("span", { class: "meld-label", "aria-hidden": "true", text: label }),
    element("span", { class: "meld-cards", "aria-hidden": "true" }, ...meld.cards.map((code) => cardElement(code))),
  );
  return element("li", {}, box);
}

function sideSection(view, side, names, onMeldClick) {
  const seats = Object.entries(view.sides).filter(([, s]) => s === side).map(([seat]) => Number(seat));
  const who = seats.map((seat) => seatName(seat, names)).join(", ");
  const mine = view.seat !== null && view.sides[String(view.seat)] === side;
  const section = element("section", { class: `side${mine ? " mine" : ""}`, "aria-label": t("side", { side }) });
  section.dataset.side = side;
  section.append(element(heading(1), { text: `${t("side", { side })}: ${who}` }));
  section.append(element("p", { class: "opened", text: t(view.opened[side] ? "table_opened" : "table_not_opened") }));
  const threes = view.red_threes[side] ?? [];
  if (threes.length) {
    const caption = t(threesKey(view.variant, "table"));
    // The caption for the eye; a screen reader hears it once, as the list's name (it heard
    // "Red threes, list Red threes").
    section.append(element("div", { class: "red-threes" },
      element("span", { class: "caption", "aria-hidden": "true", text: caption }), cards(threes, caption)));
  }
  const melds = view.melds[side] ?? [];
  const seen = {};
  const items = melds.map((meld) => {
    seen[meld.rank] = (seen[meld.rank] ?? -1) + 1;
    return meldItem(meld, side, seen[meld.rank], mine ? onMeldClick : null, view.variant);
  });
  section.append(items.length
    ? element("ul", { class: "melds", "aria-label": t("table_melds") }, ...items)
    : element("p", { class: "empty", text: t("table_no_melds") }));
  return section;
}

// --- the viewer's hand ------------------------------------------------------------------------

function handSection(view, { selectable, selected, onCardToggle }) {
  const chosen = new Set(selected ?? []);
  const section = element("section", { class: "hand", id: "hand", "aria-label": t("table_your_hand") });
  section.append(element(heading(1), { text: t("table_your_hand_count", { count: view.hand.length }) }));
  const groups = element("ul", { class: "groups" });
  for (const [rank, codes] of handGroups(view.hand)) {
    const kind = ["2", "BJ", "LJ"].includes(rank) ? "wild" : rank === "3" ? "three" : "natural";
    const group = element("li", { class: `group group-${kind}` });
    group.dataset.rank = rank;
    // The group's label over its first card (deal.css): the cards of every group flow on one
    // line after another, a group that does not fit at a line's end going on to the next line
    // (it went there whole, and left a wide gap on a phone).
    codes.forEach((code, index) => {
      const attributes = selectable ? { type: "button", "aria-pressed": String(chosen.has(code)) } : {};
      const card = cardElement(code, { tag: selectable ? "button" : "span", attributes });
      if (selectable && onCardToggle) card.addEventListener("click", () => onCardToggle(code));
      group.append(index > 0 ? card : element("span", { class: "group-head" },
        // Printed for the eye ("K ×3"); a screen reader has each card's name.
        element("span", { class: "group-label", "aria-hidden": "true", text: `${rankText(rank)} ×${codes.length}` }), card));
    });
    groups.append(group);
  }
  if (selectable) groups.addEventListener("keydown", alongTheHand);
  section.append(groups);
  return section;
}

// The arrow keys move the focus along the hand's cards (Left and Up back, Right and Down on),
// Home and End to its first and last card; Tab still stops at each card. From the move panel,
// Shift+Tab comes to the hand's last card: the first was a dozen Shift+Tabs further.
const ALONG = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

function alongTheHand(event) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  const cards = [...event.currentTarget.querySelectorAll("button[data-card]")];
  const at = cards.indexOf(event.target);
  if (at < 0) return;
  const to = event.key === "Home" ? 0 : event.key === "End" ? cards.length - 1
    : Object.hasOwn(ALONG, event.key) ? at + ALONG[event.key] : null;
  if (to === null) return;
  event.preventDefault(); // the page does not scroll instead
  cards[Math.max(0, Math.min(cards.length - 1, to))].focus();
}

// --- the end: what happened and the score breakdown -------------------------------------------

function endSection(view, names) {
  const section = element("section", { class: "deal-end", "aria-label": t("score_heading") });
  if (view.went_out !== null) {
    const key = view.concealed ? "table_went_out_concealed" : "table_went_out";
    section.append(element("p", { text: t(key, { name: seatName(view.went_out, names) }) }));
  }
  if (view.end_reason) section.append(element("p", { class: "reason", text: t(`table_end_${view.end_reason}`) }));
  // In a box of its own that scrolls sideways if the table is wider than the screen (deal.css).
  if (view.scores) section.append(element("div", { class: "breakdown-scroll" }, breakdownTable(view.scores, view.variant)));
  return section;
}

// The rules that say what a row of an entry's breakdown counts (docs/rules/modern_american.md):
// its penalties, and its threes (a side with exactly one canasta scores 0 for them, a row of 0
// beside threes laid).
const PART_RULES = { modern_american: { penalties: "R-MA-SCORE-2", red_threes: "R-MA-THREE-2" } };

// The R-SCORE-1 breakdown, one column per side (the deal's `scores`); `variant`, the entry
// (modern_american's threes row is "Threes").
export function breakdownTable(scores, variant = null) {
  const sides = Object.keys(scores).sort();
  const table = element("table", { class: "breakdown" },
    element("caption", { text: t("score_heading") }),
    element("thead", {}, element("tr", {}, element("th", { scope: "col", text: t("score_part") }),
      ...sides.map((side) => element("th", { scope: "col", text: t("side", { side }) })))));
  const body = element("tbody");
  SCORE_PARTS.forEach((part, index) => {
    if (index >= ALWAYS_SHOWN && sides.every((side) => !scores[side][part])) return;
    const label = part === "red_threes" ? threesKey(variant, "score") : `score_${part}`;
    const head = element("th", { scope: "row", text: t(label) });
    // Penalties (modern_american's alone) say nothing of what they were for, its threes'
    // 0 nothing of why: the rule is a link away ("Penalties (R-MA-SCORE-2)": an incomplete
    // sevens or wild meld, three aces in hand...; "Threes (R-MA-THREE-2)"), in a new tab.
    const rule = PART_RULES[variant]?.[part];
    if (rule) head.append(element("span", { class: "detail" }, " (", codeLink(rule), ")"));
    const row = element("tr", {}, head);
    row.dataset.part = part;
    for (const side of sides) {
      const cell = element("td", { text: String(scores[side][part] ?? 0) });
      if (part === "canasta_bonus") {
        const counts = ["natural", "mixed", "wild", "special"]
          .filter((kind) => scores[side][`${kind}_canastas`])
          .map((kind) => t(`score_canastas_${kind}`, { count: scores[side][`${kind}_canastas`] }))
          // A count stays with its word: "(1" over "смешанная)" on a phone (no-break spaces).
          .map((text) => text.replaceAll(" ", "\u00a0"));
        // On a line of its own, smaller: "(3 смешанные)" beside the points made the table
        // wider than a phone.
        if (counts.length) cell.append(element("span", { class: "detail", text: ` (${counts.join(", ")})` }));
      }
      row.append(cell);
    }
    body.append(row);
  });
  const total = element("tr", { class: "total" }, element("th", { scope: "row", text: t("score_total") }),
    ...sides.map((side) => element("td", { text: String(scores[side].total) })));
  total.dataset.part = "total";
  body.append(total);
  table.append(body);
  return table;
}

// --- the whole deal ---------------------------------------------------------------------------

function questionLine(view, names) {
  const q = view.question;
  if (!q || q.asker === null) return null;
  const values = { asker: seatName(q.asker, names), partner: seatName(q.partner, names) };
  const key = q.answer === null ? "table_question_open" : q.answer ? "table_question_yes" : "table_question_no";
  return element("p", { class: "question", role: "note", text: t(key, values) });
}

export function renderDeal(container, view, options = {}) {
  const { names = [], onMeldClick = null, ownSeat = null } = options;
  const focused = document.activeElement;
  const focusCard = container.contains(focused) ? focused.dataset?.card : undefined;
  const focusMeld = container.contains(focused) && focused.dataset?.meld !== undefined
    ? `[data-meld="${focused.dataset.meld}"][data-side="${focused.dataset.side}"][data-meld-index="${focused.dataset.meldIndex}"]`
    : null;

  const root = element("div", { class: "deal" });
  root.dataset.step = String(view.step);
  root.dataset.phase = view.phase;
  root.dataset.deal = view.id;
  level = options.level ?? 2;
  root.append(element(heading(0), { class: "deal-title",
    text: t("table_deal_title", { number: view.number, entry: t(`entry_${view.variant}`) }) }));
  if (view.phase === "over" || view.scores) root.append(endSection(view, names));
  root.append(seatsSection(view, names, ownSeat));
  const question = questionLine(view, names);
  if (question) root.append(question);
  root.append(centerSection(view));
  const sides = element("div", { class: "sides" });
  for (const side of Object.keys(view.melds).sort()) sides.append(sideSection(view, side, names, onMeldClick));
  root.append(sides);
  if (view.hand !== null && view.hand !== undefined) root.append(handSection(view, options));
  container.replaceChildren(root);

  const again = focusCard ? root.querySelector(`#hand [data-card="${focusCard}"]`)
    : focusMeld ? root.querySelector(focusMeld) : null;
  again?.focus();
  return root;
}
