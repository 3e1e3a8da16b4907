"""Audit of a deal's complete history, for auditors only (R-VIEW-4). (In progress.)"""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["audit"])
