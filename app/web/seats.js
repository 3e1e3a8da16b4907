// Who plays each seat, and the absent players' controls on the table page (docs/tables.md,
// "Absent players"; docs/web.md): a seated player leaves his seat (#leave-seat, then
// #leave-confirm or #leave-cancel) or takes it back (#take-back); the host gives a vacant seat to another player (#give-player-N with
// #give-seat-N). The server refuses anything else anyway.

import { botNote, confirmation, element, t } from "./common.js";
import { playerText, seatName } from "./words.js";

const STAND_IN = /^bot:\w+:\d+:for:(.+)$/; // the bot playing a seat for its absent player

// " (away: the basic bot (for bob) plays)" after an absent player's name, or "".
export function awayNote(table, seat) {
  const playing = table?.playing?.[seat];
  return playing?.away ? ` (${t("seats_away", { player: playerText(playing.player) })})` : "";
}

// What "Leave my seat" asks: before the start, the seat becomes free; the host is not told
// that the host may give it away (never his own, docs/tables.md); and a player who leaves a
// table where nobody else plays (every other seat a bot's or away, the host gone or himself)
// is told that the bots then play the game to its end, opening each deal themselves.
function leaveQuestion(table, me, mine) {
  if (table.status === "open") return "seats_leave_question_open";
  const away = (seat) => Boolean(table.playing?.[seat]?.away);
  const hostSeat = table.seats.indexOf(table.host);
  const nobodyElse = table.seats.every((name, seat) => seat === mine || Boolean(table.bots?.[seat]) || away(seat));
  if (nobodyElse && (table.host === me || hostSeat < 0 || away(hostSeat))) return "seats_leave_question_alone";
  return table.host === me ? "seats_leave_question_host" : "seats_leave_question";
}

// The panel: one line per seat during the game, and the buttons that apply to `me`.
// `act(method, path, body)` sends one request and reads the table again.
export function renderSeats(panel, table, me, act) {
  const live = table && (table.status === "open" || table.status === "playing");
  const mine = table?.seats.indexOf(me) ?? -1;
  const isHost = me !== null && me === table?.host;
  const vacant = (table?.playing ?? []).map((p) => p.away);
  panel.hidden = !live || (mine < 0 && !(isHost && vacant.some(Boolean)));
  if (panel.hidden) {
    panel.replaceChildren();
    delete panel.dataset.drawn;
    return;
  }
  // render() runs on every event of the deal (bots may play several a second): the panel is
  // drawn again only when what it shows changed, so that a button is never replaced under
  // the pointer between a press and its release (the click would be lost).
  const leaving = mine >= 0 && !vacant[mine] && panel.dataset.confirmLeave === "true";
  if (!leaving) delete panel.dataset.confirmLeave;
  const drawn = JSON.stringify([
    document.documentElement.lang, me, table.id, table.status, table.host, table.seats,
    table.playing, table.bots, leaving,
  ]);
  if (panel.dataset.drawn === drawn) return;
  panel.dataset.drawn = drawn;
  const parts = [element("h2", { id: "seats-heading", text: t("seats_heading") })];
  if (table.status === "playing") {
    parts.push(element("ul", { class: "seats" }, ...table.playing.map((playing, seat) => {
      const since = playing.since ? ` · ${t("seats_since", { time: new Date(playing.since).toLocaleTimeString() })}` : "";
      return element("li", { "data-seat-play": String(seat), "data-away": String(playing.away) },
        `${t("seat", { number: seat + 1 })}: ${table.seats[seat] ?? ""}${botNote(table, seat)}${awayNote(table, seat)}${since}`);
    })));
  }
  const buttons = [];
  // Leaving is asked twice (one tap among the other buttons gave the seat away mid-game:
  // to the bot, or by the host to somebody else); the focus goes to "no", the safe answer.
  const again = (confirm, focus) => {
    if (confirm) panel.dataset.confirmLeave = "true";
    else delete panel.dataset.confirmLeave;
    renderSeats(panel, table, me, act);
    document.getElementById(focus)?.focus();
  };
  if (leaving) {
    buttons.push(...confirmation({
      question: t(leaveQuestion(table, me, mine)),
      yes: t("seats_leave_confirm"),
      no: t("seats_leave_cancel"),
      yesId: "leave-confirm",
      noId: "leave-cancel",
      onYes: () => {
        delete panel.dataset.confirmLeave;
        const notice = table.status === "open" ? "seats_left_notice_open" : "seats_left_notice";
        act("POST", `/tables/${table.id}/leave`, undefined, notice);
      },
      onNo: () => again(false, "leave-seat"),
    }));
  } else if (mine >= 0 && !vacant[mine]) {
    const leave = element("button", { type: "button", id: "leave-seat", class: "secondary", text: t("seats_leave") });
    leave.addEventListener("click", () => again(true, "leave-cancel"));
    buttons.push(leave);
  }
  if (mine >= 0 && vacant[mine]) {
    const back = element("button", { type: "button", id: "take-back", text: t("seats_take_back") });
    back.addEventListener("click", () => act("POST", `/tables/${table.id}/seats`, {}));
    buttons.push(back);
  }
  if (isHost && table.status === "playing") {
    vacant.forEach((away, seat) => {
      // His own seat is not given: he takes it back (409 host_seat, docs/tables.md).
      if (!away || table.seats[seat] === table.host) return;
      const id = `give-player-${seat}`;
      const input = element("input", { id, type: "text", maxlength: "32", autocomplete: "off" });
      const give = element("button", { type: "button", id: `give-seat-${seat}`, text: t("seats_give") });
      give.addEventListener("click", () => act("POST", `/tables/${table.id}/seats/${seat}/give`, { player: input.value.trim() }));
      // One group per seat, under the player's own button: the label over its field, and
      // the button on the field's line (they sat loose in the row of "Leave my seat").
      buttons.push(element("div", { class: "give-seat" },
        element("label", { for: id, text: t("seats_give_label", { number: seat + 1 }) }),
        element("div", { class: "give-row" }, input, give)));
    });
  }
  parts.push(element("div", { class: "actions" }, ...buttons));
  // When the panel is drawn again, what the host typed in a name field, and the keyboard
  // focus, stay as they were.
  const typed = new Map([...panel.querySelectorAll("input")].map((input) => [input.id, input.value]));
  const focused = panel.contains(document.activeElement) ? document.activeElement.id : null;
  panel.replaceChildren(...parts);
  for (const input of panel.querySelectorAll("input")) input.value = typed.get(input.id) ?? "";
  if (focused) document.getElementById(focused)?.focus();
}

// The seats' names for each event of a deal's log (`events` in order), as they were played
// when it happened: `base` per seat (the table's seats, a seated bot's with its level), and a
// seat the bot played for its absent player named after him, "the basic bot (for bob)". The
// deal's Started says who played each seat from the start (`player_ids`), its
// SeatPlayerChanged events who played from then on; a change's own line names the seat as it
// was before it. Without Started (an older server), a seat's first change says who played
// before it, and a seat with no change that the bot plays now (`standIns`: per seat the bot's
// name or null) is taken for the bot's from the start.
export function logNamesByEvent(events, base, standIns = []) {
  const named = (player, seat) => (STAND_IN.test(String(player)) ? playerText(player)
    : player && !String(player).startsWith("bot:") ? player : base[seat]);
  const started = events.find((event) => event.kind === "Started")?.player_ids;
  const changes = events.filter((event) => event.kind === "SeatPlayerChanged");
  const now = base.map((name, seat) => {
    if (started) return named(started[seat], seat);
    const first = changes.find((event) => event.seat === seat);
    if (!first) return standIns[seat] ? playerText(standIns[seat]) : name;
    const forWhom = STAND_IN.exec(String(first.player));
    if (forWhom) return forWhom[1]; // left or missed turns: the person played until then
    return playerText(`bot:basic:${seat}:for:${first.reason === "taken_back" ? first.player : seatName(seat)}`);
  });
  const { during } = clockRuns(events);
  return events.map((event, index) => {
    const names = [...now];
    // The rest of a timed-out turn is the basic bot's: "the basic bot (for fay) took the pile".
    if (event.kind !== "end") {
      for (const seat of during[index]) names[seat] = playerText(`bot:basic:${seat}:for:${seatName(seat, names)}`);
    }
    if (event.kind === "SeatPlayerChanged") now[event.seat] = named(event.player, event.seat);
    return names;
  });
}

// The events that end a seat's turn, answer or cut (domain/state.py, DealState._acted).
const ACTS = new Set(["DeckCut", "PartnerAnswered", "CardDiscarded", "WentOut"]);

// The turn clock in a deal's events (docs/tables.md, "Turn clock"), as the server folds them
// (DealState.timed_out and .missed): `during`, per event, the seats whose timed-out turn the
// basic bot is playing when it happens (from the event after the seat's TurnTimedOut to the
// one that ends that turn, or a change of who plays the seat); `missed`, after the last
// event, each seat's turns missed in a row in this deal (by seat; a turn played puts it to 0).
export function clockRuns(events) {
  let out = new Set();
  const missed = {};
  const during = [];
  for (const event of events) {
    const seat = event.seat;
    if (event.kind === "SeatPlayerChanged") {
      out.delete(seat);
      missed[seat] = 0;
    }
    during.push([...out]);
    if (event.kind === "TurnTimedOut") {
      out.add(seat);
      missed[seat] = (missed[seat] ?? 0) + 1;
    } else if (ACTS.has(event.kind)) {
      if (!out.has(seat)) missed[seat] = 0;
      if (event.kind === "CardDiscarded" || event.kind === "WentOut") out = new Set(); // the turn passes
      else out.delete(seat);
    }
  }
  return { during, missed };
}
