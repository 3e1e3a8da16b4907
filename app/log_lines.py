"""The server's log lines (docs/operations.md, "Log lines and request ids"): the request id
of the line's context, and its two formats. Kept apart from ``app.observability`` so that
uvicorn's parent process can load them without the application: ``--log-config
app/log_json.json`` gives the lines that process writes itself with ``--workers N`` (it never
imports the application) the workers' JSON format."""

from __future__ import annotations

import contextvars
import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

#: The request being served in this context (None outside requests).
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "canasta_request_id", default=None
)


class RequestIdFilter(logging.Filter):
    """Gives every record the id of the request it was written for (``request_id``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


#: An invitation code in an address's query (``/?invite=<table id>:<code>``, the web pages'
#: older links): its value, up to the next parameter.
INVITE_QUERY = re.compile(r"([?&]invite=)[^&#\s]*", re.IGNORECASE)
HIDDEN = "(hidden)"


class HiddenInvites(logging.Filter):
    """Hides a private table's invitation code from uvicorn's access line. The web pages'
    older links (``/?invite=<table id>:<code>``, still read) send it to the server in the
    address, and the store keeps only its hash: no log line may keep it whole either
    (anybody who reads the log could take a seat). The new links carry it after ``#``, which
    a browser never sends (docs/web.md)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            path = args[2]
            if isinstance(path, str) and "invite=" in path.lower():
                hidden = INVITE_QUERY.sub(lambda m: m.group(1) + HIDDEN, path)
                record.args = (args[0], args[1], hidden, args[3], args[4])
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time`` (UTC), ``level``, ``logger``, ``message``,
    ``request_id`` when written for a request; uvicorn's access line adds ``client``,
    ``method``, ``path`` and ``status``; an exception adds ``exception`` (its traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid is not None:
            out["request_id"] = rid
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            client, method, path, _version, status = args
            out.update(client=client, method=method, path=path, status=status)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "request_id", None) is None:
            record.request_id = "-"
        return super().format(record)
