"""HTTP entry point: ``uvicorn app.main:app`` (or ``create_app(settings)`` in tests)."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import docs_ui, errors, observability, openapi_contract, rules_pages, web_ui
from app.application import CanastaApp
from app.bot_runner import BotRunner
from app.command_lane import CommandLane
from app.fanout import EventHub
from app.http_methods import HeadAsGet
from app.idempotency import Idempotency, store_for
from app.infra.liveness import Heartbeat
from app.infra.projection_runner import ReadModels
from app.limits import BodyLimit
from app.outage import DatabaseOutage
from app.rate_limits import ClientLimits
from app.replica import MIN_STEP_HEADER, Reads
from app.routes import (
    audit,
    check,
    deals,
    keys,
    moves,
    players,
    practice,
    private,
    seats,
    sessions,
    stream,
    stream_docs,
    tables,
    views,
)
from app.schemas_views import Health
from app.security_headers import SecurityHeaders
from app.sessions import CSRF_HEADER
from app.settings import MEMORY, Settings, eventsourcing_env
from app.signing import SigningKeyError, load_keyring
from app.startup import StartupRefusal, check_replica, check_store, settings_from_environment
from domain.errors import NotFound

#: Start-up refusals the operator fixes from their message alone (docs/operations.md).
REFUSALS = (SigningKeyError, StartupRefusal)


class StartupRefusals:
    """A start-up refused for a reason the operator must fix (a bad setting, no or a bad
    signing key, a database that does not answer or lacks its schema: app.startup) is one
    line in the server's log, not a traceback. Starlette reports a failed lifespan with the
    whole traceback, which uvicorn logs; this holds that report until the exception that
    caused it is known, and sends only its message for the refusals above."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def hold(message: Message) -> None:
            if message["type"] == "lifespan.startup.failed":
                held.append(message)
            else:
                await send(message)

        try:
            await self.app(scope, receive, hold)
        except REFUSALS as exc:
            held = [{**m, "message": f"canasta cannot start: {exc}"} for m in held]
            raise
        finally:
            for message in held:
                await send(message)


def tune_gc(gen0_threshold: int) -> None:
    """Fewer cyclic garbage collections: a command allocates many short-lived objects, and
    with the default threshold (700) the collector ran so often that it cost a quarter of
    the server's CPU under load (``make bench``). What exists at start-up is frozen out of
    the collections. 0 keeps Python's defaults."""
    if gen0_threshold > 0:
        gc.collect()
        gc.freeze()
        gc.set_threshold(gen0_threshold, 50, 100)


def warn_unregistered_auditors(canasta: CanastaApp, config: Settings) -> None:
    """A name in ``CANASTA_AUDITORS`` that no account holds yet goes to whoever registers it
    first (``POST /players`` is open to anybody), and with it every hand and the stock of
    every deal: the operator is told at each start (docs/operations.md, "Auditors")."""
    for name in config.auditors:
        try:
            canasta.account(name)
        except NotFound:
            logging.getLogger(__name__).warning(
                "CANASTA_AUDITORS names %r, which no account holds yet: whoever registers "
                "that name first will be an auditor (every hand, the stock, the seeds). "
                "Register the account first, or grant the role with "
                "'canasta grant-auditor NAME' instead (docs/operations.md, Auditors)",
                name,
            )


def create_app(settings: Settings | None = None) -> FastAPI:
    """The API over one ``CanastaApp`` per process, built at start-up, closed at shutdown.

    Everything that must hold across processes lives in the event store: the application's
    aggregate cache fast-forwards from the store on every read, except on the command
    path, where the store's version check on save stands in for it (see
    ``CanastaApp.submit``).
    """

    @asynccontextmanager
    async def lifespan(api: FastAPI) -> AsyncIterator[None]:
        config = settings or settings_from_environment()
        try:
            env = eventsourcing_env(config)
        except ValueError as exc:  # a database URL it cannot use
            raise StartupRefusal(
                f"bad setting: CANASTA_DATABASE_URL (or DATABASE_URL): {exc}"
            ) from None
        # The key first: a server without one is refused before any database is reached.
        keys = load_keyring(config)  # refuses to start without a key (app.signing)
        check_store(config)  # it answers, with this code's schema
        check_replica(config)  # a read replica, if configured, answers with the schema
        # What is started is closed at shutdown, last started first; and at once if a later
        # step of the start-up fails (a read replica that does not answer, say): a read-models
        # leader left running would hold the lease in this database for as long as the
        # process lives, and no other server would run the read models.
        with ExitStack() as started:
            canasta = CanastaApp(
                env=env,
                allow_stacked_decks=config.allow_stacked_decks,
                keys=keys,
                turn_seconds_min=config.turn_seconds_min,
                outage_seconds=config.outage_seconds,
            )
            started.callback(canasta.close)
            canasta.claim_names()  # an older store's names, before any registration
            warn_unregistered_auditors(canasta, config)
            # The service is alive (before it serves anybody, and before the bots look at the
            # turn clocks): docs/operations.md, "Restarts and crashes".
            heartbeat = Heartbeat(canasta.liveness)
            started.callback(heartbeat.close)
            heartbeat.start()
            read_models = ReadModels(config, app=canasta)
            started.callback(read_models.close)
            read_models.start()
            reads = Reads.open(canasta, config, read_models)  # a read replica, if configured
            started.callback(reads.close)
            bots = BotRunner(canasta, config)
            started.callback(bots.close)
            if config.run_bots:
                bots.start()
            hub = EventHub.for_settings(canasta, config, reads)
            started.callback(hub.close)
            hub.start()  # before any request: it tells the tokens revoked (app/fanout.py)
            tune_gc(config.gc_gen0_threshold)
            anyio.to_thread.current_default_thread_limiter().total_tokens = config.threadpool_size
            api.state.settings = config
            api.state.canasta = canasta
            api.state.read_models = read_models
            api.state.bots = bots
            api.state.heartbeat = heartbeat
            api.state.reads = reads
            api.state.idempotency = store_for(canasta, memory=config.database_url == MEMORY)
            api.state.hub = hub
            yield

    api = FastAPI(
        title="canasta-ledger",
        version="0.1.0",
        description="Event-sourced Canasta tables: every deal, shuffle, card and score is an "
        "immutable event. Players authenticate with a bearer token from POST /players; "
        "spectators need none. A web page may sign its player in instead (POST /sessions, "
        "an HttpOnly cookie; requests that change something then send X-Canasta-CSRF: 1).",
        lifespan=lifespan,
        docs_url=None,  # served by app.docs_ui, without a CDN
        redoc_url=None,
        generate_unique_id_function=openapi_contract.operation_id,
    )
    errors.install(api)
    config = settings or Settings()
    api.add_middleware(Idempotency)  # Idempotency-Key, in front of the routes only
    if config.command_lane:
        api.add_middleware(CommandLane, max_body=config.max_body_bytes)
    api.add_middleware(DatabaseOutage)  # 503 database_unavailable (app/outage.py)
    api.add_middleware(HeadAsGet)
    api.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)
    if config.rate_limits:  # outside the body limit and the command lane: refused first
        api.add_middleware(ClientLimits, settings=config)
    if config.cors_origins:  # the outermost: a preflight is answered before anything else
        api.add_middleware(
            CORSMiddleware,
            allow_origins=config.cors_origins,
            allow_credentials=True,
            allow_methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Last-Event-ID",
                CSRF_HEADER,
                MIN_STEP_HEADER,
            ],
            max_age=600,
        )
    observability.install(api, config)  # the outermost middleware; /ready, /metrics
    for router in (
        players,
        sessions,
        practice,
        tables,
        private,
        seats,
        deals,
        check,
        moves,
        views,
        stream,
        audit,
        keys,
    ):
        api.include_router(router.router, responses=errors.RESPONSES)
    docs_ui.install(api)
    web_ui.install(api)
    rules_pages.install(api)  # /rules, /rules/{name}: docs/rules/ as pages
    api.add_middleware(SecurityHeaders)  # outside the pages: every answer (docs/operations.md)
    api.add_middleware(StartupRefusals)
    stream_docs.document_streams(api)

    @api.get("/health", tags=["operations"])
    def health() -> Health:
        """Liveness probe."""
        return Health(status="ok")

    openapi_contract.install(api)  # links between operations, optional tokens

    return api


def refusing_app(refusal: StartupRefusal) -> FastAPI:
    """An application whose start-up fails with ``refusal`` (one line: StartupRefusals)."""

    @asynccontextmanager
    async def lifespan(api: FastAPI) -> AsyncIterator[None]:
        raise refusal
        yield  # an async generator, as the lifespan must be

    api = FastAPI(lifespan=lifespan)
    api.add_middleware(StartupRefusals)
    return api


def app_from_environment() -> FastAPI:
    """``uvicorn app.main:app``: the application over the environment's settings. Settings
    it cannot use stop the start-up with one line, as every other refusal does, rather than
    a traceback at import (with ``--workers N`` uvicorn then started worker after worker,
    each dying the same way, and never exited)."""
    try:
        settings = settings_from_environment()
    except StartupRefusal as refusal:
        return refusing_app(refusal)
    return create_app(settings)


app = app_from_environment()
