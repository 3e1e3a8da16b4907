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
// `onOpen(reopened)` once it is open (again); `onEnd()` after its `end`; `onLost()` when its
// connection dropped or went silent, before the page reopens it.
export function followStream({ url, kinds, onEvent, onOpen = () => {}, onEnd = () => {}, onLost = () => {} }) {
  let live = null; // { source, opened, failures, heard, limit }: the connection open now
  let closed = false;
  let reopening = null; // { timer, failures }: the next attempt, while one is awaited
  let lastOpen = 0; // when the last attempt began (Date.now())

  function open(failures, reopened) {
    lastOpen = Date.now();
    const address = url();
    const source = new EventSource(`${address}${address.includes("?") ? "&" : "?"}heartbeat=event`);
    const connection = { source, opened: false, failures, heard: Date.now(), limit: FIRST_SILENCE_MS };
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
    onLost();
    const tries = connection.opened ? 0 : connection.failures + 1;
    const wait = Math.min(REOPEN_MS * 2 ** tries, MAX_REOPEN_MS);
    const timer = setTimeout(() => reopen(), wait / 2 + Math.random() * (wait / 2));
    reopening = { timer, failures: tries };
  }

  function reopen() {
    if (closed || reopening === null) return;
    clearTimeout(reopening.timer);
    const { failures } = reopening;
    reopening = null;
    open(failures, true);
  }

  // The server is back (it answered the page) or the network is: a stream waiting to be
  // reopened is reopened now, at most once in REOPEN_MS (its wait goes on growing should the
  // stream itself still fail to open, e.g. behind a proxy that has not found the server yet).
  function serverBack() {
    if (reopening !== null && Date.now() - lastOpen >= REOPEN_MS) reopen();
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
