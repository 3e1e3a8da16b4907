"""The event store's JSON codec: the library's ``JSONTranscoder`` format, written with
orjson.

The stored bytes are the library's: compact JSON, every value of a registered type as its
tagged form ``{"_type_": name, "_data_": ...}`` (``uuid_hex``, ``decimal_str``,
``datetime_iso`` and the application's ``deal_state``), so a store written by either codec
reads the same with the other (``tests/infra/test_transcoder.py``). orjson would write some of
those types itself; it is told not to where it can be, and checked where it cannot:

- datetimes (and dates, times) and dataclasses are passed to ``default`` (orjson's
  ``OPT_PASSTHROUGH_*``), which tags them as the library does, or refuses an unregistered
  type as the library does;
- a ``UUID`` it always writes itself, as its 36-character hyphenated text: an encoding whose
  bytes hold such a text anywhere is done again by the library's encoder, whatever put it
  there (a UUID, or an id kept as text), so a UUID is never stored untagged;
- an ``Enum`` it also writes itself (its value): a state holding one is not sent to orjson;
  the domain's events hold none, and the check is one look at the top level's values;
- a float that is not a number orjson writes as ``null`` where the library writes ``NaN``:
  an encoding that holds ``null`` is done again by the library's encoder (an event with a
  ``None`` in it too: only slower);
- anything else orjson refuses (an integer past 64 bits, a key that is not text ...) is
  encoded by the library's encoder, as before.

Reading stays the library's (``json`` with its ``object_hook``): orjson reads the bytes
faster, but its decoded values then need a walk in Python to find the tagged forms, and for
the store's events (some 250 bytes) the two cost the same.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import orjson
from eventsourcing.persistence import InfrastructureFactory, JSONTranscoder, Transcoder

#: What orjson writes for a UUID, its hexadecimal digits as ``x`` (``_HEX``): the library's
#: encoder never writes it (it tags UUIDs). A translation and a search of bytes cost a tenth
#: of a regular expression's search.
_UUID_TEXT = b"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
_HEX = bytes(
    ord("x") if chr(byte) in "0123456789abcdef" else byte if byte == ord("-") else ord(".")
    for byte in range(256)
)
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


class OrjsonTranscoder(JSONTranscoder):
    """The library's ``JSONTranscoder``, its bytes made by orjson (module doc)."""

    def encode(self, obj: Any) -> bytes:
        if type(obj) is dict and not any(isinstance(v, Enum) for v in obj.values()):
            try:
                data = orjson.dumps(obj, default=self._encode_obj, option=_OPTIONS)
            except orjson.JSONEncodeError:
                pass  # the library's encoder writes it, or refuses it as it always did
            else:
                if b"null" not in data and _UUID_TEXT not in data.translate(_HEX):
                    return data
        return super().encode(obj)


def store_transcoder(factory: InfrastructureFactory[Any]) -> Transcoder:
    """The factory's transcoder (the library's ``TRANSCODER_TOPIC`` setting), its default
    ``JSONTranscoder`` replaced by ``OrjsonTranscoder``."""
    transcoder = factory.transcoder()
    return OrjsonTranscoder() if type(transcoder) is JSONTranscoder else transcoder


__all__ = ["OrjsonTranscoder", "store_transcoder"]
