// What every page shares (docs/web.md): the API client (same origin, session cookie, CSRF
// header), refusals in words, DOM helpers and the cards' faces and spoken names; and, passed on
// from i18n.js, the string catalogue and the language menu.

import {
  LANGS, browserLanguage, catalogued, chosenLanguage, detailTemplate, loadLanguage, ruleLineOf, setUpLanguage,
  showSaid, t, tNodes,
} from "./i18n.js";

// Every page imports the languages' helpers from here, as before they had a module of their own.
export { LANGS, browserLanguage, chosenLanguage, loadLanguage, setUpLanguage, showSaid, t, tNodes };

import { SUIT_SYMBOLS, cardName, cardText, isRed, isWild, parseCard, rankText, spokenFaces } from "./faces.js";

// ... and the cards' faces from faces.js.
export { cardName, cardText, isRed, isWild, parseCard, rankText, spokenFaces };

export const $ = (id) => document.getElementById(id);

// --- the API ----------------------------------------------------------------------------------

const GATEWAY_STATUSES = [502, 503, 504];

// Told whenever the server itself answers one of this page's requests (a refusal too; not a
// proxy's answer for it, nor the server's 503 while its database is away): live.js then
// reopens at once a stream it was waiting to reopen, rather than at the end of its wait.
const answerListeners = new Set();

export function onServerAnswer(listener) {
  answerListeners.add(listener);
  return () => answerListeners.delete(listener);
}

// Told whenever the server answers one of this page's requests 401 (not signed in: the
// session may have ended elsewhere), before the refusal is thrown: the table page then asks
// GET /sessions/current who this browser still is (session_end.js: the table, replay and
// audit pages).
const unauthorizedListeners = new Set();

export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

// `message`: the server's, or for a refusal or notice the page makes itself a function that
// says it in the page's language (`() => t(key)`), asked again at each drawing, so that it is
// said anew in the language the reader switches to (showSaid). `local`: a refusal the page
// made itself (the meld limits', table_moves.js): said by its message, not by its rule's line.
// `worded`: the server's error body, whose `key` and `params` say the detail in the page's
// language (detailOf).
export class Refused extends Error {
  constructor(status, code, message, worded = {}) {
    const say = typeof message === "function" ? message : null;
    super(say ? say() : message);
    this.say = say;
    this.status = status;
    this.code = code;
    this.key = typeof worded?.key === "string" ? worded.key : null;
    this.params = worded?.params && typeof worded.params === "object" ? worded.params : {};
    this.local = false;
  }
}

// A refusal's message in the page's language now (the server's stays as it came).
function messageOf(error) {
  return error.say ? error.say() : error.message;
}

// Every request goes to this page's own origin with the session cookie; anything that may
// change something carries the CSRF header. A refusal throws Refused with the server's code.
// minStep: the least step the answer may show (X-Canasta-Min-Step: a server reading from a
// replica waits for it, or asks the primary; docs/api.md).
export async function api(method, path, { body, token, minStep, key } = {}) {
  const headers = { Accept: "application/json" };
  if (minStep) headers["X-Canasta-Min-Step"] = String(minStep);
  if (key) headers["Idempotency-Key"] = key;
  if (method !== "GET") headers["X-Canasta-CSRF"] = "1";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  let answer;
  try {
    answer = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new Refused(0, "network", () => t("network_error"));
  }
  noteServerTime(answer.headers.get("Date"));
  const data = answer.status === 204 ? null : await answer.json().catch(() => null);
  if (!answer.ok) {
    // A reverse proxy's own answer while the server is down or restarting (502, 503, 504
    // without the server's error body), or the server's 503 database_unavailable while its
    // database does not answer (docs/operations.md, "When PostgreSQL goes away"): the
    // service could not be reached; nothing was refused, nothing recorded. Said as such, in
    // the reader's language, and taken down at the next answer.
    if (
      (!data?.error && GATEWAY_STATUSES.includes(answer.status)) ||
      (answer.status === 503 && data?.error?.code === "database_unavailable")
    ) {
      throw new Refused(0, "network", () => t("network_error"));
    }
  }
  for (const listener of answerListeners) listener();
  if (answer.status === 401) for (const listener of unauthorizedListeners) listener();
  if (!answer.ok) {
    const error = data?.error ?? { code: String(answer.status), message: answer.statusText };
    throw new Refused(answer.status, error.code, error.message, error);
  }
  return data;
}

// How far the server's clock is ahead of this device's, in ms, from its answers' Date header
// (whole seconds: taken as the middle of its second): a device whose clock is off would
// otherwise count a turn clock's deadline down from its own wrong time (a phone a few minutes
// behind showed "360 s left" of a 60-second turn). Differences under 1.5 s are the header's
// rounding and the network's delay, not the device's clock: left alone.
let serverAhead = 0;

function noteServerTime(date) {
  const server = Date.parse(date ?? "");
  if (Number.isNaN(server)) return;
  const ahead = server + 500 - Date.now();
  serverAhead = Math.abs(ahead) > 1500 ? ahead : 0;
}

// The server's time now, as well as this page can tell (see serverAhead), in ms.
export function serverNow() {
  return Date.now() + serverAhead;
}

// A request that a double tap or a lost answer could repeat (a new table, a practice game, an
// account, the start, the next deal, a rematch: docs/api.md, "Retrying safely"). It carries an
// Idempotency-Key of its own; when it gets no answer (the network, a restarting server), or
// the server is still doing it (409 idempotency_key_in_progress), it is sent again with the
// same key, up to three times a second apart: the server does it once and answers each try
// the same. A second tap while the same request is under way waits for its answer instead
// of sending another.
const underWay = new Map();

export function apiOnce(method, path, options = {}) {
  const what = `${method} ${path} ${JSON.stringify(options.body ?? null)}`;
  if (underWay.has(what)) return underWay.get(what);
  const sent = sendOnce(method, path, { ...options, key: newKey() });
  underWay.set(what, sent);
  const forget = () => underWay.delete(what);
  sent.then(forget, forget);
  return sent;
}

const TRIES = 3;
const RETRY_MS = 1000;

async function sendOnce(method, path, options) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await api(method, path, options);
    } catch (error) {
      const busy = error instanceof Refused && error.code === "idempotency_key_in_progress";
      if (attempt >= TRIES || !(busy || unreachable(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

// A random key (a version 4 UUID; crypto.randomUUID needs a secure context, this does not).
function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// The request got no answer from the server (it is restarting, the connection is down, a proxy
// in front answered for it). Its message is true
// only until the server answers again: the pages take it down at their next answer, whereas a
// refusal stays until the player acts.
export function unreachable(error) {
  return error instanceof Refused && error.code === "network";
}

// A server's refusal by a rule (its code a rule id: R-PILE-3) is said by the rule's line in the
// page's language, "Refused: to take a frozen pile, meld its top card with two ... (R-PILE-3)",
// and the server's own message, in English, is the detail under it (docs/web.md, "Refusals").
// Null for anything else: a code that is no rule (not_found), a refusal the page made itself
// and said in the player's language already (`local`), an unknown rule.
export function ruleLine(error) {
  if (!(error instanceof Refused) || error.status === 0 || error.local) return null;
  return ruleLineOf(error.code);
}

// "Refused: <message> (<code>)" for a server's refusal, the message alone otherwise; a rule's
// refusal: "Refused: <the rule's line> (<code>)", then its detail.
export function errorText(error) {
  if (error instanceof Refused && error.status !== 0) {
    const line = ruleLine(error);
    const said = error.local ? null : detailOf(error);
    if (line === null) return t("error", { message: said ?? messageOf(error), code: error.code });
    if (!withDetail(error)) return t("error", { message: line, code: error.code });
    return `${t("error", { message: line, code: error.code })} ${said ?? detailText(error)}`;
  }
  return error instanceof Refused ? messageOf(error) : String(error);
}

// "Refused: <message> (<code>)" as nodes, for an error box: the code a link to what the rules
// say of it (codeLink); the message alone for anything but a server's refusal. A rule's refusal:
// its line, then the server's detail on a line of its own, smaller.
export function errorNodes(error) {
  if (error instanceof Refused && error.status !== 0) {
    const line = ruleLine(error);
    const said = error.local ? null : detailOf(error);
    if (line === null) return tNodes("error", { message: said ?? messageOf(error), code: codeLink(error.code) });
    const rule = element("span", { class: "refusal-rule" }, ...tNodes("error", { message: line, code: codeLink(error.code) }));
    return withDetail(error) ? [rule, detailNode(error)] : [rule];
  }
  return [errorText(error)];
}

// Not signed in (401): the rule's line says it all; the server's detail speaks of bearer tokens
// and API routes ("register with POST /players"), nothing a reader of a page signs in with.
function withDetail(error) {
  return error.status !== 401;
}

// The detail under a rule's line: the key's template in the page's language, filled with the
// refusal's parameters (detailOf); else the server's message, as it is on an English page,
// elsewhere "In English: ...", marked English (lang) so that a screen reader or a translator
// reads it so.
function detailNode(error) {
  const translated = detailOf(error);
  // Printed, and for a screen reader in words (detailSaid), where they differ.
  if (translated !== null) {
    return element("small", { class: "refusal-detail" }, ...spokenText(translated, detailSaid(error, translated)));
  }
  const english = document.documentElement.lang === "en";
  const message = english
    ? element("span", { lang: "en" }, ...spokenText(error.message, detailSaid(error, null)))
    : element("span", { lang: "en", text: error.message });
  const said = english ? [message] : tNodes("refusal_detail", { message });
  return element("small", { class: "refusal-detail" }, ...said);
}

// What a server's refusal says this time in the page's language: its key's template
// (app/web/i18n/details/<lang>.json) with {name} filled from its params, or null (no key, an
// English page, a key the page has no template for: the server's English message then).
export function detailOf(error) {
  const template = error.key && !error.key.startsWith("@") ? detailTemplate(error.key) : null;
  if (typeof template !== "string") return null;
  return template.replace(/\{(\w+)(?::([^}]*))?\}/g, (_, name, spec) => detailValue(name, spec ?? "", error.params[name]));
}

// One parameter in the page's language: a list joined as the language joins them ({name:or}:
// "1 or 3"; another spec is the separator itself, {shape:+}: "3+3"); a word of a fixed set
// ("@action" in the details' file); a card's printed face; a rank; an entry's or a game
// status's name from the catalogue; anything else as it is.
const CARD_CODE = /^((10|[2-9AJQK])[CDHS]|BJ|LJ)\/\d+$/;

function detailValue(name, spec, value) {
  if (Array.isArray(value)) {
    const items = value.map((item) => detailValue(name, "", item));
    if (spec && spec !== "or" && spec !== "and") return items.join(spec);
    const type = spec === "or" ? "disjunction" : "conjunction";
    return new Intl.ListFormat(document.documentElement.lang, { type }).format(items);
  }
  const text = String(value ?? "");
  const words = detailTemplate(`@${name}`);
  if (words && Object.hasOwn(words, text)) return words[text];
  if (name.includes("card") && CARD_CODE.test(text)) return cardText(text);
  if (name.includes("rank")) return sayingRanks ? rankWord(text) : rankText(text);
  if ((name === "entry" || name === "status") && catalogued(`${name}_${text}`) !== null) return catalogued(`${name}_${text}`);
  return text;
}

// Whether a refusal's detail is being worded for a screen reader (detailNode): a rank by its
// word, "валет", where the page prints "J" (read as a letter: "Q" as "queue", "A" as "uh").
let sayingRanks = false;

function rankWord(rank) {
  const word = t(`rank_${rank}`);
  return word === `rank_${rank}` ? rankText(rank) : word;
}

// A refusal's detail as a screen reader is given it: its ranks by their words and its cards by
// their names. The server's English message names a rank by its letter ("two natural Js"): on
// an English page its letter ranks (A, K, Q, J, the refusal's rank parameters) are said as
// words, "two natural jacks".
const LETTER_RANKS = new Set(["A", "K", "Q", "J"]);

function detailSaid(error, translated) {
  if (translated !== null) {
    sayingRanks = true;
    try {
      return spokenFaces(detailOf(error));
    } finally {
      sayingRanks = false;
    }
  }
  const ranks = Object.entries(error.params ?? {})
    .filter(([name]) => name.includes("rank"))
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]))
    .map(String)
    .filter((rank) => LETTER_RANKS.has(rank));
  let said = String(error.message);
  for (const rank of new Set(ranks)) {
    said = said.replace(new RegExp(`\\b${rank}(s?)\\b`, "g"), (_, plural) => `${t(`rank_${rank}`)}${plural}`);
  }
  return spokenFaces(said);
}

function detailText(error) {
  return document.documentElement.lang === "en" ? error.message : t("refusal_detail", { message: error.message });
}

// A server's error code (a rule id, or one of the others: malformed, not_found, ...) as a link
// to where the rules define it, in a new tab so that the page is not left: /rules/{code}, which
// the server sends on to the rule's anchor (/rules/common#R-PILE-3) or to the code's row of
// the rules' "Error codes" (/rules/common#not_found). Anything else stays text.
const CODE = /^(R-[A-Z]+(-[A-Z]+)*-\d+|[a-z][a-z0-9_]*)$/;

export function codeLink(code) {
  if (!CODE.test(code)) return code;
  return element("a", {
    href: `/rules/${code}`, target: "_blank", rel: "noopener", class: "rule-link",
    "aria-label": t("rule_link", { code }), text: code,
  });
}

// `link` (an <a>) made the link to the rules of `name` (an entry, or always_frozen), in a new
// tab: "Rules: Classic". Unchanged when it already is (the table page calls it at every redraw).
export function rulesLink(link, name, label) {
  const text = t("rules_of", { entry: label });
  if (link.getAttribute("href") === `/rules/${name}` && link.textContent === text) return link;
  link.href = `/rules/${name}`;
  link.target = "_blank";
  link.rel = "noopener";
  link.textContent = text;
  link.setAttribute("aria-label", t("new_tab", { what: text }));
  return link;
}

// Who the session cookie signs in, {name, roles} (roles: "auditor", docs/api.md), or null.
// GET /sessions/current answers a visitor with name null rather than 401 (which the browser
// would log as an error on every page).
export async function signedIn() {
  try {
    const session = await api("GET", "/sessions/current");
    return session?.name ? { name: session.name, roles: session.roles ?? [] } : null;
  } catch {
    return null;
  }
}

// Who the session cookie signs in (the name), or null.
export async function whoAmI() {
  return (await signedIn())?.name ?? null;
}

// The header's "Signed in as ann" (#who), or that nobody is (`signedOutKey`), on the table,
// replay and audit pages, said again in the language the reader switches to; beside it the
// header's "Back to the lobby" (#to-lobby), as on the table page.
// `signedOutKey` null: nothing is said of a visitor, the line hidden (the lobby, whose account
// panel speaks to him).
export function showWho(name, signedOutKey = "header_signed_out") {
  $("who").hidden = !name && signedOutKey === null;
  showSaid($("who"), () => (name ? [t("signed_in_as", { name })] : signedOutKey ? [t(signedOutKey)] : []));
}

// --- seats ------------------------------------------------------------------------------------

// "(bot, basic)" after a bot's seat, or "" for a person: the level's short name (the lists
// of levels describe each, e.g. "strong (searches each move)"; after every name in the log
// that would be noise).
export function botNote(table, index) {
  const level = table?.bots?.[index];
  return level ? ` (${t("bot_seat", { level: t(`bot_short_${level}`) })})` : "";
}

// A table's seats as its pages name them (GET /tables/{id}: the table, the replay, the
// audit): a bot's with its level, "bot:basic:1 (bot, basic)"; null for a free seat.
export function seatNames(table) {
  return (table?.seats ?? []).map((name, seat) => (name === null ? null : name + botNote(table, seat)));
}

// The players of a side of the table, named as its seats are (seatNames): "ann, bot:basic:1
// (bot, basic)" (the table page's "The game" panel, its winners, its score table's titles).
export function sideNames(table, side) {
  const names = seatNames(table);
  return (table?.sides?.[side] ?? []).map((seat) => names[seat]).join(", ");
}

// The winning sides of a finished game with their players: "Side A (ann, cid)" (the table
// page's winner lines, its status line, the lobby's card of a game played).
export function winnersText(table) {
  return (table?.winners ?? []).map((side) => `${t("side", { side })} (${sideNames(table, side)})`).join(", ");
}

// --- the DOM ----------------------------------------------------------------------------------

// element("p", {class: "x", text: "hello"}, child...): attributes, then children.
export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}

// Puts `nodes` in `container` in place of its children, unless they show the same thing (the
// same HTML): a page drawn again on every event of a deal (bots play several moves a second)
// must not replace a link or button between a press and its release, which loses the click.
export function redraw(container, nodes) {
  const fresh = element(container.tagName.toLowerCase(), {}, ...nodes);
  if (fresh.innerHTML === container.innerHTML) return;
  container.replaceChildren(...fresh.childNodes);
}

// The table page's confirmation of an action that is not undone by a tap (stop the game, leave
// my seat): instead of the button that asked, the question, "yes" (`yesId`, class danger) and
// "no" (`noId`), in that order, so that a second tap where the first one fell lands on the
// question, not on "yes". Each button is described by the question (a screen reader says it
// with the focused button); Escape on either says no. The caller draws them and moves the focus.
export function confirmation({ question, yes, no, yesId, noId, onYes, onNo }) {
  const questionId = `${yesId}-question`;
  const ask = element("span", { class: "confirm", id: questionId, text: question });
  const yesButton = element("button", { type: "button", id: yesId, class: "danger", "aria-describedby": questionId, text: yes });
  const noButton = element("button", { type: "button", id: noId, class: "secondary", "aria-describedby": questionId, text: no });
  yesButton.addEventListener("click", onYes);
  noButton.addEventListener("click", onNo);
  for (const button of [yesButton, noButton]) {
    button.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      onNo();
    });
  }
  return [ask, yesButton, noButton];
}

// --- cards ------------------------------------------------------------------------------------
// Their faces and spoken names are faces.js's (passed on from here); their nodes are drawn here.

// The nodes that show `text` as printed and give a screen reader its spoken words, `spoken` (the
// printed words hidden from it, the spoken ones from the eye); the text alone if it names no card.
export function spokenText(text, spoken = spokenFaces(text)) {
  if (spoken === text) return [text];
  return [element("span", { "aria-hidden": "true", text }), element("span", { class: "visually-hidden", text: spoken })];
}

// A card as the page draws it: rank over suit symbol, red or black (and the symbol, so colour
// is never the only cue), marked wild or three; `tag` "button" makes it selectable.
export function cardElement(code, { tag = "span", attributes = {} } = {}) {
  const card = parseCard(code);
  const classes = ["card", isRed(code) ? "red" : "black"];
  if (isWild(code)) classes.push("wild");
  if (card.rank === "3") classes.push(isRed(code) ? "red-three" : "black-three");
  const node = element(tag, {
    class: classes.join(" "),
    // A card that is no button is an image named by its spoken name: a bare span's label is
    // not read (the pile's top, the red threes, a hand while it is not his turn were silent).
    role: tag === "button" ? null : "img",
    "aria-label": cardName(code),
    title: cardName(code),
    ...attributes,
  });
  node.dataset.card = code;
  node.append(
    element("span", { class: "rank", "aria-hidden": "true", text: rankText(card.rank) }),
    element("span", { class: "suit", "aria-hidden": "true", text: card.joker ? "" : SUIT_SYMBOLS[card.suit] }),
  );
  if (isWild(code)) node.append(element("span", { class: "mark", "aria-hidden": "true", text: t("wild_mark") }));
  return node;
}

// A face-down card (the back), for counts.
export function cardBack(label) {
  return element("span", { class: "card back", "aria-label": label, title: label });
}
