// The rules pages (docs/web.md, "The rules"): the server renders the text of docs/rules/ (in
// English) into the page; this translates the navigation around it and, for a reader of
// another language, says that the rules are in English.
//
// Stable hooks for tests: document.body.dataset.ready = "true" once translated;
// #rules-english (the note); .rules-nav a[aria-current=page] (this page);
// .table-scroll[data-more-start|data-more-end] (a wide table's box: more to see that side).

import { $, setUpLanguage } from "./common.js";

function englishNote() {
  $("rules-english").hidden = document.documentElement.lang === "en";
}

// A table wider than its box (a phone) scrolls inside it: the side where more of it is hidden
// fades out (rules.css), so that the reader sees there is more to scroll to.
function markScrolling(box) {
  const hidden = box.scrollWidth - box.clientWidth;
  box.dataset.moreStart = String(box.scrollLeft > 1);
  box.dataset.moreEnd = String(box.scrollLeft < hidden - 1);
}

function watchTables() {
  const boxes = [...document.querySelectorAll(".table-scroll")];
  for (const box of boxes) {
    box.addEventListener("scroll", () => markScrolling(box), { passive: true });
    markScrolling(box);
  }
  addEventListener("resize", () => boxes.forEach(markScrolling));
}

async function main() {
  watchTables();
  await setUpLanguage($("lang"), async () => englishNote());
  englishNote();
  document.body.dataset.ready = "true";
}

main();
