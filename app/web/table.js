// The table page (docs/web.md, "The table page"): `/tables/{id}` shows the table's current deal
// and follows the table to its next deal; `/deals/{id}` shows that deal. A seated player (session
// cookie) sees his hand and plays from the move menu; anybody else watches the public view.
// Public API only: GET /tables/{id}, GET /deals/{id}, GET /deals/{id}/moves (seated players
// only), POST /deals/{id}/commands[/check], POST /tables/{id}/deals|stop, and the two streams.
//
// Stable hooks for tests (documented in docs/web.md):
//   document.body.dataset.ready = "true"  once the first render is done;
//   #deal .deal[data-step=N][data-phase=P][data-deal=id]  the deal shown and its step;
//   #hand [data-card="QH/2"]  hand cards (buttons with aria-pressed for a player who may act);
//   [data-meld=<rank>][data-side=A][data-meld-index=0]  melds (buttons on the player's side);
//   li[data-seat=N] (data-turn="true" on the seat to act); .pile; .stock; table.breakdown;
//   #moves [data-move=cut|draw|take_pile|meld|discard|decline_pile|pick_up_ponytail|
//           ask_partner|answer_yes|answer_no|clear|suggestion]  the move buttons; #cut-n;
//   #log li[data-step][data-kind]  one line per event (never twice, none missed);
//   #error (role=alert) a refusal, "Refused: <the rule's line or message> (<code>)", the code a link to the rules;
//   #status the situation; #to-rules the rules of the table's entry (a new tab);
//   #next-deal, #stop-game, #stop-confirm, #stop-cancel  the host's controls; #totals, #totals-table, #winner;
//   #to-replay (the deal's replay), #to-table (on /deals/{id}); #waiting (before the start;
//   #start-game, the host's);
//   #seat-panel li[data-seat-play=N][data-away], #leave-seat (#leave-confirm, #leave-cancel), #take-back, #give-player-N and
//   #give-seat-N  who plays each seat and the absent players' controls (seats.js);
//   #clock-shown[data-seconds], #clock-choice, #clock-set  the turn clock before the start;
//   #connection (role=status) "Connection lost: reconnecting..." while a stream is reopened.

import {
  $, api, rulesLink, seatNames, setUpLanguage, showWho, signedIn, spokenText, unreachable, t, winnersText,
} from "./common.js";
import { renderDeal } from "./deal_render.js";
import { followStream } from "./live.js";
import { seatName, spokenNames } from "./words.js";
import { announce, logItem } from "./table_log.js";
import { mayMeld, renderMoves } from "./table_moves.js";
import { playing } from "./table_play.js";
import { panelAction, readyToStart, renderGame, renderPanelAction, renderWaiting } from "./table_game.js";
import { awayNote, clockRuns, logNamesByEvent, renderSeats } from "./seats.js";
import { standsInForHost } from "./host.js";
import { renderClock, renderClockChoice } from "./table_clock.js";
import { showSignedOut, watchSession } from "./session_end.js";
import {
  answered, clearError, handOnScreen, keepInPlace, keepRoom, keepRoomForPanels, place, placeError, showError,
  showHandAbovePanel,
} from "./table_layout.js";

const DEAL_KINDS = [
  "Started", "DeckCut", "CardsDealt", "PonytailsDealt", "PonytailPickedUp", "CardsDrawn",
  "RedThreeLaid", "CardTurnedUp", "PlayStarted", "PartnerAsked", "PartnerAnswered", "PileTaken",
  "MeldLaid", "MeldExtended", "CardDiscarded", "WentOut", "PileDeclined", "DealScored", "DealAbandoned",
  "SeatPlayerChanged",
  "TurnTimedOut", "TurnClockRestarted",
];
const TABLE_KINDS = [
  "Created", "PlayerSeated", "TeamsChosen", "GameStarted", "DealOpened", "DealRecorded",
  "GameEnded", "GameStopped", "SeatLeft", "SeatTakenOver", "SeatTakenBack", "SeatGiven",
  "TurnClockSet",
];

const state = {
  me: null, // who the session cookie signs in, or null
  auditor: false, // his roles (GET /sessions/current) include "auditor": "Audit this deal"
  tableId: null,
  dealId: null,
  follow: false, // /tables/{id}: switch to each new deal
  table: null,
  view: null,
  menu: null,
  selected: new Set(),
  events: [], // the log's events, in order
  lastStep: 0, // the last deal step the log shows
  heardFrom: Infinity, // the deal's step when the page opened it: later events are spoken (#said)
  sentStep: 0, // the step of this player's last accepted command in the deal
  seatInDoubt: false, // his seat timed out or changed player since the view was read
  busy: false,
  turn: undefined, // the deal and step kind of his turn last drawn (showHandAbovePanel), null: not his
  invite: null, // a private table's new invite code, got on this page (its host only)
  dealSource: null, // the streams followed (live.js)
  tableSource: null,
  reconnecting: new Set(), // the streams being reopened ("deal", "table")
  tableEventId: 0, // the id of the last table event the table's stream brought
};

// The seats' names as the log says them: a bot's with its level, "bot:basic:1 (bot, basic)".
const logNames = () => seatNames(state.table);
// ... and as the deal shows them now: an absent player's with who plays for him, "bob (away:
// the basic bot (for bob) plays)"; a deal that is over, as it was played at its end (its
// own record: a player who left after it is not named away there).
const names = () => {
  if (state.view?.phase === "over" && state.events.some((event) => event.kind === "Started")) {
    const byEvent = logNamesByEvent([...state.events, { kind: "end" }], logNames(), standInsNow());
    return byEvent[byEvent.length - 1];
  }
  return logNames().map((name, seat) => (name === null ? null : name + awayNote(state.table, seat)));
};


// The move panel's heading once the deal is over (panelAction): the next deal to open, or the
// game's end with its rematch.
const MOVES_HEADING = {
  next: "move_heading_deal_over", finished: "move_heading_game_over", stopped: "move_heading_game_stopped",
};

// --- drawing ---------------------------------------------------------------------------------

// `spoken`: the words a screen reader is given, a seated bot by its short name ("Waiting for
// bot 1.", spokenNames).
function statusText(spoken = false) {
  const { view, menu, table } = state;
  if (!view) {
    if (table?.status !== "open") return "";
    // A full table (a rematch opens so, its players in their seats) waits for its host alone:
    // say so, as at the end of a deal, rather than a bare "not started yet".
    if (!readyToStart(table)) return t("table_status_open");
    return state.me === table.host ? t("table_status_ready_you") : t("table_status_ready_host", { name: table.host });
  }
  if (view.phase === "over") {
    // The game's last deal: the game is over, not only the deal.
    const last = state.dealId === table?.current_deal;
    // With its winner: a spectator's phone shows this line at the top, the game panel that
    // names the winner some 2,000 px below (a player has it in his move panel too).
    if (last && table.status === "finished") return t("table_winner", { winners: winnersText(table) });
    if (last && table.status === "stopped") return t("table_status_game_stopped");
    // Between deals, for whoever may not open the next one: who is awaited.
    const opener = state.me !== null && (state.me === table.host || standsInForHost(table, state.me));
    if (last && table.status === "playing" && !opener) {
      const hostSeat = table.seats.indexOf(table.host);
      if (hostSeat >= 0 && table.playing?.[hostSeat]?.away) return t("table_status_over_anyone");
      return t("table_status_over_host", { name: table.host });
    }
    return t("table_status_over");
  }
  const watching = view.seat === null;
  const mine = table?.seats.indexOf(state.me) ?? -1;
  if (watching && mine >= 0 && view.sitting_out.includes(mine)) return t("table_status_sitting_out");
  if (watching && mine >= 0 && table.playing?.[mine]?.away && view.id === table.current_deal) {
    // a bot plays his seat until he takes it back; after his missed turns, the page says why
    return t(table.playing[mine].reason === "missed_turns" ? "table_status_away_missed" : "table_status_away");
  }
  if (!watching && menu?.moves.length) return t("table_status_your_move");
  const asked = view.question && view.question.answer === null;
  const seat = asked ? view.question.partner : view.phase === "cut" ? view.cutter : view.turn;
  const who = spoken ? spokenNames(names()) : names();
  const waiting = seat === null ? "" : t("table_status_waiting", { name: seatName(seat, who) });
  return watching ? `${t("table_status_watching")} ${waiting}` : waiting;
}

// At a table with a clock, the player's warning during his turn when one more timeout hands
// his seat to the bot (the table's missed_turns_limit, 0: never): "... If your time runs out
// again, ...", from the deal's TurnTimedOut events (clockRuns: his turns missed in a row, as
// the server counts them); "" otherwise (and to a spectator).
function lastChance() {
  const { view, menu, table } = state;
  const limit = table?.missed_turns_limit ?? 0;
  if (!limit || !view?.deadline || view.seat === null || !menu?.moves.length) return "";
  if (view.phase === "over" || view.timed_out?.includes(view.seat)) return "";
  const missed = clockRuns(state.events).missed[view.seat] ?? 0;
  if (missed < limit - 1) return "";
  return missed ? t("table_last_chance", { count: missed }) : t("table_last_chance_first");
}

function render() {
  if ($("who").dataset.me !== String(state.me)) { // said again on a language switch (showSaid)
    $("who").dataset.me = String(state.me);
    showWho(state.me, "table_signed_out");
  }
  $("to-rules").hidden = !state.table; // the rules of the table's entry, in a new tab
  if (state.table) rulesLink($("to-rules"), state.table.entry, t(`entry_${state.table.entry}`));
  renderWaiting(state, hostAction);
  renderClockChoice(state.table, state.me, clockAction);
  renderSeats($("seat-panel"), state.table, state.me, seatAction);
  renderGame(state, hostAction);
  const { view, menu } = state;
  if (view) {
    // Cards stay selectable while a command is on its way (only the move buttons wait).
    const canPlay = menu !== null && menu.moves.length > 0;
    const meldable = canPlay && mayMeld(menu);
    const mine = state.table?.seats.indexOf(state.me) ?? -1;
    const handWas = handOnScreen();
    renderDeal($("deal"), view, {
      names: names(),
      ownSeat: view.seat === null && view.sitting_out.includes(mine) ? mine : null,
      selectable: view.hand !== null && canPlay,
      selected: state.selected,
      onCardToggle: toggle,
      onMeldClick: meldable ? addToMeld : null,
    });
    keepInPlace(handWas);
  } else {
    $("deal").replaceChildren();
  }
  const nextHere = panelAction(state) !== null; // "Next deal" or the rematch there (table_game.js)
  $("moves").hidden = !nextHere && !(view && view.seat !== null && menu && view.phase !== "over");
  if ($("moves").hidden && $("moves").contains($("error"))) placeError(false);
  // Watching a deal in play: on a phone the log's newest lines stay at the bottom of the screen
  // (table.css), the newest in sight.
  const watching = $("moves").hidden && view !== null && view.phase !== "over";
  if (document.body.classList.contains("watching") !== watching) {
    document.body.classList.toggle("watching", watching);
    $("log").scrollTop = $("log").scrollHeight;
    keepRoom();
  }
  // The panel's heading says what it holds: his move, or at a deal's end what comes next.
  const heading = t(MOVES_HEADING[panelAction(state) === "rematch" ? state.table.status : panelAction(state)] ?? "move_heading");
  if ($("moves-heading").textContent !== heading) $("moves-heading").textContent = heading;
  if (nextHere) renderPanelAction(state, hostAction);
  else if (!$("moves").hidden) {
    renderMoves({
      menu, view, names: names(), selected: state.selected, busy: state.busy, play, clear: clearSelection,
    });
  }
  // The start of his turn, or its play once he drew: his hand in sight above the move panel.
  // Not at the page's first drawing: he arrives at its top (who plays, whose turn).
  const turn = menu?.moves.length ? `${state.dealId}:${menu.phase}` : null;
  if (view && turn !== state.turn) {
    if (turn !== null && state.turn !== undefined) showHandAbovePanel();
    state.turn = turn;
  }
  const status = [statusText(), statusText(true)];
  if ($("status").dataset.said !== JSON.stringify(status)) { // announced once
    $("status").dataset.said = JSON.stringify(status);
    $("status").replaceChildren(...spokenText(...status));
  }
  renderClock(view, (seat) => seatName(seat, names()), state.table?.turn_seconds);
  // A seated player reads the turn clock in his move panel, which stays on a phone's screen
  // while he chooses (table.css); a spectator at the top of the page.
  place($("clock"), !$("moves").hidden, (node) => $("status").after(node));
  // ... and under it, in sight on a phone too, his warning before the takeover (announced once).
  const warning = lastChance();
  if ($("clock").nextElementSibling !== $("last-chance")) $("clock").after($("last-chance"));
  if ($("last-chance").textContent !== warning) $("last-chance").textContent = warning;
  $("last-chance").hidden = !warning;
}

// Each event's line names the seats as they were played then: a seat the bot played for its
// absent player is "the basic bot (for bob)" (seats.js).
function renderLog() {
  const names = logNamesByEvent(state.events, logNames(), standInsNow());
  $("log").replaceChildren(...state.events.map((event, index) => logItem(event, names[index], state.events[index - 1])));
  logShown();
}

// "What happened" is shown once it has something to say: not at a table waiting for its
// players, nor beside a refusal (a table that does not exist), as an empty panel.
function logShown() {
  $("log-panel").hidden = $("log").children.length === 0;
}

// The current deal's seats played by the bot for absent players now (the table's `playing`).
function standInsNow() {
  const { table, dealId } = state;
  if (!table || dealId !== table.current_deal) return [];
  return (table.playing ?? []).map((playing) => (playing.away ? playing.player : null));
}

// --- playing and the other actions (table_play.js) -------------------------------------------

const { toggle, clearSelection, addToMeld, play, hostAction, clockAction, seatAction } = playing(state, {
  render, refresh: () => refresh(), refreshTable: () => refreshTable(),
});

// --- reading: one refresh at a time, another queued behind it --------------------------------

const REREAD_MS = 2000; // after a read that got no answer (the server's Retry-After)

function serialised(work) {
  let running = null;
  let again = false;
  let retry = null; // the next read after one that got no answer
  return async function run() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await work();
        } catch (error) {
          showError(error);
          // Not answered (a restart, the server's database away): read again shortly, so that
          // the page catches up and takes its notice down by itself once the server answers,
          // even when no stream event comes to say so (nobody can move meanwhile).
          if (unreachable(error) && !retry) {
            retry = setTimeout(() => { retry = null; run(); }, REREAD_MS);
          }
        }
      } while (again);
    })();
    try {
      await running;
    } finally {
      running = null;
    }
  };
}

// The deal's view, and the menu for a player seated in it (never asked for anybody else).
const refresh = serialised(async () => {
  if (!state.dealId) return;
  const dealId = state.dealId;
  // A seated player's view and menu are asked for together (the menu's `expect` keeps a
  // command from a menu that trails the view harmless: it is refused as stale, R-CMD-1).
  // Before the first view, the table says: his seat, unless he is away from it (a bot plays
  // it; his menu would be refused with 403 seat_not_yours) or sits this deal out.
  const mine = (state.table?.seats ?? []).indexOf(state.me);
  // After a timeout of his turn or a change of who plays his seat (the bot takes it over
  // right after the timeout that reaches the limit of missed turns), the view is read first:
  // the menu is asked only if he still plays the seat.
  const seated = state.view
    ? state.view.seat !== null && !state.seatInDoubt
    : mine >= 0 && !state.table?.playing?.[mine]?.away;
  state.seatInDoubt = false;
  const asked = seated ? api("GET", `/deals/${dealId}/moves`) : null;
  asked?.catch(() => {});
  // Never older than his own last command, nor than the log (a server with a read replica).
  const view = await api("GET", `/deals/${dealId}`, { minStep: Math.max(state.sentStep, state.lastStep) });
  let menu = null;
  if (view.seat !== null) menu = await (asked ?? api("GET", `/deals/${dealId}/moves`));
  if (dealId !== state.dealId) return; // switched meanwhile
  answered();
  state.view = view;
  state.menu = menu;
  const hand = new Set(view.hand ?? []);
  for (const code of state.selected) if (!hand.has(code)) state.selected.delete(code);
  render();
});

const refreshTable = serialised(async () => {
  state.table = await api("GET", `/tables/${state.tableId}`);
  answered();
  const current = state.table.current_deal;
  if (state.follow && current && current !== state.dealId) {
    await openDeal(current, { news: true });
    return;
  }
  render();
});

// --- the streams -----------------------------------------------------------------------------

function onDealEvent(message) {
  const event = JSON.parse(message.data);
  if (event.step <= state.lastStep) return; // already shown (a resent event)
  state.lastStep = event.step;
  state.events.push(event);
  if ((event.kind === "TurnTimedOut" || event.kind === "SeatPlayerChanged") && event.seat === state.view?.seat) {
    state.seatInDoubt = true;
  }
  // The newest line stays in sight, unless the reader scrolled up to read older ones.
  const log = $("log");
  const following = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  if (event.kind === "SeatPlayerChanged") {
    renderLog(); // the lines before it may have named the seat's player wrongly (seats.js)
  } else {
    const names = logNamesByEvent(state.events, logNames(), standInsNow());
    log.append(logItem(event, names[names.length - 1], state.events[state.events.length - 2]));
    logShown();
  }
  if (event.step > state.heardFrom) announce(log.lastElementChild);
  if (following) log.scrollTop = log.scrollHeight;
  refresh();
}

// Follows /deals/{id}/stream (live.js: reopened by the page itself after a drop, or after a
// silence much longer than the server's heartbeats, with ?after=<the last step shown>); any
// event at or below that step is dropped should one come twice, and the view and menu are read
// again once the stream is back, so nothing is missed.
function followDeal(dealId) {
  state.dealSource = followStream({
    url: () => `/deals/${dealId}/stream${state.lastStep ? `?after=${state.lastStep}` : ""}`,
    kinds: DEAL_KINDS,
    onEvent: onDealEvent,
    onOpen: (reopened) => {
      connection("deal", true);
      if (reopened) refresh();
    },
    onEnd: () => {
      connection("deal", true);
      refresh();
    },
    onLost: (opened) => {
      connection("deal", false);
      if (!opened) checkSession(); // refused, perhaps: his session may have ended (401)
    },
  });
}

// Follows /tables/{id}/stream in the same way, with ?after=<the last table event seen>: the
// table's events are what bring the seats, the scores and the next deal. The table is read
// again whenever the stream opens.
function followTable() {
  state.tableSource = followStream({
    url: () => `/tables/${state.tableId}/stream${state.tableEventId ? `?after=${state.tableEventId}` : ""}`,
    kinds: TABLE_KINDS,
    onEvent: (message) => {
      state.tableEventId = Math.max(state.tableEventId, Number(message.lastEventId) || 0);
      refreshTable();
    },
    onOpen: () => {
      connection("table", true);
      refreshTable();
    },
    onEnd: () => {
      connection("table", true);
      refreshTable();
    },
    onLost: (opened) => {
      connection("table", false);
      if (!opened) checkSession();
    },
  });
}

// "Connection lost: reconnecting..." (#connection, on top of the screen wherever the reader is)
// while one of the streams is being reopened.
function connection(stream, up) {
  if (up) state.reconnecting.delete(stream);
  else state.reconnecting.add(stream);
  $("connection").hidden = state.reconnecting.size === 0;
}

// `news`: the deal began while the page was open (the next deal, or the first one started):
// its lines are spoken from its first, "Deal 2 of Classic begins ... Your cards: ...". They
// were not: a screen reader heard nothing of the new deal but the moves after the page had
// read it, not his new cards.
async function openDeal(dealId, { news = false } = {}) {
  state.dealSource?.close();
  state.dealSource = null;
  connection("deal", true);
  state.dealId = dealId;
  state.view = null;
  state.menu = null;
  state.selected.clear();
  state.events = [];
  state.lastStep = 0;
  state.sentStep = 0;
  state.heardFrom = Infinity;
  $("log").replaceChildren();
  logShown();
  await refresh();
  // What the stream brings up to here is not news, unless the deal is.
  state.heardFrom = news ? 0 : state.view?.step ?? 0;
  followDeal(dealId);
}

// --- signed out elsewhere (session_end.js) -----------------------------------------------------

// His session ended (name null) while the page showed him: his hand, his menu and his log
// (his private stream's lines name his own cards) leave the page at once, the browser may be
// a shared one; the streams stop, and the table is followed again as a spectator, from the
// deal's first step, if it allows spectators (a table that does not: nothing more is shown
// nor asked). Another name (signed in as somebody else in another tab): the page is his.
async function sessionEnded(name) {
  if (name !== null) {
    location.reload();
    return;
  }
  state.me = null;
  state.auditor = false;
  for (const source of [state.dealSource, state.tableSource]) source?.close();
  state.dealSource = null;
  state.tableSource = null;
  state.reconnecting.clear();
  connection("deal", true);
  state.view = null;
  state.menu = null;
  state.selected.clear();
  state.events = [];
  $("log").replaceChildren();
  $("said").replaceChildren();
  logShown();
  clearError();
  showSignedOut({
    textKey: "table_session_closed", linkKey: "table_sign_in_again", place: (notice) => $("connection").after(notice),
  });
  render();
  try {
    state.table = await api("GET", `/tables/${state.tableId}`);
  } catch {
    state.table = null; // spectators refused: the notice alone
    render();
    return;
  }
  const deal = state.follow ? state.table.current_deal : state.dealId;
  if (deal) await openDeal(deal);
  else render();
  followTable();
}

const checkSession = watchSession(() => state.me, sessionEnded);

// --- start -----------------------------------------------------------------------------------

async function main() {
  keepRoomForPanels();
  const [, kind, id] = location.pathname.match(/^\/(tables|deals)\/([0-9a-fA-F-]{36})$/) ?? [];
  // The catalogue, who is signed in and the table are asked for at once, not one by one.
  const language = setUpLanguage($("lang"), async () => {
    render();
    renderLog();
  });
  const who = signedIn();
  const table = (async () => {
    if (kind === "deals") {
      state.dealId = id;
      const view = await api("GET", `/deals/${id}`);
      state.tableId = view.table;
    } else {
      state.tableId = id;
      state.follow = true;
    }
    return api("GET", `/tables/${state.tableId}`);
  })();
  table.catch(() => {}); // its refusal is shown below, once the catalogue is there
  await language;
  const session = await who;
  state.me = session?.name ?? null;
  state.auditor = session?.roles.includes("auditor") ?? false; // only the link: /audit checks the role
  try {
    state.table = await table;
    if (state.follow && state.table.current_deal) await openDeal(state.table.current_deal);
    else if (state.dealId) await openDeal(state.dealId);
    else render();
    followTable();
  } catch (error) {
    showError(error);
    render(); // the header says who is signed in beside the refusal too
  }
  document.body.dataset.ready = "true";
}

main();
