// The table page's log (docs/web.md): one line per event of the deal's stream, in the words
// of words.js (the same sentences as the replay and the audit). The stream tells each viewer
// only what he may see (a player's own drawn cards, nobody else's), and so does the log.

import { $, element, spokenText } from "./common.js";
import { describeEvent, sayEvent } from "./words.js";

// The log's line for one event (li[data-step][data-kind]); `names` per room seat; `previous`,
// the event before it (a replacement says which three it replaced).
export function logItem(event, names, previous = null) {
  // Its cards printed ("Q♥") and, for a screen reader, spoken ("queen of hearts").
  const item = element("li", {},
    ...spokenText(describeEvent(event, names, null, previous), sayEvent(event, names, null, previous)));
  item.dataset.step = String(event.step);
  item.dataset.kind = event.kind;
  return item;
}

// How many of the latest lines the spoken log (#said) keeps: enough for a bot's turn.
const SAID_LINES = 4;

// Says a line of the log to a screen reader (#said, role=log: each line added is read once,
// politely): a move made since the page opened, never the deal's earlier lines nor the whole
// log drawn again (a language switch, a seat changing player).
export function announce(item) {
  const said = $("said");
  said.append(element("p", { text: item.lastChild.textContent })); // its spoken words (spokenText)
  while (said.children.length > SAID_LINES) said.firstChild.remove();
}
