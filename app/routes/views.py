"""Read-model endpoints: discard log, draw log, score table, lobby. (In progress.)"""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["read models"])
