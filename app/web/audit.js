// The audit of a deal (docs/web.md, "Replay and audit"), for auditors only (R-VIEW-4): the
// verdict (hash chain, seed commitment, rules re-decided), the deck, the hands and the stock,
// and the full history, each event in words with its stored record and the state at its step
// on demand; the first broken link is highlighted and scrolled into view. Anyone else sees
// the server's refusal (401: sign in; 403: not an auditor).

import {
  $, api, cardElement, detailOf, element, errorNodes, errorText, seatNames, setUpLanguage, showSaid, showWho, spokenText, t, whoAmI,
} from "./common.js";
import { logNamesByEvent } from "./seats.js";
import { showSignedOut, watchSession } from "./session_end.js";
import { describeEvent, sayEvent, scoresText, seatName } from "./words.js";

const dealId = location.pathname.split("/")[3];
let audit = null; // GET /audit/deals/{id}
let table = null; // the deal's table now (GET /tables/{id}: its seats and bots), or null
let names = null; // the players' names by room seat (the table's now), a bot's with its level
// Per record of the history, the seats' names as they were played then (a seat changes
// players: docs/tables.md), from its Started and SeatPlayerChanged records; then after the last.
let playedBy = [];

// In the page's language: a bot is "bot:basic:1 (bot, basic)", as on the table page.
function nameSeats() {
  names = table ? seatNames(table) : null;
  try {
    playedBy = logNamesByEvent([...(audit?.events ?? []), { kind: "end" }], names ?? []);
  } catch {
    playedBy = []; // a record that cannot be read: the table's names
  }
}

// The seats' names once the event of step `step` had happened.
function namesAfter(step) {
  const records = audit?.events ?? [];
  const next = records.findIndex((record) => Number(record?.step) > step);
  return playedBy[next === -1 ? records.length : next] ?? names;
}

// --- small pieces -----------------------------------------------------------------------------

// A row of card faces; a value a tampered record holds that is no card is shown as text.
function cardRow(cards) {
  const row = element("div", { class: "cards" });
  for (const code of Array.isArray(cards) ? cards : []) {
    try {
      row.append(cardElement(String(code)), " ");
    } catch {
      row.append(element("code", { text: JSON.stringify(code) }), " ");
    }
  }
  if (!row.childElementCount) row.append(element("span", { class: "muted", text: t("audit_none") }));
  return row;
}

// "seat 1: cards" for each seat of a {seat: cards} object.
function handsBlock(hands, who = names) {
  const list = element("dl", { class: "hands" });
  for (const [seat, cards] of Object.entries(hands ?? {})) {
    list.append(
      element("dt", { text: t("audit_hand_of", { who: seatName(seat, who), count: cards?.length ?? 0 }) }),
      element("dd", {}, cardRow(cards)),
    );
  }
  return list;
}

// A folded list of cards: "<title> (N cards)".
function cardsDetails(title, cards) {
  return element(
    "details",
    { class: "card-list" },
    element("summary", { text: t("audit_cards_count", { what: title, count: cards?.length ?? 0 }) }),
    cardRow(cards),
  );
}

// What the audit found, in the page's language: the message's key and params (`worded`, as a
// refusal's: docs/api.md) filled into the page's template; the rules' refusal it quotes said
// in the page's language too. Else (an English page, a key the page does not know) the
// server's English message.
function said(worded, field, english) {
  const found = worded?.[field];
  if (!found?.key) return english ?? "";
  const params = { ...(found.params ?? {}) };
  const quoted = found.refusal ? detailOf({ key: found.refusal.key, params: found.refusal.params ?? {} }) : null;
  if (quoted !== null) params.why = quoted;
  return detailOf({ key: found.key, params }) ?? english ?? "";
}

function json(value) {
  return element("pre", { class: "record" }, JSON.stringify(value, null, 2));
}

function check(ok, text) {
  return element(
    "li",
    { class: ok ? "ok" : "bad" },
    element("span", { class: "mark", "aria-hidden": "true", text: ok ? "✓" : "✗" }),
    element("span", { class: "visually-hidden", text: ok ? t("audit_ok") : t("audit_failed") }),
    " ",
    text,
  );
}

// The server's signature of the table's record of the deal (docs/api.md): valid passes, forged
// and unknown_key fail, unsigned and not_recorded are said without a mark; unchecked, nothing.
function signatureCheck(report) {
  const key = report.signature_key_id ?? "";
  switch (report.signature) {
    case "valid":
      return check(true, t("audit_signature_valid", { key }));
    case "forged":
      return check(false, t("audit_signature_forged", { message: said(report.worded, "signature_message", report.signature_message) }));
    case "unknown_key":
      return check(false, t("audit_signature_unknown_key", { key }));
    case "unsigned":
      return element("li", { class: "plain" }, t("audit_signature_unsigned"));
    case "not_recorded":
      return element("li", { class: "plain" }, t("audit_signature_not_recorded"));
    default:
      return null;
  }
}

// The steps to highlight: where the chain breaks, where the rules disagree, an unreadable row.
function brokenSteps(report) {
  return [report.first_broken_step, report.first_mismatch_step, audit.unreadable_step].filter(
    (n) => n !== null && n !== undefined,
  );
}

// --- the verdict ------------------------------------------------------------------------------

function showVerdict() {
  const report = audit.audit;
  $("audit-heading").textContent = t("audit_title", { number: audit.number ?? "?" });
  const summary = $("verdict-summary");
  summary.className = `verdict-summary ${report.ok ? "ok" : "bad"}`;
  summary.textContent = report.ok ? t("audit_verdict_ok") : t("audit_verdict_failed");
  const checks = [
    report.chain_ok
      ? check(true, t("audit_chain_ok", { count: report.events }))
      : check(false, t("audit_chain_broken", { step: report.first_broken_step })),
    report.commitment_ok
      ? check(true, t(report.stacked ? "audit_commitment_ok_stacked" : "audit_commitment_ok"))
      : check(false, t("audit_commitment_failed", { message: said(report.worded, "commitment_message", report.commitment_message) })),
    report.rules_ok
      ? check(true, t("audit_rules_ok", { count: report.commands }))
      : check(false, t("audit_rules_failed", { step: report.first_mismatch_step, message: said(report.worded, "message", report.message) })),
  ];
  const signature = signatureCheck(report);
  if (signature) checks.push(signature);
  if (audit.unreadable_step) checks.push(check(false, t("audit_unreadable", { step: audit.unreadable_step })));
  $("checks").replaceChildren(...checks);
  $("stacked").hidden = !report.stacked;
  $("stacked").textContent = t("audit_stacked");
  $("outcome").textContent = report.complete
    ? t("audit_complete", {
        reason: t(`event_reason_${report.end_reason}`),
        scores: scoresText(report.final_scores),
      })
    : t("audit_incomplete");
  $("replay-link").href = `/deals/${dealId}/replay`;
  $("to-broken").hidden = brokenSteps(report).length === 0;
}

// --- the deck, the hands, the stock -----------------------------------------------------------

function showCards() {
  const facts = element("div", { class: "facts" });
  facts.append(
    element("p", {}, element("strong", { text: t("audit_commitment") }), " ", element("code", { text: audit.commitment ?? "" })),
  );
  if (audit.seed) {
    facts.append(element("p", {}, element("strong", { text: t("audit_seed") }), " ", element("code", { text: audit.seed })));
  }
  if (audit.stacked_deck) facts.append(cardsDetails(t("audit_stacked_deck"), audit.stacked_deck));
  if (audit.deck) facts.append(cardsDetails(t("audit_deck"), audit.deck));
  if (audit.stock_after_cut) facts.append(cardsDetails(t("audit_stock_after_cut"), audit.stock_after_cut));
  if (audit.dealt) {
    facts.append(element("h3", { text: t("audit_dealt") }), handsBlock(audit.dealt, namesAfter(1)));
  }
  if (audit.final) {
    facts.append(
      element("h3", { text: t("audit_hands_at", { step: audit.folded_to }) }),
      handsBlock(audit.final.hands, namesAfter(Number(audit.folded_to))),
      cardsDetails(t("audit_stock"), audit.final.stock),
      cardsDetails(t("audit_pile"), audit.final.pile_cards),
    );
  }
  $("card-facts").replaceChildren(facts);
}

// --- the history ------------------------------------------------------------------------------

// The state at a step (GET /audit/deals/{id}/replay?step=N), into `box`.
async function loadState(step, box) {
  box.replaceChildren(element("p", { class: "muted", text: t("audit_loading") }));
  try {
    const state = await api("GET", `/audit/deals/${dealId}/replay?step=${step}`);
    box.replaceChildren(
      element("h4", { text: t("audit_hands_at", { step }) }),
      handsBlock(state.hands, namesAfter(step)),
      cardsDetails(t("audit_stock"), state.stock),
      cardsDetails(t("audit_pile"), state.pile_cards),
    );
  } catch (error) {
    box.replaceChildren(element("p", { class: "error", text: errorText(error) }));
  }
}

// What is wrong at this step, when it is the first broken link.
function brokenNote(step) {
  const report = audit.audit;
  const note = element("div", { class: "broken-note" });
  note.append(element("p", { class: "broken-title", text: t("audit_first_broken") }));
  if (report.first_broken_step === step) note.append(element("p", { text: t("audit_chain_breaks_here") }));
  if (audit.unreadable_step === step) note.append(element("p", { text: t("audit_unreadable", { step }) }));
  if (report.first_mismatch_step === step) {
    note.append(element("p", { text: t("audit_rules_disagree_here", { message: said(report.worded, "message", report.message) }) }));
    if (report.command) {
      note.append(element("p", {}, t("audit_command"), " ", element("code", { text: report.command })));
    }
    note.append(
      element(
        "div",
        { class: "compare" },
        element(
          "div",
          {},
          element("h4", { text: t("audit_expected") }),
          report.expected ? json(report.expected) : element("p", { text: t("audit_expected_none") }),
        ),
        element("div", {}, element("h4", { text: t("audit_stored") }), json(report.stored)),
      ),
    );
  }
  return note;
}

function eventRow(record, broken, next = null, who = names, previous = null) {
  const step = record.step;
  const at = record.at ? new Date(record.at) : null;
  const row = element(
    "li",
    { class: broken ? "event broken" : "event", "data-step": step, "data-kind": record.kind, tabindex: broken ? "-1" : null },
    element(
      "div",
      { class: "event-head" },
      element("span", { class: "step-no", text: t("audit_step", { step }) }),
      element("span", { class: "words" }, ...spokenText(describeEvent(record, who, next, previous), sayEvent(record, who, next, previous))),
      at && !Number.isNaN(at.getTime())
        ? element("time", { datetime: record.at, class: "muted", text: at.toLocaleTimeString() })
        : "",
    ),
  );
  if (broken) row.append(brokenNote(step));
  const state = element("div", { class: "state" });
  const details = element(
    "details",
    {},
    // Named with its step for a screen reader: Tab went through a row of summaries all named
    // "The stored record and every hand at this step".
    element("summary", { text: t("audit_details"), "aria-label": `${t("audit_details")} (${t("audit_step", { step })})` }),
    json(record),
    state,
  );
  details.addEventListener("toggle", () => {
    if (details.open && !state.dataset.loaded) {
      state.dataset.loaded = "true";
      loadState(step, state);
    }
  });
  row.append(details);
  return row;
}

function showHistory() {
  const broken = brokenSteps(audit.audit);
  const records = audit.events ?? [];
  const rows = records.map((record, i) =>
    eventRow(record, broken.includes(record.step), records[i + 1], playedBy[i] ?? names, records[i - 1]));
  const unreadable = audit.unreadable_step;
  if (unreadable && !records.some((record) => record.step === unreadable)) {
    rows.push(eventRow({ step: unreadable, kind: "?" }, true));
  }
  $("audit-events").replaceChildren(...rows);
  $("fold-error").hidden = !audit.fold_error;
  $("fold-error").textContent = audit.fold_error
    ? t("audit_fold_error", { message: said(audit.worded, "fold_error", audit.fold_error) })
    : "";
}

function firstBrokenRow() {
  return document.querySelector("#audit-events li.broken");
}

function goToBroken() {
  const row = firstBrokenRow();
  if (!row) return;
  row.scrollIntoView({ block: "center" });
  row.focus({ preventScroll: true });
}

// --- the page ---------------------------------------------------------------------------------

function draw() {
  document.title = t("audit_title", { number: audit?.number ?? "" });
  if (!audit) return;
  nameSeats();
  showVerdict();
  showCards();
  showHistory();
}

// Said again in the language the reader switches to (showSaid).
function refuse(error) {
  showSaid($("refused-text"), () => errorNodes(error)); // the code: a link to the rules
  const hint = { 401: "audit_sign_in", 403: "audit_not_auditor" }[error.status];
  showSaid($("refused-hint"), () => (hint ? [t(hint), " ", element("a", { href: "/", text: t("audit_lobby") })] : []));
  $("refused").hidden = false;
}

// His session ended elsewhere (session_end.js), a step's read refused 401: the audit (every
// hand of the deal) leaves the page, the notice alone stays, with the way back through the
// sign-in. Another name: the page is read again as his (it may not be an auditor's).
function signedOutHere(name) {
  if (name !== null) {
    location.reload();
    return;
  }
  audit = null;
  showWho(null);
  showSignedOut({
    textKey: "page_session_closed", linkKey: "page_sign_in_again", place: (node) => $("page").replaceChildren(node),
  });
}

async function start() {
  await setUpLanguage($("lang"), async () => draw());
  const me = await whoAmI();
  showWho(me);
  if (me) watchSession(() => me, signedOutHere);
  try {
    audit = await api("GET", `/audit/deals/${dealId}`);
  } catch (error) {
    document.title = t("audit_refused");
    refuse(error);
    document.body.dataset.ready = "true";
    return;
  }
  if (audit.table) {
    try {
      table = await api("GET", `/tables/${audit.table}`);
    } catch {
      table = null; // seat numbers instead of names
    }
  }
  draw();
  for (const id of ["verdict", "cards", "history"]) $(id).hidden = false;
  $("to-broken").addEventListener("click", goToBroken);
  goToBroken();
  document.body.dataset.ready = "true";
}

start();
