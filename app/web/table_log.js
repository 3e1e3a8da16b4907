// The table page's log (docs/web.md): one line per event of the deal's stream, in words, from
// the event's `kind` and fields (catalogue keys table_log_*). The stream tells each viewer only
// what he may see (a player's own drawn cards, nobody else's), and so does the log.

import { cardText, element, t } from "./common.js";
import { seatName } from "./deal_render.js";

const list = (codes) => codes.map(cardText).join(" ");

// The event in words; `names` are the players' names per room seat.
export function logText(event, names) {
  const name = event.seat === undefined || event.seat === null ? "" : seatName(event.seat, names);
  switch (event.kind) {
    case "Started":
      return t("table_log_started", {
        number: event.number, dealer: seatName(event.dealer, names), cutter: seatName(event.cutter, names),
      });
    case "DeckCut":
      return t("table_log_cut", { name, n: event.n });
    case "CardsDealt":
      return event.cards
        ? t("table_log_dealt_you", { cards: list(event.cards) })
        : t("table_log_dealt");
    case "PonytailsDealt":
      return t("table_log_ponytails");
    case "PonytailPickedUp":
      return t("table_log_ponytail_picked", { name, count: event.count ?? event.cards?.length ?? 0 });
    case "CardsDrawn": {
      const key = event.replacement ? "table_log_replaced" : "table_log_drew";
      const text = t(key, { name, count: event.count ?? event.cards?.length ?? 0 });
      return event.cards ? `${text} ${t("table_log_you_got", { cards: list(event.cards) })}` : text;
    }
    case "RedThreeLaid":
      return t("table_log_red_three", { name, card: cardText(event.card) });
    case "CardTurnedUp":
      return t(event.crosswise ? "table_log_turned_crosswise" : "table_log_turned", { card: cardText(event.card) });
    case "PlayStarted":
      return t("table_log_play_started", { name });
    case "PartnerAsked":
      return t("table_log_asked", { name, partner: seatName(event.partner, names) });
    case "PartnerAnswered":
      return t(event.yes ? "table_log_answered_yes" : "table_log_answered_no", { name });
    case "PileTaken":
      return t("table_log_pile_taken", { name, size: event.size, card: cardText(event.top) });
    case "MeldLaid":
      return t("table_log_meld", { name, cards: list(event.cards) });
    case "MeldExtended":
      return t("table_log_meld_extended", { name, cards: list(event.cards), rank: event.rank });
    case "CardDiscarded":
      return t("table_log_discard", { name, card: cardText(event.card) });
    case "WentOut":
      return t(event.concealed ? "table_log_went_out_concealed" : "table_log_went_out", { name });
    case "PileDeclined":
      return t("table_log_declined", { name });
    case "DealScored":
      return t("table_log_scored", {
        scores: Object.entries(event.scores).sort()
          .map(([side, score]) => `${t("side", { side })} ${score.total}`).join(", "),
      });
    case "DealAbandoned":
      return t("table_log_abandoned");
    default:
      return event.kind;
  }
}

// The log's line for one event (li[data-step][data-kind]).
export function logItem(event, names) {
  const item = element("li", { text: logText(event, names) });
  item.dataset.step = String(event.step);
  item.dataset.kind = event.kind;
  return item;
}
