"""``python -m benchmarks.web``: the table page's weight and its time to the first card, measured
in a real browser (``make bench`` runs it too).

A real ``uvicorn app.main:app`` (one process, SQLite in a temporary directory, as ``make run``
starts it) holds a classic table of four, played from the move menus over HTTP to the middle of
its first deal. Debian's Chromium (through Playwright, as in ``tests/web``) then opens
``/tables/{id}`` again and again, each time in a fresh browser context (an empty cache: a
first visit), as a seated player and as a spectator, and measures:

- the **page weight**: the bytes of every response the page received until its first card was
  shown and the network was idle (headers and bodies, as Chromium counts them; the live stream
  is counted with what it had sent by then), by kind of file;
- the **time to the first card**: from the start of the navigation (``performance.now()`` 0) to
  the moment a card (``[data-card]``) is in the page, seen by a ``MutationObserver`` installed
  before the page's own scripts run;
- the **anchor**, in the same run and the same browser: the round trip of one ``fetch`` of the
  view (``GET /deals/{id}``) from the opened page. The machine is noisy: the time to the first
  card is reported as well as a multiple of that round trip.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Request, sync_playwright

from app.autoplay import menu_choice
from benchmarks.menu import server

CHROMIUM = Path(os.environ.get("CANASTA_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: Records when the first card enters the page (before the page's own scripts run).
FIRST_CARD = """
window.__firstCard = null;
new MutationObserver((_, observer) => {
  if (window.__firstCard === null && document.querySelector("[data-card]")) {
    window.__firstCard = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""
VIEWPORT = {"width": 1280, "height": 900}


def table_mid_deal(http: httpx.Client, steps: int, seed: int) -> tuple[str, str, list[str]]:
    """A classic table of four, its first deal played ``steps`` commands from the menus; the
    table's id, the deal's and the players' tokens."""
    rng = random.Random(f"web-bench:{seed}")
    prefix = f"w{seed}-{rng.randrange(10**6)}-"
    tokens = []
    for i in range(4):
        answer = http.post("/players", json={"name": f"{prefix}{i}"})
        answer.raise_for_status()
        tokens.append(answer.json()["token"])
    auth = [{"Authorization": f"Bearer {token}"} for token in tokens]
    table = http.post("/tables", json={"entry": "classic", "players": 4}, headers=auth[0])
    table.raise_for_status()
    table_id = table.json()["id"]
    for seat in range(4):
        http.post(f"/tables/{table_id}/seats", json={"seat": seat}, headers=auth[seat])
    deal_id = http.post(f"/tables/{table_id}/start", headers=auth[0]).json()["deal"]
    for _ in range(steps):
        for seat in range(4):
            menu = http.get(f"/deals/{deal_id}/moves", headers=auth[seat]).json()
            if menu["moves"]:
                break
        else:
            break  # the deal ended
        moves = menu["moves"]
        body = {
            "seq": menu["next_seq"],
            "expect": menu["expect"],
            "command": moves[menu_choice([m["type"] for m in moves], rng)],
        }
        http.post(f"/deals/{deal_id}/commands", json=body, headers=auth[seat]).raise_for_status()
    return table_id, deal_id, tokens


def kind_of(request: Request) -> str:
    path = request.url.split("?")[0]
    for suffix, kind in ((".js", "scripts"), (".css", "styles"), (".json", "strings")):
        if path.endswith(suffix) and "/web/" in path:
            return kind
    if request.resource_type == "document":
        return "page"
    if "/stream" in path:
        return "stream"
    return "API"


def visit(
    browser: Browser, base: str, table_id: str, deal_id: str, token: str | None
) -> dict[str, Any]:
    """One first visit of the table page; the bytes by kind, the first card's time and the
    view's round trip (ms)."""
    context = browser.new_context(base_url=base, viewport=VIEWPORT)  # type: ignore[arg-type]
    try:
        if token is not None:  # signed in as the page would be: a session cookie
            signed_in = context.request.post(
                "/sessions", headers={"Authorization": f"Bearer {token}", "X-Canasta-CSRF": "1"}
            )
            if not signed_in.ok:
                raise SystemExit(f"POST /sessions: {signed_in.status} {signed_in.text()}")
        page = context.new_page()
        page.add_init_script(FIRST_CARD)
        finished: list[Request] = []
        page.on("requestfinished", lambda request: finished.append(request))
        page.goto(f"/tables/{table_id}")
        page.wait_for_function("window.__firstCard !== null", timeout=30_000)
        page.wait_for_load_state("networkidle")
        first_card = float(page.evaluate("window.__firstCard"))
        anchor = float(
            page.evaluate(
                """async (deal) => {
                  const t0 = performance.now();
                  await (await fetch(`/deals/${deal}`, {headers: {Accept: "application/json"}})).json();
                  return performance.now() - t0;
                }""",
                deal_id,
            )
        )
        sizes: dict[str, int] = defaultdict(int)
        for request in finished:
            measured = request.sizes()
            sizes[kind_of(request)] += (
                measured["responseBodySize"] + measured["responseHeadersSize"]
            )
        return {"first_card": first_card, "anchor": anchor, "bytes": dict(sizes)}
    finally:
        context.close()


def report(who: str, visits: list[dict[str, Any]]) -> None:
    firsts = sorted(v["first_card"] for v in visits)
    anchors = sorted(v["anchor"] for v in visits)
    ratio = statistics.median(f / a for f, a in zip(firsts, anchors, strict=True))
    kinds = sorted({k for v in visits for k in v["bytes"]})
    weight = {k: statistics.median(v["bytes"].get(k, 0) for v in visits) for k in kinds}
    total = sum(weight.values())
    print(f"  {who}: {len(visits)} first visits")
    print(
        f"    time to the first card: median {statistics.median(firsts):.0f} ms, "
        f"worst {firsts[-1]:.0f} ms; {ratio:.1f}x the view's round trip "
        f"(median {statistics.median(anchors):.1f} ms, the anchor)"
    )
    parts = ", ".join(f"{k} {weight[k] / 1024:.1f}" for k in kinds)
    print(f"    page weight: {total / 1024:.1f} KiB ({parts})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--visits", type=int, default=8, help="first visits per viewer")
    parser.add_argument("--steps", type=int, default=24, help="commands played before")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit(f"no Chromium at {CHROMIUM}: run scripts/chromium.sh")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print("the table page in Chromium (uvicorn, one process, SQLite)")
    print(f"  ({os.cpu_count()} cores, load average {load}: other work on the machine shows)")
    with server(None) as base, httpx.Client(base_url=base, timeout=60) as http:
        table_id, deal_id, tokens = table_mid_deal(http, args.steps, args.seed)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                visit(browser, base, table_id, deal_id, tokens[0])  # a warm-up
                for who, token in (("seated player", tokens[0]), ("spectator", None)):
                    visits = [
                        visit(browser, base, table_id, deal_id, token) for _ in range(args.visits)
                    ]
                    report(who, visits)
            finally:
                browser.close()


if __name__ == "__main__":
    main()
