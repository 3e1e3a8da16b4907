"""Process configuration, read from the environment.

Every setting is read from ``CANASTA_<NAME>`` (e.g. ``CANASTA_DATA_DIR``); the database URL is
also accepted as plain ``DATABASE_URL`` (``CANASTA_DATABASE_URL`` wins when both are set).

``eventsourcing_env()`` turns the settings into the ``env`` mapping that
``eventsourcing.application.Application(env=...)`` reads its persistence configuration from.
"""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from limits import parse_many
from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

#: Special ``database_url`` value: keep events in memory only (``eventsourcing.popo``).
MEMORY = "memory"

#: SQLite file name inside ``data_dir``.
SQLITE_FILENAME = "canasta.sqlite"

#: Seconds a writer waits for the events table lock before giving up. The library's PostgreSQL
#: default (0) means "wait forever"; a finite value turns a stuck writer into an error.
POSTGRES_LOCK_TIMEOUT_SECONDS = 5

#: Seconds a SQLite writer waits for the database lock (the library's default is also 5).
SQLITE_LOCK_TIMEOUT_SECONDS = 5

_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


class Settings(BaseSettings):
    """Configuration of one server process."""

    model_config = SettingsConfigDict(
        env_prefix="CANASTA_",
        populate_by_name=True,
        extra="ignore",
    )

    #: ``postgresql://user:pass@host:port/dbname`` for PostgreSQL, ``"memory"`` for an
    #: in-memory store, or ``None`` for the embedded SQLite file in ``data_dir``.
    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("CANASTA_DATABASE_URL", "DATABASE_URL"),
    )
    #: A PostgreSQL streaming replica of ``database_url`` (docs/scaling.md): views, replays,
    #: live streams, the read models (the lobby among them) and the audit are read from it,
    #: commands and every write go to the primary. PostgreSQL only; unset: no replica.
    read_database_url: str | None = None
    #: How long a read that names a step the replica has not replayed yet (a player's last
    #: command: ``X-Canasta-Min-Step``) waits for it before it is served by the primary.
    read_replica_wait_seconds: float = Field(default=0.5, ge=0, le=30)
    #: Directory of the embedded SQLite database (created on demand).
    data_dir: Path = Path("data")
    #: Allow clients to supply a pre-arranged deck (tests only).
    allow_stacked_decks: bool = False
    #: The least turn clock a host may choose, in seconds (docs/tables.md, "Turn clock"): 10;
    #: tests set less to see a clock run out quickly.
    turn_seconds_min: int = Field(default=10, ge=1, le=3600)
    #: How long no server process may say it is alive before that counts as an outage of
    #: the service (docs/operations.md, "Restarts and crashes"): a person's turn that ran
    #: through a longer one gets its full time again (docs/tables.md, "Turn clock"). Each
    #: server says so every 2 s (a quarter of this, if less); tests set less.
    outage_seconds: float = Field(default=10.0, ge=0.2, le=3600)
    #: How long a table may go without a move before the lobby shows it apart, as idle
    #: (``GET /tables?idle=``, docs/api.md), in seconds: 30 minutes. The lobby's last move of
    #: a table is up to a minute behind, so below two minutes a live table may show idle
    #: between two of its stored moves; tests set less.
    lobby_idle_seconds: int = Field(default=30 * 60, ge=1, le=30 * 24 * 3600)
    #: Connections kept open by the eventsourcing PostgreSQL pool. Keep it at least as large
    #: as the number of threads that use the application at once.
    postgres_pool_size: int = 10
    #: The longest a request waits for PostgreSQL (a connection, and the tries of a query
    #: whose connection broke) before it is answered 503 ``database_unavailable``
    #: (docs/operations.md, "When PostgreSQL goes away"): the library's connect timeout.
    database_wait_seconds: int = Field(default=3, ge=1, le=60)
    #: Account names that hold the auditor role (R-VIEW-4), besides roles granted with
    #: ``canasta grant-auditor NAME``. Comma-separated in the environment.
    auditors: Annotated[list[str], NoDecode] = []
    #: How often the process's follower of the store (app.fanout) looks for new events for
    #: the live streams on SQLite and in memory (PostgreSQL wakes it with NOTIFY; this is then
    #: the longest it waits).
    stream_poll_seconds: float = Field(default=0.2, gt=0, le=10)
    #: On PostgreSQL, the least time in milliseconds between two reads of that follower:
    #: the commits NOTIFYd meanwhile are read together (fewer queries, at most this much
    #: later to the streams); 0 reads at every NOTIFY.
    stream_read_interval_ms: float = Field(default=20.0, ge=0, le=1000)
    #: How long a live stream may stay silent before it sends a heartbeat comment.
    stream_heartbeat_seconds: float = Field(default=15.0, gt=0, le=300)
    #: Aggregates kept in the application's LRU cache; 0 disables the cache.
    aggregate_cache_maxsize: int = 1000
    #: Most commands saved together in one transaction (group commit) when several arrive
    #: while the previous transaction is being written; 1 gives each its own transaction.
    commit_batch_max: int = Field(default=64, ge=1, le=1000)
    #: Under load (the last transaction held several commands), milliseconds the committer
    #: waits for more before writing the next transaction; 0 never waits.
    commit_linger_ms: float = Field(default=2.0, ge=0, le=100)
    #: Allocations between two young-generation garbage collections in the server
    #: (Python's default is 700, which costs a quarter of the CPU under load); 0 keeps
    #: Python's defaults.
    gc_gen0_threshold: int = Field(default=100_000, ge=0)
    #: Log lines as JSON objects (one a line, with the request's id) or as plain text
    #: (``app/observability.py``); ``log_level`` is the level of the server's own loggers
    #: (uvicorn's keep its ``--log-level``).
    log_format: Literal["text", "json"] = "text"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    #: The Prometheus metrics (``app/metrics.py``, ``GET /metrics``); false: none are
    #: recorded and ``/metrics`` answers 404.
    metrics: bool = True
    #: ``GET /ready`` answers 503 when a read model is more than this many notifications
    #: behind the event store's head, or when the store does not answer within
    #: ``ready_timeout_seconds`` (``app/readiness.py``).
    ready_max_lag: int = Field(default=10_000, ge=0)
    ready_timeout_seconds: float = Field(default=2.0, gt=0, le=60)
    #: Threads for the routes that block (FastAPI's threadpool; anyio's default is 40).
    #: Under load every runnable thread contends for the GIL with the event loop that
    #: answers most commands: with 40, waves of blocking requests (deals ending and
    #: starting together) put tail latency up (``make bench``). Live streams do not hold one.
    threadpool_size: int = Field(default=8, ge=1, le=1000)
    #: Answer the common case of ``POST /deals/{id}/commands`` below FastAPI's routing
    #: (``app/command_lane.py``); false sends every request through the route.
    command_lane: bool = True
    #: Largest request body accepted, in bytes (a command is a few hundred): a larger one is
    #: refused with 413 ``body_too_large`` before it is read whole or parsed
    #: (``app/limits.py``), on every route, the command lane's included.
    max_body_bytes: int = Field(default=16 * 1024, ge=1024, le=1024 * 1024)
    #: How long a browser session (``POST /sessions``, the ``canasta_session`` cookie) signs
    #: its player in, in seconds, unless he signs out first (``DELETE /sessions``).
    session_max_age_seconds: int = Field(default=7 * 24 * 3600, ge=60, le=400 * 24 * 3600)
    #: How long an ``Idempotency-Key`` holds, in seconds (``app/idempotency.py``,
    #: docs/api.md): a retry under the key within this time gets the first answer back.
    idempotency_key_seconds: int = Field(default=24 * 3600, ge=60, le=30 * 24 * 3600)
    #: Origins (``https://host[:port]``) whose pages may call the API from scripts, with
    #: credentials (CORS); empty: none, CORS is off. Comma-separated in the environment.
    cors_origins: Annotated[list[str], NoDecode] = []
    #: Who runs the read-model projections: ``auto``, one elected process per database (a
    #: lease; the others take over when it ends); ``off``, never this process (run them in a
    #: dedicated one: ``canasta project``).
    read_models: Literal["auto", "off"] = "auto"
    #: Whether this process plays the bots seated at tables (docs/bots.md): true, it takes
    #: part in the election of the one process per database that plays them (a lease); false,
    #: never (they are then played by ``canasta bots``, or another server).
    run_bots: bool = True
    #: Per-client limits (``app/rate_limits.py``, docs/operations.md "Limits"): false turns
    #: all of them off (the rates and the stream caps below).
    rate_limits: bool = True
    #: Requests per client in ``limits`` notation (``"N/second;M/minute"``; empty: no limit),
    #: counted in fixed windows in each process:
    #: account creation and sign-in (``POST /players``, ``POST /sessions``) per address ...
    rate_limit_registration: str = "30/minute;300/hour"
    #: ... everything else that may change something (the game's commands first) and every
    #: read (GET, HEAD, the opening of a stream), per player (bearer token) or else per address.
    rate_limit_commands: str = "20/second;600/minute"
    rate_limit_reads: str = "50/second;1500/minute"
    #: Live streams one client may hold open at once in one process: per bearer token or
    #: session cookie, and per address for anonymous ones; 0: no cap.
    max_streams_per_token: int = Field(default=16, ge=0)
    max_streams_per_address: int = Field(default=64, ge=0)
    #: The server's Ed25519 signing key file (``canasta keys new``; docs/operations.md,
    #: "Signing keys"). Unset: ``signing-key.json`` in ``data_dir`` for the embedded SQLite
    #: store (made on first run), an ephemeral key in memory; a PostgreSQL store needs one.
    signing_key_file: Path | None = None
    #: The key file's content itself, instead of ``signing_key_file``.
    signing_key: SecretStr | None = None
    #: Public key files of retired signing keys, whose signatures still verify (default:
    #: ``retired-keys`` next to the key file).
    retired_keys_dir: Path | None = None

    @field_validator("auditors", mode="before")
    @classmethod
    def _split_names(cls, value: object) -> object:
        if isinstance(value, str):
            return [name.strip() for name in value.split(",") if name.strip()]
        return value

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value

    @field_validator("cors_origins")
    @classmethod
    def _check_origins(cls, value: list[str]) -> list[str]:
        """Each origin is a scheme and a host (and a port), as a browser sends it in
        ``Origin``: never ``*``, which would let every site's pages act as a signed-in player."""
        for origin in value:
            parts = urlsplit(origin)
            if (
                parts.scheme not in ("http", "https")
                or not parts.hostname
                or origin != f"{parts.scheme}://{parts.netloc}"
            ):
                raise ValueError(
                    f"CORS origin {origin!r} is not scheme://host[:port] "
                    "(no '*', no path, no trailing slash)"
                )
        return value

    @field_validator("rate_limit_registration", "rate_limit_commands", "rate_limit_reads")
    @classmethod
    def _check_rates(cls, value: str) -> str:
        """``limits`` notation, or empty (no limit); a typo fails at start-up, not later."""
        if value.strip():
            try:
                parse_many(value)
            except ValueError:
                raise ValueError(
                    "not a rate: write e.g. 20/second;600/minute (N/second, minute, hour or "
                    "day; several separated by ';'), or leave it empty for no limit"
                ) from None
        return value

    @field_validator("database_url", "read_database_url")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return value.strip()

    @model_validator(mode="after")
    def _replica_needs_postgres(self) -> Settings:
        """A read replica is a PostgreSQL streaming replica of a PostgreSQL primary: any other
        combination is refused at start-up, never half served."""
        replica = self.read_database_url
        if replica is None:
            return self
        if not is_postgres(self.database_url):
            raise ValueError(
                "CANASTA_READ_DATABASE_URL needs a PostgreSQL primary: set CANASTA_DATABASE_URL "
                "to postgresql://... (the embedded SQLite and in-memory stores have no replicas)"
            )
        if not is_postgres(replica):
            raise ValueError(
                f"CANASTA_READ_DATABASE_URL must be a postgresql://... URL of a streaming "
                f"replica, not {urlsplit(replica).scheme or replica!r}"
            )
        return self

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / SQLITE_FILENAME


def is_postgres(url: str | None) -> bool:
    """Whether a database URL names a PostgreSQL database."""
    return url is not None and url != MEMORY and urlsplit(url).scheme in _POSTGRES_SCHEMES


def _postgres_env(url: str, settings: Settings) -> dict[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in _POSTGRES_SCHEMES:
        raise ValueError(
            f"unsupported database URL scheme {parts.scheme!r}: expected postgresql://..., "
            f"{MEMORY!r}, or no URL at all (SQLite in data_dir)"
        )
    query = parse_qs(parts.query)
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname:
        # not the URL itself: its password would go to the log and the terminal
        raise ValueError("database URL has no database name (postgresql://USER@HOST:PORT/DBNAME)")
    host = parts.hostname or query.get("host", ["localhost"])[0]
    return {
        # The library's factory, its queries tried within the connect timeout only.
        "PERSISTENCE_MODULE": "app.infra.persistence:PrimaryFactory",
        "POSTGRES_CONNECT_TIMEOUT": str(settings.database_wait_seconds),
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": host,
        "POSTGRES_PORT": str(parts.port or 5432),
        "POSTGRES_USER": unquote(parts.username) if parts.username else getpass.getuser(),
        "POSTGRES_PASSWORD": unquote(parts.password) if parts.password else "",
        "POSTGRES_POOL_SIZE": str(settings.postgres_pool_size),
        "POSTGRES_LOCK_TIMEOUT": str(POSTGRES_LOCK_TIMEOUT_SECONDS),
        # Never on: it skips the table lock and one function is shared by every app in a schema.
        "POSTGRES_ENABLE_DB_FUNCTIONS": "n",
        # The schema is managed by alembic (alembic/versions/), not by the library.
        "CREATE_TABLE": "n",
        # The library's recorder, sending rows as plain parameters (app/infra/persistence.py).
        "APPLICATION_RECORDER_TOPIC": "app.infra.persistence:PostgresRecorder",
    }


def eventsourcing_env(settings: Settings, *, app_name: str = "canasta") -> dict[str, str]:
    """Return the ``env`` for ``Application(env=...)`` that matches ``settings``.

    The library looks a key up as ``<APP_NAME>_<KEY>`` first and then as ``<KEY>``, and it
    merges ``os.environ`` underneath the ``env`` argument. Each key is therefore returned in
    both spellings: the prefixed one wins over anything in ``os.environ`` for the application
    named ``app_name`` (``CANASTA_*`` variables are this project's settings too), and the plain
    one serves components with other names, such as a projection's tracking recorder.
    """
    url = settings.database_url
    env: dict[str, str]
    if url == MEMORY:
        # An in-memory store belongs to one process, so the cache never needs to look for
        # events written elsewhere: saved aggregates go straight into it.
        env = {"PERSISTENCE_MODULE": "eventsourcing.popo", "AGGREGATE_CACHE_FASTFORWARD": "n"}
    elif url is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(settings.sqlite_path),
            "SQLITE_LOCK_TIMEOUT": str(SQLITE_LOCK_TIMEOUT_SECONDS),
        }
    else:
        env = _postgres_env(url, settings)

    # An empty value disables the cache; the library treats "0" as an *unbounded* cache.
    maxsize = settings.aggregate_cache_maxsize
    env["AGGREGATE_CACHE_MAXSIZE"] = str(maxsize) if maxsize > 0 else ""
    # Read by CanastaApp. The in-memory store has no transaction cost to share: each
    # command is saved in its caller's thread.
    env["COMMIT_BATCH_MAX"] = "1" if url == MEMORY else str(settings.commit_batch_max)
    env["COMMIT_LINGER_MS"] = str(settings.commit_linger_ms)

    prefix = app_name.upper() + "_"
    return {**env, **{prefix + key: value for key, value in env.items()}}
