// The turn clock on the table page (docs/tables.md, "Turn clock"): the seconds left to the
// seat to act, counted down from the deal view's `deadline` (the server's recorded facts; the
// server, not this page, decides when a turn times out), or that his time ran out and the
// basic bot is playing his turn. Hidden at a table without a clock.

import { $, element, serverNow, t } from "./common.js";

let timer = null;

// `view`: the deal view (or null); `name(seat)`: a seat's name as the page shows it;
// `most`: the table's turn clock in seconds, which the seconds left never exceed (a turn's
// deadline is at most that far from now; the server's time, known here to about a second
// from its Date header, could otherwise show "61 s" of a 60-second turn).
export function renderClock(view, name, most) {
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
    const left = Math.max(0, Math.min(most ?? Infinity, Math.ceil((due - serverNow()) / 1000)));
    node.textContent = t("clock_left", { name: name(seat), seconds: left });
    node.dataset.left = String(left);
  };
  tick();
  node.hidden = false;
  timer = setInterval(tick, 1000);
}

// The choices of the lobby's form (docs/web.md), in seconds a turn; "" is no clock.
export const CLOCK_CHOICES = ["", "30", "60", "120", "300"];

function clockText(seconds) {
  return seconds ? t("clock_seconds", { seconds }) : t("clock_off");
}

// Before the start (#waiting-clock): the table's clock for everybody and, for its host, a
// menu to change it (#clock-choice, #clock-set: PUT /tables/{id}/clock; the server refuses
// anybody else, R-SEAT-3). `set(seconds | null)` sends it and reads the table again.
export function renderClockChoice(table, me, set) {
  const node = $("waiting-clock");
  if (table?.status !== "open") {
    node.replaceChildren();
    return;
  }
  const current = table.turn_seconds ? String(table.turn_seconds) : "";
  const shown = element("p", { id: "clock-shown", "aria-live": "polite", text: `${t("clock_label")}: ${clockText(current)}` });
  shown.dataset.seconds = current;
  if (me === null || me !== table.host) {
    node.replaceChildren(shown);
    return;
  }
  const menu = document.getElementById("clock-choice");
  if (menu && node.contains(document.activeElement)) {
    node.firstElementChild.replaceWith(shown); // the host is choosing: his menu stays as it is
    return;
  }
  const choices = CLOCK_CHOICES.includes(current) ? CLOCK_CHOICES : [...CLOCK_CHOICES, current];
  const select = element("select", { id: "clock-choice" },
    ...choices.map((value) => new Option(clockText(value), value, false, value === current)));
  const button = element("button", { type: "button", id: "clock-set", class: "secondary", text: t("clock_set") });
  button.addEventListener("click", () => set(select.value ? Number(select.value) : null));
  node.replaceChildren(shown, element("div", { class: "field clock-choice" },
    element("label", { for: "clock-choice", text: t("clock_choose") }), select, button));
}
