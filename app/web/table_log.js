// The table page's log (docs/web.md): one line per event of the deal's stream, in the words
// of words.js (the same sentences as the replay and the audit). The stream tells each viewer
// only what he may see (a player's own drawn cards, nobody else's), and so does the log.

import { element } from "./common.js";
import { describeEvent } from "./words.js";

// The log's line for one event (li[data-step][data-kind]); `names` per room seat; `previous`,
// the event before it (a replacement says which three it replaced).
export function logItem(event, names, previous = null) {
  const item = element("li", { text: describeEvent(event, names, null, previous) });
  item.dataset.step = String(event.step);
  item.dataset.kind = event.kind;
  return item;
}
