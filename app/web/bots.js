// Bots in the lobby (docs/bots.md, docs/web.md): a seat's bot and level, the host's "Add a bot"
// for each free seat of his open table, and "Practice against bots" in the create form
// (POST /tables/practice: the player and bots, started at once; the page then opens the table).

import { $, apiOnce, element, t } from "./common.js";

export const BOT_LEVELS = ["basic", "strong", "random"];

function levelSelect(id) {
  return element("select", { id },
    ...BOT_LEVELS.map((level) => new Option(t(`bot_level_${level}`), level)));
}

// The level the host chose per table (table id -> level), kept across the lobby's refreshes.
const levels = new Map();

// The host's "Add a bot" controls for his open table: a level and one button per free seat.
export function botControls(table, me, act, notice) {
  if (me === null || me !== table.host || table.status !== "open" || table.free_seats === 0) return [];
  const id = `bot-level-${table.id}`;
  // The level he chose survives the lobby's refreshes, which rebuild the cards.
  const select = levelSelect(id);
  select.value = levels.get(table.id) ?? BOT_LEVELS[0];
  select.addEventListener("change", () => levels.set(table.id, select.value));
  const form = element("fieldset", { class: "host-bots" },
    element("legend", { text: t("bot_add") }),
    element("label", { for: id, text: t("bot_level") }), select);
  table.seats.forEach((name, seat) => {
    if (name !== null) return;
    const add = element("button", { type: "button", text: t("bot_add_seat", { number: seat + 1 }) });
    add.addEventListener("click", () => act(async () => {
      const bot = $(id).value;
      await apiOnce("POST", `/tables/${table.id}/seats`, { body: { seat, bot } });
      notice("bot_added", { seat: seat + 1 });
    }));
    form.append(add);
  });
  return [form];
}

// The create form's practice game: the form's entry, players, options and target, the level.
export function setUpPractice(formBody, showError) {
  const field = $("practice-level");
  field.replaceChildren(...BOT_LEVELS.map((level) => new Option(t(`bot_level_${level}`), level)));
  $("practice-button").addEventListener("click", async () => {
    try {
      const body = { ...formBody(), bot: field.value };
      const { table } = await apiOnce("POST", "/tables/practice", { body });
      window.location.assign(`/tables/${table}`);
    } catch (error) {
      showError(error);
    }
  });
}
