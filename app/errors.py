"""Every refusal becomes a stable JSON error body: ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.application import error_body, refusal_body
from app.deps import Unauthenticated
from app.schemas import CARD_PATTERN, NAME_PATTERN, ErrorOut
from domain.errors import Conflict, DomainError, Forbidden, NotFound

log = logging.getLogger("canasta.api")

STATUS: list[tuple[type[DomainError], int]] = [
    (Unauthenticated, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (DomainError, 400),  # rule violations and set-up refusals
]


#: The error answers every route may give, documented in the OpenAPI schema.
RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "refused by a rule (code: its rule id, docs/rules/)"},
    401: {"model": ErrorOut, "description": "no valid bearer token where one is needed"},
    403: {"model": ErrorOut, "description": "not the host, no seat here, or not an auditor"},
    404: {"model": ErrorOut, "description": "no such table or deal (code: not_found)"},
    409: {
        "model": ErrorOut,
        "description": "R-CMD-1: a stale command or a used sequence number; race_lost: another "
        "request changed the game first; seq_too_far: seq more than 1000 above your last; "
        "name_taken: the name is an account's",
    },
    413: {
        "model": ErrorOut,
        "description": "request body above CANASTA_MAX_BODY_BYTES (code: body_too_large)",
    },
    422: {
        "model": ErrorOut,
        "description": "malformed request (code: malformed)",
    },
    429: {
        "model": ErrorOut,
        "description": "over a per-client limit (app.rate_limits; codes: rate_limited, "
        "too_many_streams): retry after Retry-After seconds",
        "headers": {
            "Retry-After": {
                "description": "seconds to wait before sending again",
                "schema": {"type": "integer"},
            }
        },
    },
    503: {
        "model": ErrorOut,
        "description": "database_unavailable: the database does not answer (app.outage); "
        "send the same request again after Retry-After seconds (a command under the same "
        "sequence number: if it was recorded after all, its answer comes back)",
        "headers": {
            "Retry-After": {
                "description": "seconds to wait before sending again",
                "schema": {"type": "integer"},
            }
        },
    },
}


#: The error answers of a game command (``POST /deals/{id}/commands``; its dry run shares the
#: 403 and 404, and answers the others in its 200), each with the codes a bot acts on.
COMMAND_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorOut,
        "description": "the rules refuse the command (code: the rule's id, docs/rules/; with "
        "key and params): nothing recorded, the sequence number used",
    },
    403: {
        "model": ErrorOut,
        "description": "R-CMD-2: no seat at this deal's table (or not the seat's stand-in); "
        "seat_not_yours: you are away from your seat, the bot plays it; timeout_not_allowed: "
        "a person sent time_out",
    },
    404: {"model": ErrorOut, "description": "not_found: no such deal"},
    409: {
        "model": ErrorOut,
        "description": "R-CMD-1: a stale expect, or a sequence number used (another body "
        "under it, or not above your last): read the deal (or the move menu) and send a new "
        "command; seq_too_far: more than 1000 above your last (your_last_seq of GET "
        "/tables/{id}); race_lost: another command was saved first: reload and retry; "
        "turn_timed_out: your turn timed out, the basic bot plays the rest of it; "
        "clock_not_due: a stand-in's time_out before the deadline",
    },
}

#: The move menu's 403 (``GET /deals/{id}/moves``).
MENU_FORBIDDEN: dict[str, Any] = {
    "model": ErrorOut,
    "description": "R-CMD-2: no seat at this deal's table; seat_not_yours: you are away from "
    "your seat, the bot plays it",
}


def status_of(error: DomainError) -> int:
    return next(status for cls, status in STATUS if isinstance(error, cls))


#: The methods a 405's ``Allow`` header may name (HEAD: wherever GET is, ``app.http_methods``).
METHODS = ("DELETE", "GET", "PATCH", "POST", "PUT")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route answers at the request's path (Starlette's own ``Allow``
    names only the first route matching the path)."""
    methods = {
        method
        for method in METHODS
        for route in request.app.router.routes
        if route.matches({**request.scope, "method": method})[0] == Match.FULL
    }
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def unparsable_body(exc: StarletteHTTPException) -> str | None:
    """Why FastAPI could not parse a body, when that is what its 400 means: bytes that are
    not UTF-8, nesting deeper than the parser goes, an integer with more digits than Python
    reads (``json.JSONDecodeError`` alone already becomes a ``RequestValidationError``).
    Such a body is malformed like any other: 422 ``malformed``, not 400 ``http_error``."""
    cause = exc.__cause__
    if exc.status_code != 400 or not isinstance(cause, ValueError | RecursionError):
        return None
    if isinstance(cause, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(cause, RecursionError):
        return "nested too deeply"
    return "not valid JSON (a number too long?)"


#: What a client that sent no JSON object is told (a form, text, curl's -d without a header).
NOT_JSON = "body: not JSON: send a JSON object with the header Content-Type: application/json"


def sends_json(content_type: str | None) -> bool:
    """Whether FastAPI parses a body sent with this content type as JSON: none at all,
    ``application/json`` or ``application/*+json``."""
    if not content_type:
        return True
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


#: A pattern of the request schemas -> what a value that breaks it should be, in words (a
#: name in another script, a card in lower case), instead of the regular expression.
PATTERN_WORDS = {
    NAME_PATTERN: "a name is 1 to 32 ASCII letters, digits, '.', '_' or '-' (R-CMD-2)",
    CARD_PATTERN: "a card is written in capitals, rank and suit then its deck: 'QH/2', "
    "'10S/1', 'BJ/1' (R-CARD-1)",
}


def problem(error: Any, json_sent: bool) -> str:
    """One line of a 422's message: where, and what is wrong there, in words a client can act
    on. A body FastAPI did not read as JSON (another content type), JSON that does not parse,
    and a body that is no JSON object say so instead of pydantic's wording."""
    loc = tuple(error.get("loc", ()))
    kind = error.get("type")
    if kind == "json_invalid":  # loc: ("body", the character where parsing stopped)
        at = f" at character {loc[1]}" if len(loc) > 1 else ""
        reason = (error.get("ctx") or {}).get("error")
        return f"body: not valid JSON{at}" + (f": {reason}" if reason else "")
    if loc == ("body",):
        if not json_sent:
            return NOT_JSON
        if kind == "missing":
            return "body: missing: send a JSON object"
        if kind in ("model_attributes_type", "dict_type", "model_type"):
            return "body: not a JSON object"
    words = PATTERN_WORDS.get((error.get("ctx") or {}).get("pattern", ""))
    if kind == "string_pattern_mismatch" and words:
        return f"{'.'.join(str(p) for p in loc)}: {words}"
    return f"{'.'.join(str(p) for p in loc)}: {error.get('msg', 'invalid')}"


def install(api: FastAPI) -> None:
    @api.exception_handler(DomainError)
    async def domain_error(_request: Request, exc: DomainError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthenticated) else None
        return JSONResponse(refusal_body(exc), status_of(exc), headers=headers)

    @api.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Each problem once, in order: a path parameter that the route and its dependencies
        # all read is reported by each of them.
        json_sent = sends_json(request.headers.get("content-type"))
        problems = dict.fromkeys(problem(e, json_sent) for e in exc.errors())
        where = "; ".join(list(problems)[:5])
        return JSONResponse(error_body("malformed", where or "malformed request"), 422)

    @api.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if unparsable_body(exc):
            return JSONResponse(error_body("malformed", f"body: {unparsable_body(exc)}"), 422)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # RFC 9110: a 405 names the methods the path allows
            headers["Allow"] = ", ".join(allowed_methods(request))
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code, headers=headers)

    @api.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Logged without request bodies or card data; the client learns nothing of the state.
        log.error("unexpected %s on %s %s", type(exc).__name__, request.method, request.url.path)
        return JSONResponse(error_body("internal", "internal error"), 500)
