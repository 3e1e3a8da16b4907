// The lobby (docs/web.md): sign up or in, list the open tables and those in play, create a
// table, take a seat; the host's controls are in host.js. Public API only; signed in by the
// session cookie (docs/browsers.md), so the token lives in this page only between
// POST /players and POST /sessions.

import {
  $, Refused, api, apiOnce, botNote, element, setUpLanguage, showWho, t, whoAmI, winnersText,
} from "./common.js";
import { botControls, setUpPractice } from "./bots.js";
import { choosing, hostControls, hostedDetails, tableLink } from "./host.js";
import {
  clearError, clearMessages, errorBox, notice, noticeBox, placeBoxes, placeFor, pressedPlace,
  showError, showPlaced,
} from "./lobby_messages.js";
import { ENTRIES, createBody, fillEntries, setUpCreate } from "./lobby_create.js";
import { showMyGames } from "./lobby_mine.js";
import {
  goToInvitation, privateTables, rememberTable, setUpPrivate, showInvited,
} from "./private.js";

const POLL_MS = 3000;

let me = null; // the signed-in player's name, or null
// Bumped when the page is drawn in another language: every card is drawn again.
let drawing = 0;
let pollTimer = null;

// Redraws what the page built itself in the chosen language.
function translate() {
  document.title = t("title");
  drawing += 1;
  fillEntries();
  for (const option of $("practice-level").options) option.text = t(`bot_level_${option.value}`);
  for (const option of $("create-clock").options) {
    option.text = option.value ? t("clock_seconds", { seconds: option.value }) : t("clock_off");
  }
  showAccount();
}

// Runs an action from a form or button: messages cleared first, a refusal shown, the lists
// refreshed afterwards.
async function act(action) {
  const place = pressedPlace();
  clearMessages();
  try {
    await action();
  } catch (error) {
    if (!(await sessionEnded(error))) showError(error, place);
  }
  await refresh();
  // The refresh may have drawn the card anew: the message stays in it, and in sight.
  showPlaced(errorBox);
  showPlaced(noticeBox);
}

// --- signing up and in --------------------------------------------------------------------------

// "Signed in as ..." as on every page (common.js), nothing for a visitor; and the account's
// controls: the forms to sign up or in for a visitor, the rest for a player.
function showAccount() {
  showWho(me, null);
  $("sign-out").hidden = me === null;
  $("sign-out-others").hidden = me === null;
  $("new-token").hidden = me === null;
  if (me === null) $("new-token-box").hidden = true;
  $("account").hidden = me !== null;
  $("create").hidden = me === null;
  $("join-private").hidden = me === null;
  showInvited(me !== null);
}

async function findWho() {
  me = await whoAmI(); // null: no session, or it ended: signed out
  showAccount();
}

// Who the server says this browser signs in (`name`, null: nobody), against whom the page
// shows: the session may have ended elsewhere (signed out on another page, expired, or closed
// with the account's tokens: POST /me/token, docs/browsers.md). Nobody any more: the page
// says so and shows the forms to sign in.
function sessionSeen(name) {
  if (name === me) return;
  me = name;
  showAccount();
  if (me === null) {
    clearMessages();
    notice("session_closed");
  }
}

// A refusal as not signed in (401) while the page shows a player: asks who it is again (the
// server then clears a cookie it no longer knows). True if the session has ended.
async function sessionEnded(error) {
  if (error?.status !== 401 || me === null) return false;
  sessionSeen(await whoAmI());
  return me === null;
}

// Opens a browser session with the token; from here on the cookie stands for it.
async function signIn(token) {
  me = (await api("POST", "/sessions", { token })).name;
  showAccount();
}

// What a name may be (R-CMD-2, domain/accounts.py's NAME_PATTERN: tests/web/test_sign_up_name.py
// checks they agree). A name in the player's own script ("Иван", "สมชาย") was sent and refused
// in English, "body.name: a name is 1 to 32 ASCII letters ..."; the page says it in his
// language before sending anything.
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

async function signUp(event) {
  event.preventDefault();
  const name = $("sign-up-name").value.trim();
  await act(async () => {
    if (!NAME_PATTERN.test(name)) {
      const refused = new Refused(400, "R-CMD-2", t("sign_up_name_refused", { name }));
      refused.local = true; // said in the player's language already (common.js)
      throw refused;
    }
    const created = await apiOnce("POST", "/players", { body: { name } });
    // Shown once, then forgotten by the page: only the box holds it until it is dismissed.
    $("token-shown").value = created.token;
    $("token-box").hidden = false;
    await signIn(created.token);
    $("sign-up-form").reset();
    $("token-shown").focus();
    $("token-shown").select();
  });
}

// The page a table page sent him from when his session ended there (`/?back=/tables/<id>`,
// session_end.js): a table's, a deal's, its replay's or its audit's page of this site only.
function backTo() {
  const back = new URLSearchParams(location.search).get("back") ?? "";
  const shape = back.replaceAll(/[0-9a-fA-F-]{36}/g, "U");
  return /^\/(tables\/U|deals\/U(\/replay)?|audit\/deals\/U)$/.test(shape) ? back : null;
}

async function signInAgain(event) {
  event.preventDefault();
  const field = $("sign-in-token");
  await act(async () => {
    await signIn(field.value.trim());
    field.value = "";
    const back = backTo();
    if (back) location.assign(back); // back at his table
    else goToInvitation();
  });
}

async function signOut() {
  await act(async () => {
    await api("DELETE", "/sessions");
    me = null;
    showAccount();
    notice("signed_out");
  });
}

// Signs out every other browser of the account (another device, or one a leaked cookie signed
// in), this one staying signed in: DELETE /sessions?others=true (docs/browsers.md).
async function signOutOthers() {
  await act(async () => {
    await api("DELETE", "/sessions?others=true");
    notice("others_signed_out");
  });
}

// A new token for a player signed in here (his token leaked, or he lost it): asked first, as
// every earlier token stops working at once (POST /me/token, docs/api.md "Replacing a token"),
// then shown once, as at sign-up.
function askNewToken() {
  clearMessages();
  $("new-token-box").hidden = false;
  $("new-token-no").focus(); // the safe answer, as the table page's confirmations
}

function keepToken() {
  $("new-token-box").hidden = true;
  $("new-token").focus();
}

async function replaceToken() {
  await act(async () => {
    const made = await api("POST", "/me/token");
    $("new-token-box").hidden = true;
    $("token-shown").value = made.token;
    $("token-box").hidden = false;
    $("token-shown").focus();
    $("token-shown").select();
  });
}

function tokenSaved() {
  $("token-shown").value = "";
  $("token-box").hidden = true;
  if (!goToInvitation()) $("create-entry").focus();
}

// --- the lists ---------------------------------------------------------------------------------

function tableCard(table, details) {
  const entry = t(`entry_${table.entry}`);
  const heading = t("table_label", { entry, players: table.players, host: table.host });
  const card = element("article", { class: "table-card", "aria-label": heading });
  card.dataset.table = table.id;
  const notes = [t(`status_${table.status}`)];
  if (table.status === "open") notes.push(t("free_seats", { count: table.free_seats }));
  // A game that also ends after so many deals says so (ponytail: 4, R-PT-GAME-1), as the
  // table page's score table does.
  const deals = ENTRIES[table.entry]?.max_deals;
  notes.push(deals ? t("target_deals_note", { target: table.target, deals }) : t("target_note", { target: table.target }));
  if (table.options?.always_frozen) notes.push(t("frozen_note"));
  if (table.private) notes.push(t("private_note"));
  if (table.spectators === false) notes.push(t("private_no_spectators_note"));
  // The turn clock (docs/tables.md): "60 seconds a turn", or "no clock".
  notes.push(table.turn_seconds ? t("clock_seconds", { seconds: table.turn_seconds }) : t("clock_off"));
  // How long ago its last move was (the lobby's last_move_at, up to a minute early), while
  // the game is to be played.
  const moved = (table.status === "open" || table.status === "playing") && table.last_move_at;
  if (moved) notes.push(lastMoveAgo(table.last_move_at));
  card.append(
    element("h3", { text: heading }),
    element(
      "p",
      { class: "meta" },
      element("span", { class: `status status-${table.status}`, text: notes[0] }),
      ` · ${notes.slice(1, moved ? -1 : undefined).join(" · ")}`,
      ...(moved ? [" · ", element("time", { class: "last-move", datetime: table.last_move_at, text: notes.at(-1) })] : []),
    ),
  );

  const seats = element("ul", { class: "seats", "aria-label": t("seats") });
  table.seats.forEach((name, index) => {
    const label = t("seat", { number: index + 1 });
    const who = name === null
      ? element("span", { class: "free", text: t("free_seat") })
      : `${name}${name === me ? ` (${t("you")})` : ""}${botNote(table, index)}`;
    // A name too long to sit beside its label whole (up to 32 letters, no space) is broken
    // anywhere (style.css, .seat-long), from the label's line on: it began on the next line.
    const whoNode = typeof who === "string" && name.length > 16 && !name.includes(" ")
      ? element("span", { class: "seat-long", text: who }) : who;
    const side = Object.entries(table.sides ?? {}).find(([, members]) => members.includes(index));
    // Whole, and kept on the line of the word before it (style.css): "· Side A" went onto a
    // line of its own under a long name.
    const team = side ? [element("span", { class: "seat-side", text: ` · ${t("side", { side: side[0] })}` })] : [];
    // A seat the bot plays for its absent player: the lobby's `away`, or (a table read with
    // GET /tables/{id}) its `playing`; only while the game goes on (once it is over nobody
    // plays any more).
    const live = table.status === "playing";
    const away = live && (table.away ? table.away.includes(index) : Boolean(table.playing?.[index]?.away));
    const note = away ? [" · ", element("span", { class: "away", text: t("lobby_seat_away") })] : [];
    // A no-break space after the colon: the label stays on the line of the name's first word.
    // The label itself is never broken (style.css, .seat-label): it read "Место" / "1: wanda".
    const item = element("li", { class: "seat" },
      element("span", { class: "seat-label", text: `${label}:\u00a0` }), whoNode, ...note, ...team);
    if (away) item.dataset.away = "true";
    seats.append(item);
  });
  const facts = element("dl", {}, element("dt", { text: t("seats") }),
    element("dd", {}, seats));
  if (table.totals) {
    // Each side's score whole (style.css, .score): "Команда" / "B: 0" read as two things.
    const scores = Object.entries(table.totals).flatMap(([side, total], index) => [
      ...(index ? [" · "] : []), element("span", { class: "score", text: `${t("side", { side })}: ${total}` })]);
    facts.append(element("dt", { text: t("scores") }), element("dd", { class: "scores" }, ...scores));
  }
  card.append(facts);
  // Who won a finished game, named as the table page names them: "Won by Side A (ann, cid)".
  // The card showed the totals alone, and a reader had to compare them (and know the target).
  // A line of its own, not a term of the list: a long word there ("Победитель") widened the
  // terms' column and squeezed every seat onto three lines of a phone.
  if (table.status === "finished" && table.winners?.length) {
    card.append(element("p", { class: "winners", text: t("lobby_won_by", { winners: winnersText(table) }) }));
  }

  const actions = element("div", { class: "actions" });
  const seated = me !== null && table.seats.includes(me);
  if (me !== null && table.status === "open" && !seated && table.free_seats > 0) {
    const take = element("button", { type: "button", text: t("take_seat") });
    take.addEventListener("click", () => act(async () => {
      const { seat } = await api("POST", `/tables/${table.id}/seats`, { body: {} });
      rememberTable(table.id); // kept in "your private tables" if it allows no spectators
      notice("seated", { seat: seat + 1 });
    }));
    actions.append(take);
  }
  actions.append(...hostControls(table, me, details.get(table.id), act, notice));
  actions.append(...botControls(table, me, act, notice));
  if (table.status === "playing") actions.append(tableLink(table, me));
  if (table.status === "finished" || table.status === "stopped") {
    // The table page shows the last deal's breakdown, the totals and the winner, and links
    // to each deal's replay.
    actions.append(element("a", { class: "button", href: `/tables/${table.id}`, text: t("see_results") }));
  }
  if (actions.childElementCount > 0) card.append(actions);
  nameAfterTable(actions, heading);
  return element("li", {}, card);
}

// Every card has its "Open the table", "Watch", "Take a seat"...: a screen reader's list of
// links and buttons read the same names over and over. Each is named after its table too,
// its own words first ("Watch: classic table, 4 players, host ann").
function nameAfterTable(actions, heading) {
  for (const control of actions.querySelectorAll("a, button")) {
    const own = control.textContent.trim();
    if (own && !control.hasAttribute("aria-label")) control.setAttribute("aria-label", `${own}: ${heading}`);
  }
}

// What a table's card shows, as text: a card whose text is unchanged is kept as it is.
function cardKey(table, details) {
  const live = table.status === "open" || table.status === "playing";
  const moved = live && table.last_move_at ? lastMoveAgo(table.last_move_at) : "";
  return JSON.stringify([drawing, me, table, details.get(table.id) ?? null, moved]);
}

// Shows `tables` in the list `listId`, changing only the cards whose data changed (keyed by
// table id): the lobby polls every 3 s, and a card replaced between a press and its release
// loses the click or tap (a button or link detached from the page does nothing).
function showTables(listId, tables, details = new Map()) {
  const list = $(listId);
  // Keep the keyboard focus where it was across a refresh (a button of the same table).
  const focused = document.activeElement;
  const focusTable = focused?.closest?.(`#${listId} [data-table]`)?.dataset.table;
  const focusText = focused?.textContent;
  const shown = new Map([...list.children].map((item) => [item.drawnFrom, item]));
  const empty = `empty ${drawing}`;
  const items = tables.length === 0
    ? [shown.get(empty) ?? Object.assign(element("li", { class: "empty", text: t("no_tables") }), { drawnFrom: empty })]
    : tables.map((table) => {
      const key = cardKey(table, details);
      const kept = shown.get(key);
      if (kept) return kept;
      const item = tableCard(table, details);
      item.drawnFrom = key; // what it was drawn from (a property, not in the page's HTML)
      return item;
    });
  // In place: the cards gone first, so that a card already at its place is not moved (nor
  // detached).
  for (const child of [...list.children]) if (!items.includes(child)) child.remove();
  items.forEach((item, index) => {
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] ?? null);
  });
  if (focusTable && document.activeElement !== focused) { // its card drawn anew, or moved
    const again = [...list.querySelectorAll(`[data-table="${focusTable}"] button, [data-table="${focusTable}"] a`)]
      .find((node) => node.textContent === focusText);
    again?.focus();
  }
}

// "last move 3 minutes ago": whole minutes under an hour, hours under a day, then days, in
// the reader's language and its plural forms (a clock of the browser ahead of the server's
// shows no move in the future).
function lastMoveAgo(when) {
  const seconds = Math.max(0, (Date.now() - Date.parse(when)) / 1000);
  if (seconds < 60) return t("last_move_now");
  if (seconds < 3600) return t("last_move_minutes", { count: Math.floor(seconds / 60) });
  if (seconds < 86400) return t("last_move_hours", { count: Math.floor(seconds / 3600) });
  return t("last_move_days", { count: Math.floor(seconds / 86400) });
}

let refreshing = null;
// The games played that the lobby lists: the newest, finished or stopped.
const PLAYED_SHOWN = 10;
// The idle tables in play shown under their heading: those with the latest moves.
const IDLE_SHOWN = 20;

// The tables in play without a move for the server's idle time (GET /tables?idle=true),
// folded under their heading below the live ones; hidden when there are none.
function showIdle(idle, details) {
  $("idle-panel").hidden = idle.length === 0;
  const key = idle.length >= IDLE_SHOWN ? "idle_tables_more" : "idle_tables";
  $("idle-summary").textContent = t(key, { count: idle.length });
  showTables("idle-tables", idle, details);
}

function played(finished, stopped) {
  const newest = (table) => table.updated_at ?? table.created_at ?? "";
  return [...finished, ...stopped].sort((a, b) => (newest(a) < newest(b) ? 1 : -1)).slice(0, PLAYED_SHOWN);
}

async function refresh() {
  // One refresh at a time; a call during one waits for it.
  if (refreshing) return refreshing;
  refreshing = (async () => {
    try {
      // The tables in play by their last move, the latest first: the live ones, then the
      // idle ones apart (docs/web.md).
      // And, while a player is shown, whether his session still signs him in (unless the
      // page signed in or out meanwhile: the answer is then of before).
      const shown = me;
      const [open, playing, idle, finished, stopped, current] = await Promise.all([
        api("GET", "/tables?status=open"),
        api("GET", "/tables?status=playing&idle=false"),
        api("GET", `/tables?status=playing&idle=true&limit=${IDLE_SHOWN}`),
        api("GET", `/tables?status=finished&limit=${PLAYED_SHOWN}`),
        api("GET", `/tables?status=stopped&limit=${PLAYED_SHOWN}`),
        shown === null ? null : api("GET", "/sessions/current"),
      ]);
      if (current !== null && me === shown) sessionSeen(current.name ?? null);
      const details = await hostedDetails([...playing, ...idle], me);
      // The server answers again (after a restart): "could not be reached" is over.
      if (errorBox.dataset.unreachable === "true") clearError();
      showTables("open-tables", open);
      showTables("playing-tables", playing, details);
      showIdle(idle, details);
      showTables("finished-tables", played(finished, stopped));
      const mine = me === null ? [] : await privateTables();
      $("private-panel").hidden = mine.length === 0;
      showTables("private-tables", mine, new Map(mine.map((table) => [table.id, table])));
      showMyGames([...playing, ...idle, ...mine], me);
      placeBoxes(); // into their table's card, drawn anew or not
    } catch (error) {
      if (!(await sessionEnded(error))) showError(error);
    } finally {
      refreshing = null;
      // How many refreshes are drawn (the tests wait for the next one, not for a guess).
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed ?? 0) + 1);
    }
  })();
  return refreshing;
}

function poll() {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(async () => {
    // Not while the page is hidden, nor while the host has a team menu open.
    if (!document.hidden && !choosing()) await refresh();
    poll();
  }, POLL_MS);
}

// --- start ---------------------------------------------------------------------------------------

async function main() {
  await setUpLanguage($("lang"), async () => {
    translate();
    await refresh();
  });
  translate();
  $("sign-up-form").addEventListener("submit", signUp);
  $("sign-in-form").addEventListener("submit", signInAgain);
  $("sign-out").addEventListener("click", signOut);
  $("sign-out-others").addEventListener("click", signOutOthers);
  $("token-done").addEventListener("click", tokenSaved);
  $("new-token").addEventListener("click", askNewToken);
  $("new-token-yes").addEventListener("click", replaceToken);
  $("new-token-no").addEventListener("click", keepToken);
  // Escape says no, as on the table page's questions: it did nothing here.
  $("new-token-box").addEventListener("keydown", (event) => event.key === "Escape" && keepToken());
  setUpCreate(act);
  setUpPrivate(act, notice);
  setUpPractice(createBody, (error) => {
    clearMessages();
    showError(error, placeFor($("practice-button")));
  });
  await findWho();
  await refresh();
  document.body.dataset.ready = "true";
  poll();
}

main();
