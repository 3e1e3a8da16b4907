"""Read-only access to the application's notification log, without the write side.

The projection runner needs the log's recorder and the mapper that turns its notifications
into domain events, nothing else: ``LogReader`` builds both with the eventsourcing library's
infrastructure factory from the same environment as the application (the same events table,
``<LOG_NAME>_events``, the same transcoder, compressor and cipher), and no repository,
aggregate cache or group-commit thread. A running application (``CanastaApp``) offers the
same three attributes and may be passed instead (the in-memory store is readable only
through the application that holds it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from typing import Protocol
from uuid import UUID

from eventsourcing.persistence import (
    ApplicationRecorder,
    DatetimeAsISO,
    DecimalAsStr,
    InfrastructureFactory,
    JSONTranscoder,
    Mapper,
    UUIDAsHex,
)
from eventsourcing.utils import Environment

#: The application's name (``CanastaApp.name``): the environment prefix (``CANASTA_*``), the
#: events table (``canasta_events``) and the application name in every tracking row.
LOG_NAME = "canasta"


class EventLog(Protocol):
    """What reading the notification log needs (``CanastaApp`` and ``LogReader`` have it)."""

    @property
    def name(self) -> str: ...

    @property
    def recorder(self) -> ApplicationRecorder: ...

    @property
    def mapper(self) -> Mapper[UUID]: ...


class LogReader:
    """The application's recorder and mapper, built as ``eventsourcing.application.Application``
    builds them (``construct_factory``, ``construct_mapper``, ``construct_recorder``): the
    environment is ``os.environ`` under ``env``, looked up as ``<NAME>_<KEY>`` first, and the
    JSON transcoder knows the application's default transcodings (UUIDs, decimals, datetimes;
    the application's own ``deal_state`` transcoding is used by snapshots only, which are not
    in the log)."""

    def __init__(self, env: Mapping[str, str], *, name: str = LOG_NAME) -> None:
        self.name = name
        self.factory = InfrastructureFactory.construct(Environment(name, {**os.environ, **env}))
        try:
            transcoder = self.factory.transcoder()
            if isinstance(transcoder, JSONTranscoder):
                transcoder.register(UUIDAsHex())
                transcoder.register(DecimalAsStr())
                transcoder.register(DatetimeAsISO())
            self.mapper: Mapper[UUID] = self.factory.mapper(transcoder=transcoder)
            self.recorder: ApplicationRecorder = self.factory.application_recorder()
        except BaseException:
            self.factory.close()
            raise

    def close(self) -> None:
        self.factory.close()


#: How a stored event's state begins (the library's mapper puts the event's own fields after
#: its ``timestamp``, tagged as ``datetime_iso`` by the JSON transcoder).
_TIME_PREFIX = b'{"timestamp":{"_type_":"datetime_iso","_data_":"'


def stored_time(state: bytes) -> datetime | None:
    """The ``timestamp`` of a stored event from its state's first bytes (plain JSON, neither
    compressed nor encrypted), without decoding the rest; None if they are not as expected
    (then decode the event). What ``DatetimeAsISO`` would decode: the same text, the same
    ``datetime.fromisoformat``."""
    if not state.startswith(_TIME_PREFIX):
        return None
    start = len(_TIME_PREFIX)
    end = state.find(b'"', start)
    if end < 0:
        return None
    try:
        return datetime.fromisoformat(state[start:end].decode())
    except ValueError:
        return None


__all__ = ["LOG_NAME", "EventLog", "LogReader", "stored_time"]
