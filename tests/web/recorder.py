"""What a browser page was given, as ``Seen`` items for ``tests/web/secrecy.py``: every network
answer's body, every Server-Sent Events message (read through the Chrome DevTools Protocol,
since a stream's body never ends), and snapshots of the page's HTML and storage.

Each item carries the deal's step it shows: a JSON answer's own largest ``step`` (a deal view,
an event list), an SSE message's ``id`` (the event's step), else the step at the moment it
arrived, from ``step()`` if the test gives it, otherwise the latest step seen so far.

The page's own files (``/web/...``: scripts, styles, catalogues) are not recorded: they are
the same static files for everybody, whatever the deal (a script's comment may well name a
card as an example); what the scripts hold at run time is in the snapshots and the answers.

    recorder = PageRecorder(page)              # before the page opens the table
    page.goto(f"/tables/{table}")
    ... each move; recorder.snapshot()          # the HTML and storage now
    assert read_history(http, deal, auditor).violations(recorder.seen()) == []
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Page, Response

from tests.web.secrecy import Seen, step_of

_STORAGE = "() => JSON.stringify({local: {...localStorage}, session: {...sessionStorage}})"


class PageRecorder:
    """Records what ``page`` receives from now on (see the module's docstring)."""

    def __init__(self, page: Page, step: Callable[[], int] | None = None) -> None:
        self.page = page
        self._step = step
        self.latest = 0
        self._answers: list[tuple[Response, int]] = []
        self.messages: list[Seen] = []  # SSE messages, as they came
        self.snapshots: list[Seen] = []
        page.on("response", self._answer)
        self._cdp = page.context.new_cdp_session(page)
        self._cdp.on("Network.eventSourceMessageReceived", self._message)
        self._cdp.send("Network.enable")

    def now(self) -> int:
        """The step the deal is at, as far as the recorder knows."""
        return self._step() if self._step is not None else self.latest

    def _answer(self, response: Response) -> None:
        if "text/event-stream" in response.headers.get("content-type", ""):
            return  # a stream: its messages come one by one (_message)
        if urlsplit(response.url).path.startswith("/web/"):
            return  # a static file of the page, the same for everybody
        self._answers.append((response, self.now()))

    def _message(self, params: dict[str, Any]) -> None:
        event_id = str(params.get("eventId") or "")
        step = int(event_id) if event_id.isdigit() else self.now()
        self.latest = max(self.latest, step)
        name = params.get("eventName") or "message"
        self.messages.append(Seen(step, str(params.get("data", "")), f"SSE {name} id {event_id}"))

    def snapshot(self, step: int | None = None, where: str = "page") -> None:
        """The page's HTML and its storage now, as seen at ``step`` (default: now)."""
        at = self.now() if step is None else step
        self.snapshots.append(Seen(at, self.page.content(), f"{where} HTML"))
        self.snapshots.append(Seen(at, self.page.evaluate(_STORAGE), f"{where} storage"))

    def seen(self) -> list[Seen]:
        """Everything recorded so far: answers (bodies read now), SSE messages, snapshots."""
        answers: list[Seen] = []
        for response, arrived in self._answers:
            try:
                body = response.text()
            except Exception:  # no body (a redirect, a page gone): nothing was given
                continue
            step = step_of(body)
            where = f"{response.request.method} {response.url}"
            answers.append(Seen(arrived if step is None else step, body, where))
        return answers + list(self.messages) + list(self.snapshots)
