"""Live updates (Server-Sent Events), redacted per viewer. (In progress.)"""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["live"])
