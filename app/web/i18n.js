// The pages' languages (docs/web.md, "Languages"): the string catalogue of the chosen language,
// its rules' one-line statements and its refusals' details (for common.js's refusals), the
// language menu, and the boxes said again when the reader switches the language.

// The languages of the menu, by their catalogue's name (app/web/i18n/<lang>.json).
export const LANGS = ["en", "zh", "ru", "th"];

let strings = {};
let ruleLines = {}; // each rule's line, by its id (app/web/i18n/rules/<lang>.json)
let details = {}; // each refusal's detail, by its key (app/web/i18n/details/<lang>.json)
let plurals = new Intl.PluralRules("en");

// The catalogue's text for `key`, with {name} placeholders filled.
// A `count` picks the key's plural form by the language's rules (Intl.PluralRules, docs/web.md
// "Languages"): `<key>_<category>` where the catalogue has it ("one", "few", "many", "two",
// "zero"), else the key itself (the "other" form). English: "1 card", "2 cards"; Russian:
// "1 карта", "2 карты", "5 карт", "21 карта"; Chinese and Thai have one form only.
export function t(key, values = {}) {
  const count = values.count;
  const counted = count !== undefined && count !== null && count !== "" && Number.isFinite(Number(count));
  const category = counted ? plurals.select(Number(count)) : "other";
  const form = category === "other" ? undefined : strings[`${key}_${category}`];
  const text = form ?? strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

// t() as nodes: a value that is a node (a link) stands in its placeholder as it is.
export function tNodes(key, values = {}) {
  const marked = Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, value instanceof Node ? `\u0000${name}\u0000` : value]),
  );
  return t(key, marked).split(/\u0000(\w+)\u0000/).map((part, i) => (i % 2 ? values[part] : part));
}

// Loads a language's catalogue (and its rules' lines and refusals' details, for the
// refusals) and fills every [data-i18n] node of the page. English has no details' file: the
// server's message is the English detail (docs/web.md, "Refusals").
export async function loadLanguage(lang) {
  const [answer, rules, said] = await Promise.all([
    fetch(`/web/i18n/${lang}.json`, { credentials: "same-origin" }),
    fetch(`/web/i18n/rules/${lang}.json`, { credentials: "same-origin" }).catch(() => null),
    lang === "en" ? null : fetch(`/web/i18n/details/${lang}.json`, { credentials: "same-origin" }).catch(() => null),
  ]);
  strings = await answer.json();
  ruleLines = rules?.ok ? await rules.json().catch(() => ({})) : {};
  details = said?.ok ? await said.json().catch(() => ({})) : {};
  plurals = new Intl.PluralRules(lang);
  document.documentElement.lang = lang;
  for (const node of document.querySelectorAll("[data-i18n]")) {
    node.textContent = t(node.dataset.i18n);
  }
}

// The language saved by the language menu, else the browser's.
export function chosenLanguage() {
  const saved = localStorage.getItem("canasta-lang");
  if (LANGS.includes(saved)) return saved;
  return browserLanguage(navigator.languages?.length ? navigator.languages : [navigator.language]);
}

// The first of the browser's preferred languages ("ru-RU", "th", "zh-Hans-CN") that the pages
// speak, by its primary subtag; English when none.
export function browserLanguage(preferred) {
  for (const tag of preferred ?? []) {
    const primary = String(tag ?? "").toLowerCase().split(/[-_]/)[0];
    if (LANGS.includes(primary)) return primary;
  }
  return "en";
}

// Wires a <select> of languages: shows the chosen one, and on change saves it, loads it and
// calls `changed` so the page can redraw what it built itself.
export async function setUpLanguage(select, changed = async () => {}) {
  const lang = chosenLanguage();
  select.value = lang;
  await loadLanguage(lang);
  select.addEventListener("change", async () => {
    localStorage.setItem("canasta-lang", select.value);
    await loadLanguage(select.value);
    sayAgain();
    await changed();
  });
}

// What a page says in a box of its own, a refusal or a notice: `say()` draws it (nodes or
// strings) in the page's language, now and again whenever the reader switches the language
// (setUpLanguage), for as long as the box still shows it: a refusal already on screen is then
// said in the new language too (its rule's line, its detail, its code), not left in the old
// one until the next. A box emptied or drawn otherwise is left alone.
const saidBoxes = new Map(); // box -> { say, first: the node it began with }

export function showSaid(box, say) {
  box.replaceChildren(...say());
  saidBoxes.set(box, { say, first: box.firstChild });
}

function sayAgain() {
  for (const [box, { say, first }] of saidBoxes) {
    if (first !== null && box.firstChild === first) showSaid(box, say);
    else saidBoxes.delete(box);
  }
}

// The rule's one-line statement in the page's language (app/web/i18n/rules/<lang>.json), or null.
export function ruleLineOf(code) {
  return Object.hasOwn(ruleLines, code) ? ruleLines[code] : null;
}

// A refusal's detail template for `key` in the page's language, or null (English has none: the
// server's message is the English detail); `@<name>` keys hold the words of a fixed set.
export function detailTemplate(key) {
  return Object.hasOwn(details, key) ? details[key] : null;
}

// The catalogue's own text for `key`, or null when it has none (no fallback to the key).
export function catalogued(key) {
  return Object.hasOwn(strings, key) ? strings[key] : null;
}
