// The turn clock on the table page (docs/tables.md, "Turn clock"): the seconds left to the
// seat to act, counted down from the deal view's `deadline` (the server's recorded facts; the
// server, not this page, decides when a turn times out), or that his time ran out and the
// basic bot is playing his turn. Hidden at a table without a clock.

import { $, t } from "./common.js";

let timer = null;

// `view`: the deal view (or null); `name(seat)`: a seat's name as the page shows it.
export function renderClock(view, name) {
  const node = $("clock");
  if (timer !== null) {
    clearInterval(timer);
    timer = null;
  }
  const out = view?.timed_out ?? [];
  if (view && view.phase !== "over" && out.length) {
    node.textContent = t("clock_timed_out", { name: out.map(name).join(", ") });
    node.hidden = false;
    return;
  }
  if (!view?.deadline || view.phase === "over") {
    node.hidden = true;
    node.textContent = "";
    return;
  }
  const asked = view.question && view.question.answer === null;
  const seat = asked ? view.question.partner : view.phase === "cut" ? view.cutter : view.turn;
  const due = Date.parse(view.deadline);
  const tick = () => {
    const left = Math.max(0, Math.ceil((due - Date.now()) / 1000));
    node.textContent = t("clock_left", { name: name(seat), seconds: left });
    node.dataset.left = String(left);
  };
  tick();
  node.hidden = false;
  timer = setInterval(tick, 1000);
}
