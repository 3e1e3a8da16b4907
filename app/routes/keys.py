"""The server's public signing keys: ``GET /.well-known/canasta-keys`` (docs/api.md).

Anyone may fetch them (no token): they let an auditor, or anybody given a deal's records,
check the server's signature of each table's record of a finished deal (``domain.seal``).
Every key that signed is listed, the current one first, so signatures made before a rotation
still verify.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from pydantic import Field

from app.schemas_events import Shown
from domain.seal import RECORD_FORMAT

router = APIRouter(tags=["audit"])


class PublishedKey(Shown):
    key_id: str = Field(description="the id the signed records name (DealRecorded.key_id)")
    algorithm: Literal["Ed25519"]
    public_key: str = Field(description="the 32-byte public key, base64")
    public_key_pem: str = Field(description="the same key, PEM (SubjectPublicKeyInfo)")
    since: str | None = Field(description="when it began signing (ISO 8601), if known")
    until: str | None = Field(description="when it was retired, if it was")
    current: bool = Field(description="whether this server signs with it now")


class PublishedKeys(Shown):
    format: str = Field(description="the layout of the signed message (docs/api.md)")
    keys: list[PublishedKey]


@router.get("/.well-known/canasta-keys", response_model=PublishedKeys)
def published_keys(request: Request) -> PublishedKeys:
    """The public keys whose signatures this server accepts: its current key and every
    retired one it is configured with. A table's record of a deal (``DealRecorded``) names
    its key by ``key_id``; the signed message's layout is ``format``."""
    keys = request.app.state.canasta.keys
    published = keys.published() if keys is not None else []
    return PublishedKeys(
        format=RECORD_FORMAT, keys=[PublishedKey.model_validate(k) for k in published]
    )
