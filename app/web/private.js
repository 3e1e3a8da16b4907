// Private tables in the lobby (docs/tables.md, docs/web.md): the create form's two boxes, the
// invitation link shown once to the host, joining by an invitation link
// (/#invite=<table>:<code>: after the "#", which a browser never sends, so the code reaches
// neither the server's nor a proxy's access log; /?invite= links still work), and the
// private tables this browser created or joined (the lobby never lists them), remembered in
// localStorage by id only (never a code).

import { $, Refused, api, t } from "./common.js";

const REMEMBERED = "canasta.private_tables";

// The create form's privacy fields of POST /tables.
export function privacyBody() {
  return { private: $("create-private").checked, spectators: $("create-spectators").checked };
}

function remembered() {
  try {
    const ids = JSON.parse(localStorage.getItem(REMEMBERED) ?? "[]");
    return Array.isArray(ids) ? ids.filter((id) => typeof id === "string") : [];
  } catch {
    return [];
  }
}

function remember(ids) {
  localStorage.setItem(REMEMBERED, JSON.stringify([...new Set(ids)].slice(-20)));
}

export function rememberTable(id) {
  remember([...remembered(), id]);
}

// An invitation link: the code after the "#" (never sent to any server, nor in a Referer).
export function inviteLink(table, code) {
  const link = new URL("/", window.location.href);
  link.hash = `invite=${table}:${code}`;
  return link.href;
}

// The invitation in an address: its "#invite=", else an older link's "?invite=".
export function invitationIn(url) {
  const fragment = new URLSearchParams(url.hash.slice(1)).get("invite");
  return fragment ?? url.searchParams.get("invite");
}

// The host's answer to POST /tables: a private table's code, shown once as a link.
export function showInvite(id, code) {
  rememberTable(id);
  $("invite-link").value = inviteLink(id, code);
  $("invite-box").hidden = false;
  $("invite-link").focus();
  $("invite-link").select();
}

// "<table>:<code>" from an invitation link, or as it is; null if it is neither.
export function parseInvite(text) {
  let value = text.trim();
  try {
    value = invitationIn(new URL(value)) ?? value;
  } catch {
    // not a link: the pair itself
  }
  const match = /^([0-9a-f-]{36}):([A-Za-z0-9_-]+)$/i.exec(value);
  return match ? { table: match[1], invite: match[2] } : null;
}

// The tables this browser created or joined that the lobby does not list (private, or
// without spectators once started) and that are still open or in play, as GET /tables/{id}
// shows them; any other is forgotten (over, gone, listed, or not shown to this player).
export async function privateTables() {
  const tables = [];
  const kept = [];
  for (const id of remembered()) {
    try {
      const table = await api("GET", `/tables/${id}`);
      if (table.status !== "open" && table.status !== "playing") continue;
      if (!table.private && table.spectators) continue; // the lobby lists it
      table.free_seats = table.seats.filter((name) => name === null).length;
      tables.push(table);
      kept.push(id);
    } catch {
      // 404 or 403: nothing to show
    }
  }
  remember(kept);
  return tables.reverse();
}

// Wires the invitation box and the join form; ``act`` and ``notice`` are the lobby's.
export function setUpPrivate(act, notice) {
  $("invite-copy").addEventListener("click", async () => {
    $("invite-link").select();
    await navigator.clipboard?.writeText($("invite-link").value).catch(() => {});
    notice("private_copied");
  });
  $("invite-done").addEventListener("click", () => {
    $("invite-link").value = "";
    $("invite-box").hidden = true;
  });
  const field = $("join-private-invite");
  const given = invitationIn(new URL(window.location.href));
  if (given) field.value = given;
  window.addEventListener("hashchange", () => {
    const pasted = invitationIn(new URL(window.location.href)); // a link opened in this tab
    if (pasted) field.value = pasted;
  });
  $("join-private-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(async () => {
      const parsed = parseInvite(field.value);
      if (parsed === null) throw new Refused(0, "invite", () => t("private_join_bad")); // not sent
      const { seat } = await api("POST", `/tables/${parsed.table}/seats`, {
        body: { invite: parsed.invite },
      });
      rememberTable(parsed.table);
      field.value = "";
      window.history.replaceState(null, "", window.location.pathname); // the code leaves the address
      notice("seated", { seat: seat + 1 });
    });
  });
}
