// The live streams the table page follows (docs/web.md, "Live"): GET /deals/{id}/stream and
// GET /tables/{id}/stream, each an EventSource that the page reopens itself and watches.
//
// Reopened by the page, not by the browser's own retry: an EventSource whose answer is not a
// stream (a reverse proxy's 502 while the server restarts) is given up for good by the browser.
// A dropped connection is reopened after REOPEN_MS (twice as long after each attempt that
// failed to open, up to MAX_REOPEN_MS; each wait drawn between half and the whole of that, so
// that the pages that lost a server at the same moment do not all come back at the same
// moment) at the address `url()` gives then (the page's ?after=<the last step it shows>:
// nothing missed, nothing twice). Sooner when the server is known to be back: the page's own
// request answered by it (common.js, onServerAnswer), or the browser back online.
//
// Watched: a connection may die without a word (a laptop's lid closed and opened, a Wi-Fi
// switch, a NAT or proxy that forgets an idle connection without closing it), and the browser
// then keeps the EventSource "open" for many minutes while nothing comes. The stream is asked
// for heartbeats JavaScript sees (?heartbeat=event: `event: heartbeat` messages, the first at
// once, whose data says the server's interval, docs/api.md), and a stream silent for
// longer than silenceLimitMs(interval) is taken for dead: closed and reopened like a dropped one.

import { onServerAnswer } from "./common.js";

const REOPEN_MS = 1500;
const MAX_REOPEN_MS = 10_000;
// The silence allowed before the stream's first heartbeat has said the server's interval.
const FIRST_SILENCE_MS = 45_000;
// How often the page looks at how long each stream has been silent.
const CHECK_MS = 1000;

// How long a stream may stay silent: twice the server's heartbeat interval and 5 s more (a
// heartbeat is due after `seconds` of silence; the server looks once a second whether it is):
// 35 s with the default 15 s.
export function silenceLimitMs(seconds) {
  return (2 * seconds + 5) * 1000;
}

// Follows a stream until `close()` or its `end`. `url()`: the address to open (asked at each
// opening); `kinds`: the event kinds to listen to, each message given to `onEvent(message)`;
// `onOpen(reopened)` once it is open (again); `onEnd()` after its `end`; `onLost(opened)` when its
// connection dropped or went silent, before the page reopens it (`opened` false: an attempt to
// reopen it failed, as one refused 401 after its session ended elsewhere does).
export function followStream({ url, kinds, onEvent, onOpen = () => {}, onEnd = () => {}, onLost = () => {} }) {
  let live = null; // { source, opened, failures, heard, limit }: the connection open now
  let closed = false;
  let reopening = null; // { timer, at, failures }: the next attempt (due at `at`), while awaited
  let lastOpen = 0; // when the last attempt began (Date.now())
  let backAt = 0; // when the server was last seen to be back (serverBack)

  function open(failures, reopened) {
    lastOpen = Date.now();
    const address = url();
    const source = new EventSource(`${address}${address.includes("?") ? "&" : "?"}heartbeat=event`);
    const connection = {
      source, opened: false, failures, began: lastOpen, heard: Date.now(), limit: FIRST_SILENCE_MS,
    };
    live = connection;
    const heard = () => { connection.heard = Date.now(); };
    for (const kind of kinds) {
      source.addEventListener(kind, (message) => {
        heard();
        onEvent(message);
      });
    }
    source.addEventListener("heartbeat", (message) => {
      heard();
      const seconds = Number(JSON.parse(message.data).seconds);
      if (seconds > 0) connection.limit = silenceLimitMs(seconds);
    });
    source.addEventListener("end", () => {
      close();
      onEnd();
    });
    source.addEventListener("open", () => {
      heard();
      connection.opened = true;
      onOpen(reopened);
    });
    source.addEventListener("error", () => lost(connection));
  }

  // Again and again while it fails (a server away, a session ended), waiting longer each time.
  function lost(connection) {
    if (closed || live !== connection) return;
    connection.source.close();
    live = null;
    onLost(connection.opened);
    const tries = connection.opened ? 0 : connection.failures + 1;
    const grown = Math.min(REOPEN_MS * 2 ** tries, MAX_REOPEN_MS);
    let wait = grown / 2 + Math.random() * (grown / 2);
    // An attempt that never opened, and the server was seen back while it was under way: it
    // began while the server was away, so its failure says nothing of the server now (a sign
    // of it that came meanwhile found no stream waiting, and was lost: the stream waited up to
    // 10 s more). (A stream that was open and dropped waits as ever: the page's reads answered
    // while it was open say nothing of why it dropped.)
    if (!connection.opened && backAt >= connection.began) wait = Math.min(wait, soonest());
    schedule(wait, tries);
  }

  // The next attempt in `wait` ms.
  function schedule(wait, failures) {
    const timer = setTimeout(() => reopen(), wait);
    reopening = { timer, at: Date.now() + wait, failures };
  }

  // How long until an attempt is allowed again: at most one in REOPEN_MS.
  function soonest() {
    return Math.max(0, lastOpen + REOPEN_MS - Date.now());
  }

  function reopen() {
    if (closed || reopening === null) return;
    clearTimeout(reopening.timer);
    const { failures } = reopening;
    reopening = null;
    open(failures, true);
  }

  // The server is back (it answered the page) or the network is: a stream waiting to be
  // reopened is reopened now, or as soon as once in REOPEN_MS allows (the page's read that
  // shows the server back often comes right after an attempt: skipped, that sign was lost and
  // the stream waited up to 10 s more); one under way is tried again so if it fails (`lost`).
  // Its wait goes on growing should the stream itself still fail to open after the server was
  // seen back (e.g. behind a proxy that has not found the server yet).
  function serverBack() {
    backAt = Date.now();
    if (reopening === null) return;
    const wait = soonest();
    if (wait === 0) reopen();
    else if (Date.now() + wait < reopening.at) {
      clearTimeout(reopening.timer);
      schedule(wait, reopening.failures);
    }
  }
  const stopListening = onServerAnswer(serverBack);
  window.addEventListener("online", serverBack);

  // A laptop woken from sleep runs this late: the silence measured then is long, and the stream
  // is reopened at once.
  const watch = setInterval(() => {
    if (live && Date.now() - live.heard > live.limit) lost(live);
  }, CHECK_MS);

  function close() {
    closed = true;
    live?.source.close();
    live = null;
    clearInterval(watch);
    if (reopening !== null) clearTimeout(reopening.timer);
    reopening = null;
    stopListening();
    window.removeEventListener("online", serverBack);
  }

  open(0, false);
  return { close };
}
