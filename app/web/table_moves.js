// The table page's move panel (docs/web.md, "The table page"): the buttons the move menu
// (GET /deals/{id}/moves) allows, and the commands composed from the selected hand cards.
// Only kinds of move the menu lists are offered; every composed meld or take is checked with
// the dry run before the page sends it (table.js `play`).

import { $, cardText, element, isWild, parseCard, rankText, t } from "./common.js";
import { seatName } from "./words.js";

const byType = (menu, type) => (menu?.moves ?? []).filter((move) => move.type === type);

// Melds and takes the menu cannot list (several melds at once, an initial meld of another
// make-up, docs/api.md) are the client's to compose: the page offers "Meld" in every play step
// the menu opens, and "Take the pile" in every draw step whose pile has a natural card on top
// (R-PILE-1), even when the menu lists no move of that kind; the dry run judges them.
export function mayMeld(menu) {
  return byType(menu, "meld").length > 0 || (menu?.phase === "play" && menu.moves.length > 0);
}

function mayTake(menu, view) {
  if (byType(menu, "take_pile").length > 0) return true;
  if (menu?.phase !== "draw" || menu.moves.length === 0 || !view.pile.top) return false;
  return !isWild(view.pile.top) && parseCard(view.pile.top).rank !== "3";
}

// The selected cards as melds: naturals grouped by rank (largest group first), wild cards
// given to the groups in turn while naturals still outnumber them (R-MELD-3), all wild cards
// a meld of rank W, black threes a meld of their own. The dry run judges the result.
export function composeMelds(codes) {
  const naturals = new Map();
  const wilds = [];
  const threes = [];
  for (const code of codes) {
    const card = parseCard(code);
    if (isWild(code)) wilds.push(code);
    else if (card.rank === "3") threes.push(code);
    else {
      if (!naturals.has(card.rank)) naturals.set(card.rank, []);
      naturals.get(card.rank).push(code);
    }
  }
  if (naturals.size === 0 && threes.length === 0) return wilds.length ? [{ cards: wilds, rank: "W" }] : [];
  const melds = [...naturals.entries()]
    .sort(([, a], [, b]) => b.length - a.length)
    .map(([rank, cards]) => ({ cards: [...cards], rank, naturals: cards.length, wilds: 0 }));
  const give = (meld, wild) => {
    meld.cards.push(wild);
    meld.wilds += 1;
  };
  // First a wild card to each pair, which cannot be a meld without one; then each of the
  // others to the meld that fits with the fewest wild cards, so that "J J J J 9 9 2 2 2" is
  // J J J J 2 2 and 9 9 2 (not J J J J 2 2 2 and a pair of 9s, refused), and an entry allowing
  // fewer wild cards in a meld (modern_american: two) is met more often.
  const rest = [...wilds];
  for (const meld of melds) if (meld.naturals === 2 && rest.length) give(meld, rest.shift());
  for (const wild of rest) {
    const fitting = melds.filter((meld) => meld.naturals > meld.wilds + 1 && meld.wilds < 3);
    const fits = fitting.sort((a, b) => a.wilds - b.wilds)[0] ?? melds[0];
    if (!fits) break;
    give(fits, wild);
  }
  const out = melds.map(({ cards, rank }) => ({ cards, rank }));
  if (threes.length) out.push({ cards: threes });
  return out;
}

// A take of the pile with the selected cards: the top with the selected cards of its rank and
// the wild cards, then the other selected cards as further melds (an initial meld, R-INIT-2).
export function composeTake(codes, top) {
  const rank = parseCard(top).rank;
  const withTop = codes.filter((code) => isWild(code) || parseCard(code).rank === rank);
  const rest = codes.filter((code) => !withTop.includes(code));
  return { type: "take_pile", melds: [{ cards: ["TOP", ...withTop], rank }, ...composeMelds(rest)] };
}

function describe(move) {
  if (move.type === "take_pile" || move.type === "meld") {
    // The top alone goes onto the side's meld of its rank: "the top card onto your 8 meld",
    // not a bare "top" (docs/api.md, the menu's forms).
    const melds = move.melds.map((meld) => (meld.cards.length === 1 && meld.cards[0] === "TOP"
      ? t("move_top_onto", { rank: rankText(meld.rank) })
      : meld.cards.map((c) => (c === "TOP" ? t("move_top") : cardText(c))).join(" ")));
    const text = melds.join(" + ");
    return move.discard ? `${text} · ${t("move_then_discard", { card: cardText(move.discard) })}` : text;
  }
  return "";
}

function button(text, move, onClick, extra = {}) {
  const node = element("button", { type: "button", text, ...extra });
  node.dataset.move = move;
  node.addEventListener("click", onClick);
  return node;
}

// Why he may not go out, from the menu's first `go_out.lacks` code the page has words for
// (docs/api.md): "You may not go out yet: your side lacks a canasta.", not a bare "not yet".
const LACKS = new Set(["partner_said_no", "needs_canasta", "ponytail_face_down", "needs_natural_canasta",
  "needs_mixed_canasta", "needs_natural_sevens_canasta", "needs_wild_canasta"]);
function goOutLack(lacks) {
  const code = (lacks ?? []).find((lack) => LACKS.has(lack));
  return code ? `move_go_out_lacks_${code}` : "move_may_not_go_out";
}

// What the player is asked to do now, in words.
function hint(menu, view, names) {
  const lines = [];
  if (!menu || menu.moves.length === 0) {
    if (view.phase !== "over") lines.push(t("move_wait"));
  } else if (menu.phase === "cut") lines.push(t("move_hint_cut"));
  else if (menu.phase === "answer") {
    lines.push(t("move_hint_answer", { asker: seatName(view.question?.asker ?? 0, names) }));
  } else if (menu.phase === "draw") {
    // The pile is named only when the page offers to take it: an empty pile, or a wild card
    // or a three on top, cannot be taken (R-PILE-1).
    const stockOnly = byType(menu, "draw").length > 0 && !mayTake(menu, view);
    lines.push(t(stockOnly ? "move_hint_draw_stock" : "move_hint_draw"));
  } else lines.push(t("move_hint_play"));
  if (menu && menu.initial_minimum_left > 0) {
    lines.push(t("move_minimum", { minimum: menu.initial_minimum_left }));
  }
  if (menu && menu.moves.length && menu.phase === "play") {
    lines.push(t(menu.go_out.allowed ? "move_may_go_out" : goOutLack(menu.go_out.lacks)));
  }
  return lines.join(" ");
}

// The move whose button had the keyboard focus when a redraw took it away (see renderMoves),
// or null.
let lostFocus = null;

// Fills the move panel. `ctx`: {menu, view, names, selected (Set), busy, play(command,
// {check}), clear()}.
export function renderMoves(ctx) {
  const { menu, view, names, selected, play } = ctx;
  const box = $("move-buttons");
  const chosen = [...selected];
  // Drawn again only when something it shows changed: a redraw must not disturb a player
  // typing in the cut's field.
  const key = JSON.stringify([menu?.step, menu?.next_seq, menu?.moves.length, view.step, chosen, ctx.busy,
    document.documentElement.lang]);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  // The move button that has the keyboard focus, or had it before a redraw took it away (its
  // button disabled while the command is on its way, or gone with the move): the focus
  // returns to that move once it is offered again, and stays on the panel meanwhile (its
  // heading and hint are read; Tab goes on to the moves), never lost to the page.
  const active = document.activeElement;
  if (box.contains(active)) lostFocus = active.dataset.move ?? "";
  else if (active !== null && active !== document.body && active !== $("moves")) lostFocus = null;
  const focusedMove = lostFocus;
  // A redraw keeps what the player typed in the cut's field, and his focus there.
  const typedCut = $("cut-n")?.value;
  const inCut = document.activeElement?.id === "cut-n";
  $("move-hint").textContent = hint(menu, view, names);
  const buttons = [];

  const cuts = byType(menu, "cut");
  if (cuts.length) {
    const most = Math.max(...cuts.map((move) => move.n));
    const field = element("input", {
      id: "cut-n", type: "number", min: "1", max: String(most), value: typedCut || String(Math.ceil(most / 2)),
    });
    buttons.push(element("div", { class: "cut" },
      element("label", { for: "cut-n", text: t("move_cut_count", { most }) }), field));
    buttons.push(button(t("move_cut"), "cut", () => {
      const n = Math.min(most, Math.max(1, Math.round(Number(field.value) || 1)));
      play({ type: "cut", n });
    }));
  }
  if (byType(menu, "draw").length) buttons.push(button(t("move_draw"), "draw", () => play({ type: "draw" })));
  const takes = byType(menu, "take_pile");
  if (mayTake(menu, view)) {
    buttons.push(button(t("move_take_pile"), "take_pile", () => play(
      chosen.length || !takes.length ? composeTake(chosen, view.pile.top) : takes[0], { check: true },
    )));
  }
  if (byType(menu, "decline_pile").length) {
    buttons.push(button(t("move_decline_pile"), "decline_pile", () => play({ type: "decline_pile" })));
  }
  if (byType(menu, "pick_up_ponytail").length) {
    buttons.push(button(t("move_pick_up_ponytail"), "pick_up_ponytail", () => play({ type: "pick_up_ponytail" })));
  }
  if (mayMeld(menu)) {
    buttons.push(button(t("move_meld"), "meld", () => play({ type: "meld", melds: composeMelds(chosen) }, { check: true }),
      { disabled: chosen.length === 0 }));
  }
  if (byType(menu, "discard").length) {
    buttons.push(button(t("move_discard"), "discard", () => play({ type: "discard", card: chosen[0] }, { check: true }),
      { disabled: chosen.length !== 1 }));
  }
  for (const move of byType(menu, "ask_partner")) {
    const node = button(t("move_ask_partner", { partner: seatName(move.partner, names) }), "ask_partner", () => play(move));
    node.dataset.partner = String(move.partner);
    buttons.push(node);
  }
  for (const move of byType(menu, "answer")) {
    buttons.push(button(t(move.yes ? "move_answer_yes" : "move_answer_no"),
      move.yes ? "answer_yes" : "answer_no", () => play(move)));
  }
  if (chosen.length) {
    buttons.push(button(t("move_clear", { count: chosen.length }), "clear", ctx.clear, { class: "secondary" }));
  }
  // The menu's composite moves (opening takes and melds, going out), to send as they are.
  const suggestions = [...takes, ...byType(menu, "meld").filter((m) => m.discard || m.melds.length > 1)];
  const list = suggestions.length
    ? element("ul", { class: "suggestions", "aria-label": t("move_suggestions") },
      ...suggestions.map((move, index) => {
        const label = `${t(`move_suggest_${move.type}`)}: ${describe(move)}`;
        const node = button(label, "suggestion", () => play(move, { check: true }), { class: "secondary" });
        node.dataset.suggestion = String(index);
        return element("li", {}, node);
      }))
    : null;
  const parts = [...buttons];
  if (list) parts.push(element("p", { class: "caption", text: t("move_suggestions") }), list);
  box.replaceChildren(...parts);
  for (const node of box.querySelectorAll("button")) if (ctx.busy) node.disabled = true;
  if (focusedMove !== null && !inCut) {
    const again = box.querySelector(`[data-move="${focusedMove}"]:not([disabled])`);
    if (again) {
      again.focus();
      lostFocus = null;
    } else if (document.activeElement !== $("moves")) {
      $("moves").focus();
    }
  }
  if (inCut) $("cut-n")?.focus();
  if (mayMeld(menu) && menu.melds.length) {
    $("move-hint").append(" ", t("move_hint_add"));
  }
}
