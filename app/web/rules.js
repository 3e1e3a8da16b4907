// The rules pages (docs/web.md, "The rules"): the server renders the text of docs/rules/ (in
// English) into the page; this translates the navigation around it and, for a reader of
// another language, says that the rules are in English.
//
// Stable hooks for tests: document.body.dataset.ready = "true" once translated;
// #rules-english (the note); .rules-nav a[aria-current=page] (this page).

import { $, setUpLanguage } from "./common.js";

function englishNote() {
  $("rules-english").hidden = document.documentElement.lang === "en";
}

async function main() {
  await setUpLanguage($("lang"), async () => englishNote());
  englishNote();
  document.body.dataset.ready = "true";
}

main();
