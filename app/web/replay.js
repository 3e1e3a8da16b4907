// The replay of a deal (docs/web.md, "Replay and audit"): a step slider, previous and next,
// each step's event in words and the deal as this viewer was allowed to see it at that step
// (GET /deals/{id}/replay?step=N: a seated player his own hand, anyone else the public table).
// The step is in the address (?step=N), so a link opens at that step.

import { $, api, element, errorNodes, errorText, seatNames, setUpLanguage, sideNames, showSaid, showWho, signedIn, t } from "./common.js";
import { renderDeal } from "./deal_render.js";
import { showSignedOut, watchSession } from "./session_end.js";
import { logNamesByEvent } from "./seats.js";
import { describeEvent, sayEvent, secretStep } from "./words.js";

const dealId = location.pathname.split("/")[2];
const views = new Map(); // step -> the DealView at that step, a promise (it never changes)
let deal = null; // the deal now (GET /deals/{id}): its last step, its table
let events = new Map(); // step -> the event as this viewer sees it (secret steps absent)
let table = null; // the deal's table now (GET /tables/{id}: its seats, bots and deals), or null
let names = null; // the players' names by room seat (the table's now), a bot's with its level
// The seats' names as they were played (a seat changes players: docs/tables.md), from the
// deal's Started and SeatPlayerChanged events: at each event's step (its words), and after
// the last event (`namesAfter`); a step's view is named as the next event's words are.
let namesAt = new Map();
let namesAfter = null;
let last = 1;
let step = 1;

// The step's words as printed ("kim added Q♠ to the Q meld"), or as a screen reader is given
// them (`said`: "kim added queen of spades to the queen meld").
function wordsAt(n, said = false) {
  const event = events.get(n);
  const describe = said ? sayEvent : describeEvent;
  return event ? describe(event, namesAt.get(n) ?? names, events.get(n + 1), events.get(n - 1)) : secretStep();
}

// The seats' names in the view at step `n`: as played once its event happened.
function viewNamesAt(n) {
  for (const s of namesAt.keys()) if (s > n) return namesAt.get(s);
  return namesAfter ?? names ?? [];
}

// In the page's language: a bot is "bot:basic:1 (bot, basic)", as on the table page.
function nameSeats() {
  names = table ? seatNames(table) : null;
  const list = [...events.values()].sort((a, b) => a.step - b.step);
  const byEvent = logNamesByEvent([...list, { kind: "end" }], names ?? []);
  namesAt = new Map(list.map((event, i) => [event.step, byEvent[i]]));
  namesAfter = byEvent[list.length];
}

function clamp(n) {
  return Math.min(Math.max(Number.isFinite(n) ? Math.trunc(n) : 1, 1), last);
}

function stepFromAddress() {
  const asked = new URLSearchParams(location.search).get("step");
  return asked === null ? 1 : clamp(Number(asked));
}

function viewerNote(view) {
  if (view.seat === null || view.seat === undefined) return t("replay_as_spectator");
  return t("replay_as_player", { number: view.seat + 1 });
}

// Shows step `n`: controls and words at once, then the view when it arrives (a later move of
// the slider wins over an earlier answer still on its way).
async function show(n) {
  step = clamp(n);
  const slider = $("step");
  slider.value = String(step);
  $("step-label").textContent = t("replay_step", { step, last });
  slider.setAttribute("aria-valuetext", t("replay_step", { step, last }));
  const focused = document.activeElement;
  $("first").disabled = $("previous").disabled = step === 1;
  $("next").disabled = $("last").disabled = step === last;
  if (focused?.disabled) slider.focus(); // a button that ends its way keeps the keyboard here
  $("words").textContent = t("replay_words", { step, words: wordsAt(step) });
  $("words-said").textContent = t("replay_words", { step, words: wordsAt(step, true) });
  history.replaceState(null, "", `${location.pathname}?step=${step}`);
  for (const item of $("step-list").children) {
    const button = item.querySelector("button");
    if (Number(item.dataset.step) === step) button.setAttribute("aria-current", "step");
    else button.removeAttribute("aria-current");
  }
  const wanted = step;
  let view;
  try {
    view = await viewAt(wanted);
  } catch (error) {
    views.delete(wanted); // asked again next time
    if (wanted !== step) return;
    showSaid($("step-error"), () => [errorText(error)]);
    $("step-error").hidden = false;
    return;
  }
  if (wanted !== step) return;
  $("step-error").hidden = true;
  draw(view);
  const ahead = step + 1; // the likely next one, asked before it is wanted
  if (ahead <= last) viewAt(ahead).catch(() => views.delete(ahead));
}

// The view at step `n` (GET /deals/{id}/replay?step=n), asked once.
function viewAt(n) {
  if (!views.has(n)) views.set(n, api("GET", `/deals/${dealId}/replay?step=${n}`));
  return views.get(n);
}

function draw(view) {
  $("viewer-note").textContent = viewerNote(view);
  $("view").hidden = false;
  renderDeal($("deal"), view, { names: viewNamesAt(step), level: 3 }); // under "The table at this step"
  $("view").dataset.step = String(step);
  $("words").dataset.step = String(step);
}

function fillStepList() {
  const list = $("step-list");
  list.replaceChildren();
  for (let n = 1; n <= last; n += 1) {
    const words = t("replay_words", { step: n, words: wordsAt(n) });
    const said = t("replay_words", { step: n, words: wordsAt(n, true) });
    const button = element("button", { type: "button", class: "link-button", "aria-label": said === words ? null : said }, words);
    button.addEventListener("click", () => show(n));
    list.append(element("li", { "data-step": n }, button));
  }
}

// The deal's place among its table's deals (GET /tables/{id}'s `deals`, in order): "Deal 2
// of 3" between links to the previous and the next deal's replay (hidden at either end).
function drawDealNav() {
  const deals = table?.deals ?? [];
  const index = deals.indexOf(dealId);
  $("deal-nav").hidden = index < 0;
  if (index < 0) return;
  $("deal-nav").setAttribute("aria-label", t("replay_deals_nav"));
  $("deal-place").textContent = t("replay_deal_of", { number: index + 1, count: deals.length });
  for (const [id, other] of [["previous-deal", deals[index - 1]], ["next-deal", deals[index + 1]]]) {
    $(id).hidden = !other;
    if (other) $(id).href = `/deals/${other}/replay`;
    else $(id).removeAttribute("href");
  }
}

// The totals the sides had when the deal began (its Started event's `scores_before`, public:
// the initial-meld minimums of the deal depend on them), "Side A 120, Side B 1230".
function drawTotalsBefore() {
  const started = [...events.values()].find((event) => event.kind === "Started");
  const before = started?.scores_before;
  $("totals-before").hidden = !before;
  if (!before) return;
  const sides = Object.keys(before).sort();
  // A side and its total kept on one line (no-break spaces): a phone broke "Команда | A 145".
  const totals = sides.map((side) => `${t("side", { side })} ${before[side]}`.replaceAll(" ", "\u00a0")).join(", ");
  $("totals-before").textContent = t("replay_totals_before", { totals });
  const names = table ? sides.map((side) => `${t("side", { side })}: ${sideNames(table, side)}`) : [];
  $("totals-before").title = names.join("; ");
}

// Redraws what the page built itself in the chosen language (a refusal and who is signed in
// are said again by showSaid).
async function translate() {
  document.title = t("replay_title", { number: deal?.number ?? "" });
  if (!deal) return;
  nameSeats();
  $("replay-heading").textContent = t("replay_title", { number: deal.number });
  drawDealNav();
  drawTotalsBefore();
  fillStepList();
  await show(step);
}

function refuse(error) {
  showSaid($("refused-text"), () => errorNodes(error)); // the code: a link to the rules
  $("refused").hidden = false;
}

// His session ended elsewhere (session_end.js), a step's read refused 401: the views read
// with it (his own hand at each step of a deal he plays) leave the page, the notice alone
// stays, with the way back through the sign-in. Another name: the page is read again as his.
function signedOutHere(name) {
  if (name !== null) {
    location.reload();
    return;
  }
  views.clear();
  deal = null; // nothing more drawn, a language switch included (translate)
  showWho(null);
  showSignedOut({
    textKey: "page_session_closed", linkKey: "page_sign_in_again", place: (node) => $("page").replaceChildren(node),
  });
}

async function start() {
  await setUpLanguage($("lang"), translate);
  const me = await signedIn(); // null: signed out
  showWho(me?.name ?? null);
  if (me) watchSession(() => me.name, signedOutHere);
  $("audit-link").hidden = !me?.roles?.includes("auditor");
  $("audit-link").href = `/audit/deals/${dealId}`;
  try {
    deal = await api("GET", `/deals/${dealId}`);
    const list = await api("GET", `/deals/${dealId}/events`);
    events = new Map(list.map((event) => [event.step, event]));
  } catch (error) {
    deal = null;
    refuse(error);
    document.body.dataset.ready = "true";
    return;
  }
  try {
    table = await api("GET", `/tables/${deal.table}`);
  } catch {
    table = null; // seat numbers instead of names
  }
  last = Math.max(deal.step, ...events.keys());
  const slider = $("step");
  slider.max = String(last);
  slider.addEventListener("input", () => show(Number(slider.value)));
  $("first").addEventListener("click", () => show(1));
  $("previous").addEventListener("click", () => show(step - 1));
  $("next").addEventListener("click", () => show(step + 1));
  $("last").addEventListener("click", () => show(last));
  $("table-link").href = `/tables/${deal.table}`; // the table's page, as a player left it
  $("replay").hidden = false;
  $("stepper").hidden = false;
  $("steps").hidden = false;
  step = stepFromAddress();
  await translate();
  document.body.dataset.ready = "true";
}

start();
