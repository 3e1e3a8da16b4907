"""HTTP entry point: ``uvicorn app.main:app``."""

from __future__ import annotations

from fastapi import FastAPI

app = FastAPI(title="canasta-ledger")


@app.get("/health")
def health() -> dict[str, str]:
    """Liveness probe."""
    return {"status": "ok"}
