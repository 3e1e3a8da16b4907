// The lobby's form to create a table (docs/web.md, "The lobby"): the entries it offers, their
// player counts and targets, the body of POST /tables (also the practice game's, bots.js).

import { $, apiOnce, rulesLink, t } from "./common.js";
import { notice } from "./lobby_messages.js";
import { privacyBody, rememberTable, showInvite } from "./private.js";

// The entries, the player counts each is played by (R-SEAT-1) and their targets (R-GAME-1);
// only modern_american lets the host choose one. The API does not list them:
// tests/web/test_lobby_entries.py checks them against the rules.
export const ENTRIES = {
  classic: { players: [2, 3, 4, 5, 6], target: 5000, targets: [], max_deals: null },
  extra_six: { players: [6], target: 10000, targets: [], max_deals: null },
  modern_american: { players: [4], target: 8500, targets: [2500, 5000, 7500, 10000], max_deals: null },
  ponytail: { players: [4], target: 50000, targets: [], max_deals: 4 },
};
// The player count the form offers first, where the entry is played by it.
const USUAL_PLAYERS = 4;

export function fillEntries() {
  const select = $("create-entry");
  const chosen = select.value || "classic";
  select.replaceChildren(
    ...Object.keys(ENTRIES).map((entry) => new Option(t(`entry_${entry}`), entry)),
  );
  select.value = chosen;
  fillTargets();
}

// What the chosen entry is, in a line, and the link to its rules (docs/rules/, served at
// /rules/{entry}; a new tab, so that the form keeps what the player chose); the same for the
// option always_frozen.
function explainEntry() {
  const entry = $("create-entry").value;
  $("entry-summary-text").textContent = t(`entry_summary_${entry}`);
  rulesLink($("entry-rules"), entry, t(`entry_${entry}`));
  rulesLink($("frozen-rules"), "always_frozen", t("rules_always_frozen"));
}

// The player counts the chosen entry is played by, and no other: the one chosen if the entry
// allows it, else 4, else the entry's only count (the server refused the others, R-SEAT-1).
function fillPlayers() {
  const { players } = ENTRIES[$("create-entry").value];
  const select = $("create-players");
  const chosen = Number(select.value) || USUAL_PLAYERS;
  const fallback = players.includes(USUAL_PLAYERS) ? USUAL_PLAYERS : players[0];
  select.replaceChildren(...players.map((count) => new Option(String(count), String(count))));
  select.value = String(players.includes(chosen) ? chosen : fallback);
}

function fillTargets() {
  explainEntry();
  fillPlayers();
  const entry = ENTRIES[$("create-entry").value];
  const select = $("create-target");
  select.replaceChildren(
    new Option(t("target_default", { target: entry.target }), ""),
    ...entry.targets.map((target) => new Option(String(target), String(target))),
  );
  $("create-target-field").hidden = entry.targets.length === 0;
}

export function createBody() {
  const body = {
    entry: $("create-entry").value,
    players: Number($("create-players").value),
    options: { always_frozen: $("create-frozen").checked },
    ...privacyBody(),
    // The turn clock (docs/tables.md): seconds a turn, or none.
    turn_seconds: $("create-clock").value ? Number($("create-clock").value) : null,
  };
  if ($("create-target").value) body.target = Number($("create-target").value);
  return body;
}

async function createTable(event, act) {
  event.preventDefault();
  const body = createBody();
  await act(async () => {
    const created = await apiOnce("POST", "/tables", { body });
    if (created.invite) showInvite(created.id, created.invite);
    else rememberTable(created.id);
    notice("created");
  });
}

// The form's controls; `act` runs an action as the lobby's other forms do (lobby.js).
export function setUpCreate(act) {
  $("create-entry").addEventListener("change", fillTargets);
  $("create-form").addEventListener("submit", (event) => createTable(event, act));
}
