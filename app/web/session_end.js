// A page that shows a signed-in view (the table page, the replay, the audit) once its browser's
// session has ended elsewhere (docs/web.md, "Signed out elsewhere"): signed out on another page
// or device (DELETE /sessions, ?others=true), closed by a new token (POST /me/token, `canasta
// revoke-token`) or expired. The page learns it from a 401 to one of its requests, or (the
// table page) from a stream that fails to reopen; only then does it ask GET /sessions/current
// (which also clears the cookie the server no longer knows), never on a timer. Nobody any
// more: the page's `ended()` takes what only he could see off the page, and the notice
// (#signed-out, role=alert) says so and links to the lobby's sign-in, which brings him back
// to this page (`/?back=<this page>`, lobby.js).

import { $, api, element, onUnauthorized, t } from "./common.js";

// Calls `ended(name)` when GET /sessions/current no longer names `me()` (name null: nobody).
// Returns the check, for the page's other signs (a stream that failed to reopen). One question
// at a time; an unanswered one (the server away) says nothing.
export function watchSession(me, ended) {
  let asking = null;
  async function check() {
    if (me() === null || asking) return;
    asking = (async () => {
      let session;
      try {
        session = await api("GET", "/sessions/current");
      } catch {
        return; // not answered: nothing is known
      }
      const name = session?.name ?? null;
      if (name !== me()) ended(name);
    })();
    try {
      await asking;
    } finally {
      asking = null;
    }
  }
  onUnauthorized(check);
  return check;
}

// The notice, made once and put by `place(notice)`: `textKey` says what ended, `linkKey` the
// way back (its words in the page's language, again on a language switch: data-i18n).
export function showSignedOut({ textKey, linkKey, place }) {
  let notice = $("signed-out");
  if (!notice) {
    notice = element(
      "div", { id: "signed-out", class: "signed-out", role: "alert" },
      element("p", { "data-i18n": textKey }, t(textKey)),
      element("a", { id: "sign-in-again", class: "button", "data-i18n": linkKey }, t(linkKey)),
    );
    place(notice);
  }
  $("sign-in-again").href = `/?back=${encodeURIComponent(location.pathname)}`;
  return notice;
}
