"""The fast lane of ``POST /deals/{id}/commands``: the common case below FastAPI's routing.

Sending a command is the request a game server answers most, and most of its time went to
the framework (routing, dependency solving, request and response objects: about half of a
worker's CPU in ``make bench``). This ASGI middleware answers the *common case* itself, with
the very functions the route uses (``app.auth``, ``app.command_io``): a request whose bearer
token this process already knows, whose JSON body validates as ``CommandIn``, and whose command
``CanastaApp.submit_cached`` accepts (or whose retry it answers) and the group committer
saves. Its answer is the route's answer, byte for byte.

Everything else is handed, body included, to the FastAPI application unchanged: unknown or
missing tokens (a browser's session cookie included: the route's dependency checks it and its
CSRF header, ``app.sessions``), malformed bodies (FastAPI's 422), refusals, conflicts, anything not
cached. So every error, and every answer that needs the store, comes from the
documented route, and the OpenAPI schema stays the contract.
"""

from __future__ import annotations

import re
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.application import Answer, CanastaApp
from app.auth import bearer_token, known_account
from app.command_io import read_command, render, submission, submit_from_cache
from app.limits import replayed

PATH = re.compile(r"/deals/([0-9A-Fa-f-]{32,36})/commands")


class CommandLane:
    """``max_body``: ``CANASTA_MAX_BODY_BYTES``; ``app.limits`` refuses larger bodies before
    they come here, and a larger one is never read whole here either."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body
        self.answered = 0  # requests answered here (the rest went to the route)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or (match := PATH.fullmatch(scope["path"])) is None
        ):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:  # the request's body, kept to hand it on if need be
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False) or len(body) > self.max_body:
                break
        answer = None
        if messages[-1]["type"] == "http.request" and not messages[-1].get("more_body"):
            answer = await self._answer(scope, match.group(1), body)
        if answer is None:
            await self.app(scope, replayed(messages, receive), send)
            return
        self.answered += 1
        data = render(answer)
        await send(
            {
                "type": "http.response.start",
                "status": answer.status,
                "headers": [
                    (b"content-length", str(len(data)).encode()),
                    (b"content-type", b"application/json"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})

    async def _answer(self, scope: Scope, deal: str, body: bytes) -> Answer | None:
        """The route's 200 answer, or None: FastAPI's route decides."""
        canasta: CanastaApp | None = getattr(scope["app"].state, "canasta", None)
        if canasta is None:
            return None
        authorization = content_type = None
        for name, value in scope["headers"]:  # the first of each, as Starlette reads them
            if name == b"authorization":
                if authorization is None:
                    authorization = value
            elif name == b"content-type" and content_type is None:
                content_type = value
        if authorization is None or content_type is None:
            return None
        if content_type.split(b";")[0].strip().lower() != b"application/json":
            return None
        token = bearer_token(authorization.decode("latin-1"))
        if token is None:
            return None
        name = known_account(canasta, token)
        if name is None:
            return None
        try:
            deal_id = UUID(deal)
        except ValueError:
            return None
        command = read_command(body)
        if command is None:
            return None
        try:
            answer = await submit_from_cache(canasta, submission(deal_id, name, command))
        except IntegrityError:
            return None  # another process wrote first: the route decides from the store
        if answer is None or answer.status != 200:
            return None
        return answer
