// The host's controls in the lobby (docs/web.md): choose the teams where the entry needs them,
// start, the next deal once the last one is over, stop; and the links to a table in play
// ("Open the table" for its players, "Watch" for everybody else). Shown to the host only, but
// for the next deal, shown also to a player who plays his own seat while the host is away
// (docs/tables.md); the server refuses them to anybody else all the same (403 R-SEAT-3).

import { api, apiOnce, element, t } from "./common.js";

// The seat counts where the host names the teams (R-SEAT-2, R-SEAT-3), and the teams to pick
// from: classic at 5 (3 + 2) and 6 (3 + 3); extra_six at 6 (3 + 3, or three teams of 2).
// The API does not list them: tests/web/test_host_teams.py checks them against the rules.
const TEAM_TABLES = {
  classic: { 5: ["A", "B"], 6: ["A", "B"] },
  extra_six: { 6: ["A", "B", "C"] },
};

// What the host picked and has not sent yet, per table (seat -> team), kept across the
// lobby's refreshes, which rebuild the cards.
const drafts = new Map();

export function teamsFor(table) {
  return TEAM_TABLES[table.entry]?.[table.players] ?? null;
}

// Each seat's team: the draft, else the table's chosen sides, else A B A B ... (which is
// 3 + 2 or 3 + 3 as the entry wants).
function teamOfSeats(table, teams) {
  if (drafts.has(table.id)) return drafts.get(table.id);
  const chosen = Array.from({ length: table.players }, (_, seat) => teams[seat % 2]);
  for (const [side, seats] of Object.entries(table.sides ?? {})) {
    for (const seat of seats) chosen[seat] = side;
  }
  return chosen;
}

// The body of PUT /tables/{id}/teams: every team but the last, which is the rest.
function teamsBody(chosen, teams) {
  const named = teams.slice(0, -1).map((team) => chosen.flatMap((side, seat) => (side === team ? [seat] : [])));
  return { teams: named };
}

function teamsForm(table, teams, act, notice) {
  const chosen = teamOfSeats(table, teams);
  const form = element("fieldset", { class: "host-teams" },
    element("legend", { text: t("host_teams") }));
  if (!table.sides) form.append(element("p", { class: "hint", text: t("host_teams_needed") }));
  chosen.forEach((side, seat) => {
    const id = `host-team-${table.id}-${seat}`;
    const who = table.seats[seat] ?? t("free_seat");
    const select = element("select", { id },
      ...teams.map((team) => new Option(t("side", { side: team }), team)));
    select.value = side;
    select.addEventListener("change", () => {
      const draft = [...teamOfSeats(table, teams)];
      draft[seat] = select.value;
      drafts.set(table.id, draft);
    });
    form.append(element("div", { class: "host-team" },
      element("label", { for: id, text: `${t("seat", { number: seat + 1 })} (${who})` }), select));
  });
  const send = element("button", { type: "button", text: t("host_choose_teams") });
  send.addEventListener("click", () => act(async () => {
    await api("PUT", `/tables/${table.id}/teams`, { body: teamsBody(teamOfSeats(table, teams), teams) });
    drafts.delete(table.id);
    notice("host_teams_chosen");
  }));
  form.append(send);
  return form;
}

function button(text, action, attributes = {}) {
  const node = element("button", { type: "button", text, ...attributes });
  node.addEventListener("click", action);
  return node;
}

// The host's controls for a table of the lobby (elements to append to its card), or [] for
// anybody else. `details` is GET /tables/{id} for a table in play (to know whether its last
// deal is over); `act(action)` runs an action and refreshes; `notice(key)` says it worked.
export function hostControls(table, me, details, act, notice) {
  if (me === null) return [];
  if (me !== table.host) return standInControls(table, me, details, act, notice);
  const controls = [];
  const teams = teamsFor(table);
  if (table.status === "open") {
    if (teams) controls.push(teamsForm(table, teams, act, notice));
    if (table.free_seats === 0 && (!teams || table.sides)) {
      controls.push(button(t("start"), () => act(async () => {
        await apiOnce("POST", `/tables/${table.id}/start`);
        notice("started");
      })));
    }
  }
  if (table.status === "playing") {
    if (lastDealOver(details)) controls.push(nextDealButton(table, act, notice));
    controls.push(button(t("host_stop"), () => {
      if (!window.confirm(t("host_stop_confirm"))) return;
      act(async () => {
        await api("POST", `/tables/${table.id}/stop`);
        notice("host_stopped");
      });
    }, { class: "danger" }));
  }
  return controls;
}

// The link to a table in play: its players open it, everybody else watches it.
export function tableLink(table, me) {
  const seated = me !== null && table.seats.includes(me);
  return element("a", {
    class: "button",
    href: `/tables/${table.id}`,
    text: t(seated ? "open_table" : "host_watch"),
  });
}

// A player who stands in for an absent host sees the next deal only, as on the table page.
function standInControls(table, me, details, act, notice) {
  if (table.status !== "playing" || !standsInForHost(details ?? table, me) || !lastDealOver(details)) {
    return [];
  }
  return [element("span", { class: "hint", text: t("table_host_away") }), nextDealButton(table, act, notice)];
}

function lastDealOver(details) {
  const deals = details?.deals ?? [];
  return Boolean(details) && deals.length > 0 && details.deal_scores.length === deals.length;
}

function nextDealButton(table, act, notice) {
  return button(t("host_next_deal"), () => act(async () => {
    await apiOnce("POST", `/tables/${table.id}/deals`);
    notice("host_next_deal_started");
  }));
}

// Whether `me` may open the next deal in the host's stead: the bot plays the host's seat and
// `me` plays his own (docs/tables.md, "The next deal while the host is away"). `table` is a
// lobby row (its `away` seats) or GET /tables/{id} (its `playing`).
export function standsInForHost(table, me) {
  const hostSeat = table.seats.indexOf(table.host);
  const mine = me === null ? -1 : table.seats.indexOf(me);
  const away = (seat) => (table.away ? table.away.includes(seat) : Boolean(table.playing?.[seat]?.away));
  return hostSeat >= 0 && mine >= 0 && mine !== hostSeat && away(hostSeat) && !away(mine);
}

// GET /tables/{id} of the tables in play whose next deal `me` may open (the lobby's rows do
// not say whether the last deal is over): those he hosts, and those whose host is away while
// he plays his own seat. id -> table.
export async function hostedDetails(tables, me) {
  const hosted = tables.filter((table) => me !== null && (table.host === me || standsInForHost(table, me)));
  const answers = await Promise.all(hosted.map((table) => api("GET", `/tables/${table.id}`)));
  return new Map(answers.map((details) => [details.id, details]));
}

// Whether the host is choosing teams or a bot's level right now (a refresh would close his
// menu).
export function choosing() {
  return Boolean(document.activeElement?.closest?.(".host-teams select, .host-bots select"));
}
