// "Your games in play" at the top of the lobby (docs/web.md, "The lobby"): a link to each table
// in play where the signed-in player sits, so that a player back from his table on a phone finds
// it without scrolling past the forms to the tables in play, far down the page.

import { $, element, t } from "./common.js";

// Shows the tables of `tables` (any lists, a table possibly in several) in play where `me`
// sits; the panel hidden when there are none. Drawn again only when what it shows changed (the
// lobby refreshes every 3 s: a link replaced under a finger loses the tap).
export function showMyGames(tables, me) {
  const panel = $("mine-panel");
  const seen = new Set();
  const mine = me === null ? [] : tables.filter((table) => {
    if (table.status !== "playing" || !table.seats.includes(me) || seen.has(table.id)) return false;
    seen.add(table.id);
    return true;
  });
  const links = mine.map((table) => [table.id, t("table_label", {
    entry: t(`entry_${table.entry}`), players: table.players, host: table.host,
  })]);
  const drawn = JSON.stringify([document.documentElement.lang, links]);
  if (panel.dataset.drawn === drawn) return;
  panel.dataset.drawn = drawn;
  panel.hidden = links.length === 0;
  $("mine-tables").replaceChildren(...links.map(([id, label]) => element("li", {},
    element("a", { href: `/tables/${id}`, "data-table": id, text: label }))));
}
