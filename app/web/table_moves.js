// The table page's move panel (docs/web.md, "The table page"): the buttons the move menu
// (GET /deals/{id}/moves) allows, and the commands composed from the selected hand cards.
// Only kinds of move the menu lists are offered; every composed meld or take is checked with
// the dry run before the page sends it (table_play.js `play`).

import { $, Refused, cardText, element, isWild, parseCard, rankText, spokenFaces, spokenText, t } from "./common.js";
import { seatName, spokenNames } from "./words.js";

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

// A meld's rank by its word: "queen", "дама", "Q" in Chinese (rank_Q).
const rankName = (rank) => t(`rank_${rank}`);

// Why one more card cannot join a meld of `rank` holding `naturals` naturals and `wilds` wild
// cards (`fresh`: a new meld), under the menu's `meld_limits` (docs/api.md): the first limit it
// breaks in the order the rules check them, as {rule, key, values}, or null. The limits are the
// server's own (`Variant.meld_limits`); the page only reads them.
function breaks(limits, rank, naturals, wilds, fresh) {
  const size = naturals + wilds;
  const problem = (rule, key, number) => ({ rule, key: `meld_limit_${key}`, rank, values: { number } });
  if (rank === "W") {
    if (fresh && size < limits.min_cards) return problem(limits.wild_meld_rule, "wild_few", limits.min_cards);
    if (limits.max_cards !== null && size > limits.max_cards) return problem(limits.wild_meld_rule, "wild_full", limits.max_cards);
    return null;
  }
  if (fresh && size < limits.min_cards) return problem(limits.size_rule, "few_cards", limits.min_cards);
  if (limits.max_cards !== null && size > limits.max_cards) return problem(limits.size_rule, "full", limits.max_cards);
  if (naturals < limits.min_naturals) return problem(limits.wilds_rule, "few_naturals", limits.min_naturals);
  if (wilds > limits.max_wilds) return problem(limits.wilds_rule, "many_wilds", limits.max_wilds);
  if (limits.wilds_outnumbered && naturals <= wilds) return problem(limits.ratio_rule, "outnumbered");
  return null;
}

// Why a wild card cannot be added to the meld, or null: the counts first, then the entry's
// `wild_limits` (sevens, aces, five naturals, an open wild-card meld in modern_american).
function breaksWithWild(limits, meld) {
  const counted = breaks(limits, meld.rank, meld.naturals, meld.wilds + 1, false);
  if (counted) return counted;
  const limit = limits.wild_limits.find((one) => one.ranks.includes(meld.rank)
    && (one.naturals === null || meld.naturals < one.naturals));
  if (!limit) return null;
  const key = limit.naturals === null ? "meld_limit_no_wild" : "meld_limit_wild_naturals";
  return { rule: limit.rule, key, rank: meld.rank, values: { number: limit.naturals } };
}

// A `problem` of composeMelds as a refusal: "Refused: the selected cards cannot be melded:
// the seven meld takes no wild card (R-MA-MELD-5)", its status 400 like the server's refusals so
// that the rule's id is a link to the rule, as theirs is.
// An addition to a meld (`onto`: its rank) says so: "Refused: the selected cards cannot be
// added to the king meld: a wild card joins the king meld only when ...". A meld's rank is
// named by its word, as a sentence of the log says it to a screen reader ("the queen meld",
// «дама»): "the Q meld" was read "the queue meld", "the A meld" "the uh meld"; the word reads
// as well on the screen. In the page's language at each drawing (`problem.rank` is the code).
export function limitRefusal(problem, onto = null) {
  const text = () => {
    const why = t(problem.key, { ...problem.values, rank: rankName(problem.rank) });
    return onto === null ? t("meld_limit_cannot", { why })
      : onto === "W" ? t("meld_limit_cannot_add_wild", { why })
        : t("meld_limit_cannot_add", { why, rank: rankName(onto) });
  };
  const refused = new Refused(400, problem.rule, text); // said in the page's language at each drawing
  refused.local = true; // by its own message, not by the rule's line
  return refused;
}

// The selected cards as melds, grouped within the side's meld limits (the menu's `meld_limits`
// and `melds`): naturals grouped by rank (largest group first, each joining the side's open
// meld of its rank, as the rules have it), wild cards given to the groups that may take them,
// all wild cards a meld of rank W, black threes a meld of their own. Returns {melds, problem}:
// `problem` ({rule, key, values}) says why the selection cannot be melded as grouped, before
// anything is sent; the dry run still judges the whole command (the initial minimum, closed
// ranks). `onto`: the rank of the side's open meld the cards are added to (a click on that
// meld, composeAddition): the wild cards go to it even without naturals of its rank.
export function composeMelds(codes, limits, sideMelds = [], onto = null) {
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
  const open = (rank) => sideMelds.find((meld) => meld.rank === rank && !meld.closed);
  if (onto !== null && onto !== "W" && !naturals.has(onto)) naturals.set(onto, []);
  if (naturals.size === 0 && threes.length === 0) {
    if (!wilds.length) return { melds: [], problem: null };
    const held = open("W");
    const problem = limits.wild_melds
      ? breaks(limits, "W", 0, wilds.length + (held?.size ?? 0), !held) : null;
    return { melds: [{ cards: wilds, rank: "W" }], problem };
  }
  const melds = [...naturals.entries()]
    .sort(([, a], [, b]) => b.length - a.length)
    .map(([rank, cards]) => {
      const held = open(rank);
      return { cards: [...cards], rank, fresh: !held, naturals: cards.length + (held?.naturals ?? 0),
        wilds: held?.wilds ?? 0, given: 0 };
    });
  const give = (meld, wild) => {
    meld.cards.push(wild);
    meld.wilds += 1;
    meld.given += 1;
  };
  // First wild cards to each new meld too short without them (a pair), as far as its limits
  // allow; then each of the others to the meld that may take it with the fewest wild cards, so
  // that "J J J J 9 9 2 2 2" is J J J J 2 2 and 9 9 2, and 7 7 7 7 K K K 2 in modern_american
  // is 7 7 7 7 and K K K 2 (sevens take no wild card, R-MA-MELD-5).
  const rest = [...wilds];
  for (const meld of melds) {
    while (meld.fresh && rest.length && meld.naturals + meld.wilds < limits.min_cards
      && !breaksWithWild(limits, meld)) give(meld, rest.shift());
  }
  while (rest.length) {
    const fits = melds.filter((meld) => !breaksWithWild(limits, meld)).sort((a, b) => a.given - b.given)[0];
    if (!fits) break;
    give(fits, rest.shift());
  }
  // A wild card no meld may take: why the first group may not (the largest, where a player
  // looks first); otherwise the first meld the limits refuse as it is.
  let problem = rest.length ? breaksWithWild(limits, melds[0]) : null;
  for (const meld of melds) problem ??= breaks(limits, meld.rank, meld.naturals, meld.wilds, meld.fresh);
  const out = melds.map(({ cards, rank }) => ({ cards, rank }));
  if (threes.length) out.push({ cards: threes });
  return { melds: out, problem };
}

// The selected cards added to the side's open meld of `rank` (a click on that meld): the
// command, and composeMelds' `problem` when the meld with the cards added breaks the limits,
// said before anything is sent. A selection with cards of another rank (or threes) is left to
// the dry run, which names the card.
export function composeAddition(codes, rank, limits, sideMelds) {
  const command = { type: "meld", melds: [{ cards: [...codes], rank }] };
  const joins = (code) => isWild(code) || (rank !== "W" && parseCard(code).rank === rank);
  if (rank === "3" || !codes.every(joins)) return { command, problem: null };
  return { command, problem: composeMelds(codes, limits, sideMelds, rank).problem };
}

// A take of the pile with the selected cards: the top with the selected cards of its rank and
// the wild cards, then the other selected cards as further melds (an initial meld, R-INIT-2).
// Their grouping follows composeMelds (its `problem` is returned beside the command).
export function composeTake(codes, top, limits, sideMelds) {
  const rank = parseCard(top).rank;
  const withTop = codes.filter((code) => isWild(code) || parseCard(code).rank === rank);
  const rest = codes.filter((code) => !withTop.includes(code));
  const { melds, problem } = composeMelds(rest, limits, sideMelds);
  return { command: { type: "take_pile", melds: [{ cards: ["TOP", ...withTop], rank }, ...melds] }, problem };
}

// `said`: the words a screen reader is given, the meld's rank by its name ("onto your ace
// meld"; the printed "onto your A meld" was read "onto your uh meld").
function describe(move, said = false) {
  if (move.type === "take_pile" || move.type === "meld") {
    // The top alone goes onto the side's meld of its rank: "the top card onto your 8 meld",
    // not a bare "top" (docs/api.md, the menu's forms).
    // The top with cards of the hand: "the top card with A♦ A♠" ("top A♦ A♠" read as if A♦ A♠
    // were the top, in Russian "сверху 4♥ 4♠", "on top 4♥ 4♠").
    const melds = move.melds.map((meld) => {
      const others = meld.cards.filter((c) => c !== "TOP").map(cardText).join(" ");
      if (!meld.cards.includes("TOP")) return others;
      const rank = said ? t(`rank_${meld.rank}`) : rankText(meld.rank);
      return others ? t("move_top_with", { cards: others }) : t("move_top_onto", { rank });
    });
    // Printed "K K K + Q Q Q · then discard 9♣"; said in words, where a screen reader read
    // "plus" and "dot": "...; and queen of hearts ..., then discard nine of clubs".
    if (!said) {
      const text = melds.join(" + ");
      return move.discard ? `${text} · ${t("move_then_discard", { card: cardText(move.discard) })}` : text;
    }
    const text = melds.reduce((first, next) => t("move_said_and", { first, next }));
    return move.discard ? t("move_said_then", { melds: text, then: t("move_then_discard", { card: cardText(move.discard) }) }) : text;
  }
  return "";
}

// A suggestion's words. A meld that leaves no card in the hand goes out, and says so: "Go out:
// K K K + Q Q Q · then discard 9♣", "Go out: discard ☆" (the last card alone); they read
// "Meld: ... · then discard 9♣", and with nothing to meld "Meld:  · then discard ☆".
function suggestionLabel(move, menu, said = false) {
  const held = Object.values(menu.hand_by_rank ?? {}).reduce((count, cards) => count + cards.length, 0);
  const named = move.type === "meld"
    ? move.melds.reduce((count, meld) => count + meld.cards.length, 0) + (move.discard ? 1 : 0) : -1;
  if (named !== held) return `${t(`move_suggest_${move.type}`)}: ${describe(move, said)}`;
  const what = move.melds.length ? describe(move, said) : t("move_go_out_discard", { card: cardText(move.discard) });
  return `${t("move_suggest_go_out")}: ${what}`;
}

function button(text, move, onClick, extra = {}, said = text) {
  // A suggestion's cards spoken by name for a screen reader ("Meld: queen of hearts ..."), from
  // its words `said` (a meld's rank by its name).
  const spoken = spokenFaces(said);
  const node = element("button", { type: "button", text, "aria-label": spoken === text ? null : spoken, ...extra });
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
  // His ponytail while it is face down (`ponytail` only, R-PT-PONY-1): what "Pick up the
  // ponytail" does once it is offered, and until then when it will be.
  const ponytail = view.ponytail_counts?.[String(view.seat)];
  if (ponytail && menu && (menu.phase === "draw" || menu.phase === "play")) {
    const now = byType(menu, "pick_up_ponytail").length > 0;
    lines.push(t(now ? "move_ponytail_now" : "move_ponytail_later", { count: ponytail }));
  }
  return lines.join(" ");
}

// The move whose button had the keyboard focus when a redraw took it away (see renderMoves),
// or null.
let lostFocus = null;

// Fills the move panel. `ctx`: {menu, view, names, selected (Set), busy, play(command,
// {check, problem}), clear()}; `problem`: why the page will not send a composed command.
export function renderMoves(ctx) {
  const { menu, view, names, selected, play } = ctx;
  const box = $("move-buttons");
  const chosen = [...selected];
  // Drawn again only when something it shows changed: a redraw must not disturb a player
  // typing in the cut's field. The seats' names too: "Ask <partner>" names who plays the
  // partner's seat now, and the table that says so may come after the deal's event.
  const key = JSON.stringify([menu?.step, menu?.next_seq, menu?.moves.length, view.step, chosen, ctx.busy,
    document.documentElement.lang, names]);
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
  // Its words printed, and for a screen reader with a seated bot's short name (spokenNames).
  $("move-hint").replaceChildren(...spokenText(hint(menu, view, names), hint(menu, view, spokenNames(names))));
  const buttons = [];

  const cuts = byType(menu, "cut");
  if (cuts.length) {
    const most = Math.max(...cuts.map((move) => move.n));
    const field = element("input", {
      id: "cut-n", type: "number", min: "1", max: String(most), value: typedCut || String(Math.ceil(most / 2)),
    });
    const cut = button(t("move_cut"), "cut", () => {
      const n = Math.min(most, Math.max(1, Math.round(Number(field.value) || 1)));
      play({ type: "cut", n });
    });
    // Enter in the field cuts, as in a form: the number typed, he had to Tab on to the button.
    field.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || cut.disabled) return;
      event.preventDefault();
      cut.click();
    });
    // The field and its button on one line under the label: beside a long label the button
    // stood a label's width away from the field (on a phone, half the panel).
    buttons.push(element("div", { class: "cut" },
      element("label", { for: "cut-n", text: t("move_cut_count", { most }) }),
      element("div", { class: "cut-row" }, field, cut)));
  }
  if (byType(menu, "draw").length) buttons.push(button(t("move_draw"), "draw", () => play({ type: "draw" })));
  const takes = byType(menu, "take_pile");
  if (mayTake(menu, view)) {
    buttons.push(button(t("move_take_pile"), "take_pile", () => {
      if (!chosen.length && takes.length) return play(takes[0], { check: true });
      const { command, problem } = composeTake(chosen, view.pile.top, menu.meld_limits, menu.melds);
      return play(command, { check: true, problem });
    }));
  }
  if (byType(menu, "decline_pile").length) {
    buttons.push(button(t("move_decline_pile"), "decline_pile", () => play({ type: "decline_pile" })));
  }
  if (byType(menu, "pick_up_ponytail").length) {
    buttons.push(button(t("move_pick_up_ponytail"), "pick_up_ponytail", () => play({ type: "pick_up_ponytail" })));
  }
  if (mayMeld(menu)) {
    buttons.push(button(t("move_meld"), "meld", () => {
      const { melds, problem } = composeMelds(chosen, menu.meld_limits, menu.melds);
      play({ type: "meld", melds }, { check: true, problem });
    }, { disabled: chosen.length === 0 }));
  }
  if (byType(menu, "discard").length) {
    buttons.push(button(t("move_discard"), "discard", () => play({ type: "discard", card: chosen[0] }, { check: true }),
      { disabled: chosen.length !== 1 }));
  }
  for (const move of byType(menu, "answer")) {
    buttons.push(button(t(move.yes ? "move_answer_yes" : "move_answer_no"),
      move.yes ? "answer_yes" : "answer_no", () => play(move)));
  }
  if (chosen.length) {
    buttons.push(button(t("move_clear", { count: chosen.length }), "clear", ctx.clear, { class: "secondary" }));
  }
  // "Ask <partner>: may I go out?" is offered every turn from the draw on: a secondary control
  // after the turn's moves (a plain button still, in the tab order), not a primary one among
  // them, so that the move he came to make stands out.
  for (const move of byType(menu, "ask_partner")) {
    const ask = (who) => t("move_ask_partner", { partner: seatName(move.partner, who) });
    const node = button(ask(names), "ask_partner", () => play(move), { class: "secondary" }, ask(spokenNames(names)));
    node.dataset.partner = String(move.partner);
    buttons.push(node);
  }
  // The menu's composite moves (opening takes and melds, going out), to send as they are.
  const suggestions = [...takes, ...byType(menu, "meld").filter((m) => m.discard || m.melds.length > 1)];
  const list = suggestions.length
    ? element("ul", { class: "suggestions", "aria-label": t("move_suggestions") },
      ...suggestions.map((move, index) => {
        const label = suggestionLabel(move, menu);
        const node = button(label, "suggestion", () => play(move, { check: true }), { class: "secondary" },
          suggestionLabel(move, menu, true));
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
  // The field gone with the cut made (by Enter in it), the focus stays on the panel.
  if (inCut) ($("cut-n") ?? $("moves")).focus();
  if (mayMeld(menu) && menu.melds.length) {
    $("move-hint").append(" ", t("move_hint_add"));
  }
}
