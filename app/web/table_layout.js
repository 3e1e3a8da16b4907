// The table page's layout (docs/web.md, "Layout"): where an error is said (the move panel or
// the top of the page), the hand kept where the player was looking at it across a redraw, and
// the room kept below anything scrolled into view for the panels that stay at the bottom of a
// phone's screen. DOM only: the page's state stays in table.js.

import { $, errorNodes, showSaid, unreachable } from "./common.js";

// A refused move is said in the move panel, under its hint, where the player pressed it: on a
// phone the top of the page, the error's home, is out of sight by then (docs/web.md, "Layout").
// So is what the reads after his move say until the error is taken down (his next move, the
// server answering again): the read that follows a move pressed into an outage, and its
// retries, say "The server could not be reached." again, where he is still looking.
// Any other error is said at the top of the page.
export function showError(error, { move = false } = {}) {
  const box = $("error");
  const fromMove = move || (!box.hidden && box.dataset.move === "true");
  // Its code a link to the rule (a new tab); said again in the language the player switches to.
  showSaid(box, () => errorNodes(error));
  box.hidden = false;
  box.dataset.unreachable = String(unreachable(error));
  box.dataset.move = String(fromMove);
  placeError(fromMove && !$("moves").hidden);
}

export function placeError(inMoves) {
  place($("error"), inMoves, (box) => $("waiting").before(box));
}

// `node` in the move panel, under its heading (flex order in table.css), or at its `home`.
export function place(node, inMoves, home) {
  if (inMoves && node.parentElement !== $("moves")) $("moves-heading").after(node);
  else if (!inMoves && node.parentElement !== $("page")) home(node);
}

export function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
  delete $("error").dataset.unreachable;
  delete $("error").dataset.move;
}

// The server answered: "could not be reached" is not true any more (a restart is over).
export function answered() {
  if ($("error").dataset.unreachable === "true") clearError();
}

// The hand's top on the screen while some of it is in sight, else null.
export function handOnScreen() {
  const box = document.getElementById("hand")?.getBoundingClientRect();
  return box && box.bottom > 0 && box.top < window.innerHeight ? box.top : null;
}

// A redraw (another player's meld, a question asked: the deal above the hand grows) leaves the
// hand where the player was looking at it: the page scrolls by as much as it moved. The deal
// is drawn anew each time, so the browser's own scroll anchoring has nothing to hold on to.
export function keepInPlace(handWas) {
  const now = document.getElementById("hand")?.getBoundingClientRect().top;
  if (handWas === null || now === undefined || Math.abs(now - handWas) < 1) return;
  window.scrollBy(0, now - handWas);
}

// On a phone the move panel (or a spectator's log) stays at the bottom of the screen
// (table.css): the page keeps that much room below anything it scrolls into view (a card tapped
// or reached with Tab), so that the panel never hides it.
export function keepRoom() {
  const sticky = [$("moves"), $("log-panel")]
    .find((panel) => !panel.hidden && getComputedStyle(panel).position === "sticky");
  document.documentElement.style.scrollPaddingBottom = sticky ? `${sticky.offsetHeight}px` : "";
}

export function keepRoomForPanels() {
  for (const panel of [$("moves"), $("log-panel")]) new ResizeObserver(keepRoom).observe(panel);
  window.addEventListener("resize", keepRoom);
}

// On a phone, at the start of the player's turn (and when his draw is done: his new cards), his
// hand and the move panel that stays at the bottom of the screen are both in sight: the page
// scrolls the hand just above the panel (its top, if it is taller than the room there). The
// page used to stay where it was, the hand under the panel or below it, and he scrolled to find
// his cards before every move (tests/web/test_accessibility.py).
export function showHandAbovePanel() {
  const hand = document.getElementById("hand");
  const panel = $("moves");
  if (!hand || panel.hidden || getComputedStyle(panel).position !== "sticky") return;
  const box = hand.getBoundingClientRect();
  // A little room between them, so that the hand's lower edge shows above the panel's shadow.
  const gap = 8;
  const room = window.innerHeight - panel.offsetHeight - gap;
  if (box.top >= 0 && box.bottom <= room + gap) return; // already in sight above the panel
  window.scrollBy(0, box.height <= room ? box.bottom - room : box.top);
}
