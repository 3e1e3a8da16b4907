// The table page's playing (docs/web.md, "The table page"): what a player sends from the page
// and its outcome. His moves: the hand cards he selects; a command composed from them (an
// addition to a meld, table_moves.js) is dry-run first (POST /deals/{id}/commands/check) and
// not sent when it would be refused; every command is sent with the menu's `expect` and
// `next_seq` (POST /deals/{id}/commands). And his other actions: the host's (start, next deal,
// stop, invite, rematch; the turn clock) and his seat's (leave, take back, give; seats.js).
// A refusal is said in the move panel or at the top of the page (table_layout.js); the table
// or the deal is read again after each.
//
//   playing(state, { render, refresh, refreshTable })
//     -> { toggle, clearSelection, addToMeld, play, hostAction, clockAction, seatAction }
//
// `state`: the page's (table.js; its menu, dealId, tableId, selected, busy, sentStep and
// invite are read and kept here); `render()` draws the page again, `refresh()` reads the
// deal's view and menu, `refreshTable()` the table.

import { $, Refused, api, apiOnce, t } from "./common.js";
import { composeAddition, limitRefusal } from "./table_moves.js";
import { clearError, showError } from "./table_layout.js";

export function playing(state, { render, refresh, refreshTable }) {
  function toggle(code) {
    if (state.selected.has(code)) state.selected.delete(code);
    else state.selected.add(code);
    render();
  }

  function clearSelection() {
    state.selected.clear();
    render();
  }

  function addToMeld(side, rank) {
    if (state.selected.size === 0) {
      showError(new Refused(0, "selection", () => t("move_select_first")), { move: true });
      return;
    }
    const { command, problem } = composeAddition([...state.selected], rank, state.menu.meld_limits, state.menu.melds);
    play(command, { check: true, problem, onto: rank });
  }

  // Sends a command with the menu's expect and next_seq; a composed one is dry-run first
  // (POST /deals/{id}/commands/check) and not sent when it would be refused. `problem`: its
  // melds break the entry's meld limits (composeMelds): said at once, nothing is sent.
  async function play(command, { check = false, problem = null, onto = null } = {}) {
    const { menu, dealId } = state;
    if (!menu || state.busy) return;
    clearError();
    if (problem) return showError(limitRefusal(problem, onto), { move: true });
    state.busy = true;
    // The cards this command was composed from; a card selected while it is on its way (the
    // live log may show the move before its answer comes) stays selected for the next one.
    const sent = [...state.selected];
    render();
    try {
      if (check) {
        const verdict = await api("POST", `/deals/${dealId}/commands/check`, { body: { expect: menu.expect, command } });
        if (!verdict.accepted) {
          throw new Refused(400, verdict.error.code, verdict.error.message, verdict.error);
        }
      }
      const answer = await api("POST", `/deals/${dealId}/commands`, { body: { seq: menu.next_seq, expect: menu.expect, command } });
      if (dealId === state.dealId) state.sentStep = Math.max(state.sentStep, answer.step);
      for (const code of sent) state.selected.delete(code);
    } catch (error) {
      // R-CMD-1: the page was behind (a move from another tab or device, a dropped stream); the
      // refresh below catches it up, and the player says it in his own words, not the rule's.
      // Lost to his turn clock (the timeout recorded first, or his command came during the
      // rest of his timed-out turn, turn_timed_out): said so, not "your page was behind".
      if (error instanceof Refused && (error.code === "R-CMD-1" || error.code === "turn_timed_out")) {
        const late = error.code === "turn_timed_out" || await timedOutAfter(dealId, menu.step, menu.seat);
        showError(late ? new Refused(0, "timed_out", () => t("table_timed_out_you"))
          : new Refused(0, "stale", () => t("table_stale")), { move: true });
      } else showError(error, { move: true });
      // His buttons back at once, even when the refresh below gets no answer either (the server's
      // database away). Not after an accepted command: its menu is spent until the refresh.
      state.busy = false;
      render();
    } finally {
      state.busy = false;
    }
    await refresh();
  }

  // Whether the clock timed out the turn of `seat` after `step` (the deal's events since).
  async function timedOutAfter(dealId, step, seat) {
    if (seat === null || seat === undefined) return false;
    try {
      const events = await api("GET", `/deals/${dealId}/events?after=${step}`);
      return events.some((event) => event.kind === "TurnTimedOut" && event.seat === seat);
    } catch {
      return false; // the plain refusal, then
    }
  }

  async function hostAction(kind) {
    clearError();
    try {
      if (kind === "next") await apiOnce("POST", `/tables/${state.tableId}/deals`);
      if (kind === "stop") await api("POST", `/tables/${state.tableId}/stop`);
      if (kind === "start") await apiOnce("POST", `/tables/${state.tableId}/start`);
      if (kind === "invite") {
        // A private table's new invite code, shown this once (docs/tables.md): the old one stops
        // working.
        state.invite = (await api("POST", `/tables/${state.tableId}/invite`)).invite;
      }
      if (kind === "rematch") {
        // The same players in the same seats, at a new open table (docs/tables.md, "Rematch").
        const { id } = await apiOnce("POST", `/tables/${state.tableId}/rematch`);
        window.location.assign(`/tables/${id}`);
        return;
      }
    } catch (error) {
      showError(error, { move: kind === "next" }); // said where "Next deal" was pressed
    }
    await refreshTable();
  }

  // The host changes the turn clock before the start (table_clock.js).
  async function clockAction(seconds) {
    clearError();
    try {
      await api("PUT", `/tables/${state.tableId}/clock`, { body: { turn_seconds: seconds } });
    } catch (error) {
      showError(error);
    }
    await refreshTable();
  }

  // A leave, a seat taken back or given (seats.js); then the table and the deal read again.
  async function seatAction(method, path, body, noticeKey) {
    clearError();
    try {
      await api(method, path, { body });
      if (noticeKey) $("status").textContent = t(noticeKey);
    } catch (error) {
      showError(error);
    }
    await refreshTable();
    await refresh();
  }

  return { toggle, clearSelection, addToMeld, play, hostAction, clockAction, seatAction };
}
