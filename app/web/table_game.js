// The table page's game panel (docs/web.md): the seats before the start, the running totals
// and each deal's score, the winners, and the host's controls (next deal, stop the game),
// shown only to the host (the table's `host` against GET /sessions/current); the server refuses them from
// anybody else anyway (R-SEAT-3).

import { $, botNote, confirmation, element, redraw, sideNames, t, winnersText } from "./common.js";
import { standsInForHost, teamsFor } from "./host.js";
import { inviteLink } from "./private.js";

// Before the start: who sits where (like the lobby) and, for the host once every seat is
// taken (and the teams chosen where he chooses them), "Start the game" (#start-game): the
// way to start a rematch, which the lobby does not list when the table is private.
// `act("start")` sends it.
export function renderWaiting(state, act) {
  const { table, me } = state;
  const open = table?.status === "open";
  $("waiting").hidden = !open;
  if (!open) {
    $("waiting-start").replaceChildren();
    $("waiting-previous").replaceChildren(); // the game panel has it then: one #to-previous-game
    return;
  }
  $("waiting-previous").replaceChildren(...previousGame(table));
  $("waiting-seats").replaceChildren(...table.seats.map((name, index) => element(
    "li", { class: "seat" }, `${t("seat", { number: index + 1 })}: `,
    name === null ? element("span", { class: "free", text: t("free_seat") })
      : `${name}${botNote(table, index)}${name === me ? ` (${t("you")})` : ""}`,
  )));
  renderInvite(state, act);
  if (me === null || me !== table.host || !readyToStart(table)) {
    $("waiting-start").replaceChildren();
    return;
  }
  if ($("start-game")) return; // drawn already: a redraw would take the focus away
  const start = element("button", { type: "button", id: "start-game", text: t("start") });
  start.addEventListener("click", () => act("start"));
  $("waiting-start").replaceChildren(start);
}

// A rematch's way back to the game it is the rematch of (its `rematch_of`: that table's page,
// with its score table and its deals' replays); the finished table links here (#to-rematch).
function previousGame(table) {
  if (!table.rematch_of) return [];
  return [element("p", {}, element("a", { id: "to-previous-game", href: `/tables/${table.rematch_of}`, text: t("table_previous_game") }))];
}

// Every seat taken, and the teams chosen where the host chooses them: only his start awaited.
export function readyToStart(table) {
  return !table.seats.includes(null) && Boolean(!teamsFor(table) || table.sides);
}

// A private table's host, while a seat is free: "New invitation link" (#new-invite), since the
// link the lobby showed him once may be lost (POST /tables/{id}/invite: the old code stops
// working); then the new link (#invite-link) to copy. `state.invite`: the code he got here.
function renderInvite(state, act) {
  const { table, me } = state;
  const box = $("waiting-invite");
  const wanted = me !== null && me === table.host && table.private && table.seats.includes(null);
  const key = wanted ? `${table.id}:${state.invite ?? ""}` : "";
  if (box.dataset.drawn === key) return; // drawn already: a redraw would take the focus away
  box.dataset.drawn = key;
  if (!wanted) {
    box.replaceChildren();
    return;
  }
  const parts = [];
  if (state.invite) {
    const field = element("input", {
      id: "invite-link", type: "text", readonly: "", value: inviteLink(table.id, state.invite), "aria-label": t("private_invite_link"),
    });
    const copy = element("button", { type: "button", class: "secondary", text: t("private_copy") });
    copy.addEventListener("click", async () => {
      field.select();
      await navigator.clipboard?.writeText(field.value).catch(() => {});
    });
    parts.push(element("p", { class: "hint", text: t("table_invite_new") }), field, copy);
  }
  const again = element("button", { type: "button", id: "new-invite", class: "secondary", text: t("table_invite_button") });
  again.addEventListener("click", () => act("invite"));
  parts.push(element("p", {}, again, element("span", { class: "hint", text: ` ${t("table_invite_hint")}` })));
  box.replaceChildren(...parts);
  if (state.invite) {
    $("invite-link").focus();
    $("invite-link").select();
  }
}

function totalsTable(table) {
  const sides = Object.keys(table.totals).sort();
  const head = element("tr", {}, element("th", { scope: "col", text: t("score_deal") }),
    ...sides.map((side) => element("th", { scope: "col", title: sideNames(table, side), text: t("side", { side }) })));
  // Each deal's number links to its replay (a finished game's page is where its deals are
  // found again: the lobby's "See the results" leads here).
  const dealCell = (index) => {
    const id = table.deals?.[index];
    if (!id) return String(index + 1);
    const link = element("a", { href: `/deals/${id}/replay`, text: String(index + 1),
      "aria-label": t("table_replay_deal", { number: index + 1 }), title: t("table_replay_deal", { number: index + 1 }) });
    link.dataset.replay = String(index + 1);
    return link;
  };
  const rows = table.deal_scores.map((scores, index) => element("tr", {},
    element("th", { scope: "row" }, dealCell(index)),
    ...sides.map((side) => element("td", { text: String(scores[side] ?? 0) }))));
  const total = element("tr", { class: "total" }, element("th", { scope: "row", text: t("score_total") }),
    ...sides.map((side) => element("td", { text: String(table.totals[side]) })));
  return element("table", { class: "totals", id: "totals-table" },
    // An entry whose game also ends after so many deals says so (ponytail: 4, R-PT-GAME-1): its
    // game ended short of the target, and the caption named the target alone.
    element("caption", { text: table.max_deals
      ? t("score_totals_deals", { target: table.target, deals: table.max_deals })
      : t("score_totals", { target: table.target }) }),
    element("thead", {}, head), element("tbody", {}, ...rows, total));
}

// The totals, the end of the game (with its rematch), and the host's buttons. `act(kind)`:
// "next", "stop", or "rematch" (any seated player or the host, once the game is over).
export function renderGame(state, act) {
  const { table, view, me } = state;
  const started = table && table.status !== "open";
  $("game").hidden = !started;
  if (!started) return;
  const parts = [];
  const sides = Object.keys(table.totals).sort();
  parts.push(element("ul", { class: "sides-list" }, ...sides.map((side) => element("li", {},
    element("strong", { text: `${t("side", { side })}: ` }), sideNames(table, side)))));
  parts.push(totalsTable(table));
  if (table.status === "finished") {
    parts.push(element("p", { class: "winner", id: "winner", role: "status",
      text: t("table_winner", { winners: winnersText(table) }) }));
  }
  if (table.status === "stopped") parts.push(element("p", { class: "winner", text: t("table_stopped") }));
  if (view) {
    parts.push(element("p", {}, element("a", { id: "to-replay", href: `/deals/${view.id}/replay`, text: t("table_replay") })));
    // An auditor's way to the deal's audit (the audit route checks the role anyway).
    if (state.auditor) parts.push(element("p", {}, element("a", { id: "to-audit", href: `/audit/deals/${view.id}`, text: t("replay_audit") })));
  }
  const over = (table.status === "finished" || table.status === "stopped") && panelAction(state) !== "rematch";
  if (over && table.rematch) {
    parts.push(element("p", {}, element("a", { id: "to-rematch", href: `/tables/${table.rematch}`, text: t("table_rematch_open") })));
  } else if (over && me !== null && (me === table.host || table.seats.includes(me))) {
    const again = element("button", { type: "button", id: "rematch", text: t("table_rematch") });
    again.addEventListener("click", () => act("rematch"));
    parts.push(element("p", {}, again));
  }
  parts.push(...previousGame(table));
  if (!state.follow) {
    parts.push(element("p", {}, element("a", { id: "to-table", href: `/tables/${table.id}`, text: t("table_follow") })));
  }
  redraw($("totals"), parts);

  const host = $("host-controls");
  const isHost = me !== null && me === table.host;
  const opener = isHost || standsInForHost(table, me);
  host.hidden = !opener || table.status !== "playing";
  if (host.hidden) {
    host.replaceChildren();
    delete host.dataset.drawn;
    return;
  }
  // "Next deal" is in the move panel of a player who played the deal (panelAction).
  const dealOver = view?.phase === "over" && view.id === table.current_deal && panelAction(state) !== "next";
  // Drawn again only when they change, not on every event of the deal: a button replaced
  // between a press and its release (bots play several moves a second) loses the click.
  const drawn = JSON.stringify([document.documentElement.lang, table.id, isHost, dealOver, host.dataset.confirm]);
  if (host.dataset.drawn === drawn) return;
  host.dataset.drawn = drawn;
  const buttons = [];
  if (!isHost) { // a present player while the host is away: the next deal only
    if (dealOver) {
      const next = element("button", { type: "button", id: "next-deal", text: t("table_next_deal") });
      next.addEventListener("click", () => act("next"));
      buttons.push(element("span", { class: "hint", text: t("table_host_away") }), next);
    }
    host.replaceChildren(...buttons);
    return;
  }
  if (dealOver) {
    const next = element("button", { type: "button", id: "next-deal", text: t("table_next_deal") });
    next.addEventListener("click", () => act("next"));
    buttons.push(next);
  }
  const confirming = host.dataset.confirm === "true";
  if (confirming) {
    buttons.push(...confirmation({
      question: t("table_stop_question"),
      yes: t("table_stop_confirm"),
      no: t("table_stop_cancel"),
      yesId: "stop-confirm",
      noId: "stop-cancel",
      onYes: () => {
        host.dataset.confirm = "false";
        act("stop");
      },
      onNo: () => {
        host.dataset.confirm = "false";
        renderGame(state, act);
        $("stop-game")?.focus();
      },
    }));
  } else {
    const stop = element("button", { type: "button", id: "stop-game", class: "danger", text: t("table_stop") });
    stop.addEventListener("click", () => {
      host.dataset.confirm = "true";
      renderGame(state, act);
      $("stop-confirm")?.focus();
    });
    buttons.push(stop);
  }
  host.replaceChildren(...buttons);
}

// Once a deal is over, what comes next goes in the move panel of a player who played it: "Next
// deal" (#next-deal) if he may open it (the host, or any present player while the host is
// away), or at the game's end "Play again: open the rematch" (#rematch; "Go to the rematch",
// #to-rematch, once it is open). On a phone that panel stays at the bottom of the screen, where
// his moves were, while the game panel, their home for anybody else, is below the whole deal,
// some 2,000 px down. "next", "rematch" or null.
export function panelAction(state) {
  const { table, view, me } = state;
  if (!table || !view || view.seat === null || view.phase !== "over" || view.id !== table.current_deal) return null;
  if (table.status === "finished" || table.status === "stopped") {
    return table.rematch || (me !== null && (me === table.host || table.seats.includes(me))) ? "rematch" : null;
  }
  if (table.status !== "playing") return null;
  return (me !== null && me === table.host) || standsInForHost(table, me) ? "next" : null;
}

// The move panel at the end of a deal (panelAction): what to do, and its button or link.
export function renderPanelAction(state, act) {
  const { table } = state;
  const action = panelAction(state);
  const box = $("move-buttons");
  const key = JSON.stringify([action, state.view.id, table.host === state.me, table.rematch ?? null,
    document.documentElement.lang]);
  if (box.dataset.key === key) return; // drawn already: a redraw would lose a click
  box.dataset.key = key;
  if (action === "next") {
    $("move-hint").textContent = t(state.me === table.host ? "table_next_deal_hint" : "table_host_away");
    const next = element("button", { type: "button", id: "next-deal", text: t("table_next_deal") });
    next.addEventListener("click", () => act("next"));
    box.replaceChildren(next);
    return;
  }
  $("move-hint").textContent = table.status === "stopped" ? t("table_stopped")
    : t("table_winner", { winners: winnersText(table) });
  if (table.rematch) {
    box.replaceChildren(element("a", { id: "to-rematch", class: "button", href: `/tables/${table.rematch}`, text: t("table_rematch_open") }));
    return;
  }
  const again = element("button", { type: "button", id: "rematch", text: t("table_rematch") });
  again.addEventListener("click", () => act("rematch"));
  box.replaceChildren(again);
}
