// The table page once its browser's session has ended elsewhere (docs/web.md, "Signed out
// elsewhere"): signed out on another page or device (DELETE /sessions, ?others=true), closed
// by a new token (POST /me/token, `canasta revoke-token`) or expired. The page learns it from
// a 401 to one of its requests, or from a stream that fails to reopen; only then does it ask
// GET /sessions/current (which also clears the cookie the server no longer knows), never on a
// timer. Nobody any more: `ended()` (table.js) takes his hand and his private log off the page,
// stops his moves, and watches on as a spectator where the table allows it; the notice
// (#signed-out) says so and links to the lobby's sign-in, which brings him back here.

import { $, api, onUnauthorized } from "./common.js";

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

// The notice (#signed-out, role=alert) with its link to the lobby's sign-in, which comes back
// to this page (`/?back=/tables/<id>`, lobby.js).
export function showSignedOut() {
  $("sign-in-again").href = `/?back=${encodeURIComponent(location.pathname)}`;
  $("signed-out").hidden = false;
}
