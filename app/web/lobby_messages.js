// The lobby's messages (docs/web.md, "The lobby"): the refusal's box (role alert) and the
// success notice's (role status), each next to the control pressed, or at the top.

import { $, errorNodes, showSaid, t, unreachable } from "./common.js";

// The messages' boxes: the refusal's (role alert) and the success notice's (role status, "You
// sit in seat 2."). Each is shown at the top of the page for what no control of the page
// started (the poll's errors, signing out), else next to the control pressed, so that a
// player on a phone, far down the page, sees it where he tapped. Moved around, so held here
// rather than looked up by their ids.
export const errorBox = $("error");
export const noticeBox = $("notice");
const top = document.querySelector("main");
// Where each box belongs: null (the top), a form's control, or a table's card ({ list,
// table }: found again after a refresh, which may draw the card anew).
const places = new Map([[noticeBox, null], [errorBox, null]]);
// The control the player pressed last (a button or link, or the form he submitted).
let pressed = null;
document.addEventListener("click", (event) => {
  pressed = event.target.closest?.("button, a, summary") ?? null;
}, true);
document.addEventListener("submit", (event) => {
  pressed = event.submitter ?? event.target;
}, true);

// Where a message of the action started by `control` is shown.
export function placeFor(control) {
  const card = control?.closest?.("ul.tables [data-table]");
  if (card) return { list: card.closest("ul.tables").id, table: card.dataset.table };
  return control?.isConnected && control.closest("main") ? control : null;
}

// Where a message of the action the player just started is shown.
export function pressedPlace() {
  return placeFor(pressed);
}

// Puts `box` where it belongs: in its table's card (in its list, else in another list: a
// table started moves to the tables in play; else before its list), after the form's
// control, else at the top (the notice first, then the refusal).
function placeBox(box) {
  const place = places.get(box);
  if (place?.table) {
    const list = $(place.list);
    const card = list?.querySelector(`[data-table="${place.table}"]`)
      ?? document.querySelector(`ul.tables [data-table="${place.table}"]`);
    if (card && box.parentElement !== card) card.append(box);
    else if (!card && list && list.previousElementSibling !== box) list.before(box);
  } else if (place?.isConnected) {
    if (place.nextElementSibling !== box) place.after(box);
  } else if (box === noticeBox) {
    if (top.firstElementChild !== box) top.prepend(box);
  } else {
    const after = noticeBox.parentElement === top ? noticeBox : null;
    if (after ? after.nextElementSibling !== box : top.firstElementChild !== box) {
      if (after) after.after(box);
      else top.prepend(box);
    }
  }
}

export function placeBoxes() {
  placeBox(noticeBox);
  placeBox(errorBox);
}

// Scrolls the message shown next to a control into sight (not one at the top: the poll's).
export function showPlaced(box) {
  const shown = box === errorBox ? !box.hidden : box.textContent !== "";
  if (shown && places.get(box)) box.scrollIntoView({ block: "nearest" });
}

export function showError(error, place = null) {
  // Its code a link to the rules (a new tab); said again in the language the player switches to.
  showSaid(errorBox, () => errorNodes(error));
  errorBox.hidden = false;
  errorBox.dataset.unreachable = String(unreachable(error));
  places.set(errorBox, place);
  placeBox(errorBox);
  showPlaced(errorBox);
}

export function clearError() {
  errorBox.hidden = true;
  errorBox.textContent = "";
  delete errorBox.dataset.unreachable;
  places.set(errorBox, null);
  placeBox(errorBox);
}

export function clearMessages() {
  clearError();
  noticeBox.textContent = "";
  places.set(noticeBox, null);
  placeBox(noticeBox);
}

// A success, said next to the control pressed (at the top for signing out, in the header).
export function notice(key, values) {
  showSaid(noticeBox, () => [t(key, values)]); // in the language the player switches to, too
  places.set(noticeBox, placeFor(pressed));
  placeBox(noticeBox);
  showPlaced(noticeBox);
}
