"""The eventsourcing library's private names the project relies on are still there.

``app/infra/library.py`` is the one module of ``app`` that reaches into the library's private
API; its ``PRIVATE_API`` lists those names, and the overrides and calls that cannot live there
(recorder subclasses in ``app/infra``, the domain's aggregates). A library upgrade that drops
or changes one of them fails here, naming it, rather than somewhere in a game.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.application import Application, ProcessingEvent
from eventsourcing.domain import Aggregate

from app.infra.library import PRIVATE_API

ROOT = Path(__file__).resolve().parents[2]

#: The parameters (after ``self`` or ``cls``) each method the project calls or overrides
#: must take, as (name, kind, default) with ``...`` for "no default".
SIGNATURES: dict[tuple[str, str], list[tuple[str, Any, Any]]] = {
    ("eventsourcing.application:Application", "_record"): [("processing_event", "POK", ...)],
    ("eventsourcing.application:Application", "_take_snapshots"): [
        ("processing_event", "POK", ...)
    ],
    ("eventsourcing.application:Application", "_notify"): [("recordings", "POK", ...)],
    ("eventsourcing.application:Application", "notify"): [("new_events", "POK", ...)],
    ("eventsourcing.application:Cache", "get"): [("key", "POK", ...), ("evict", "KO", False)],
    ("eventsourcing.application:Cache", "put"): [("key", "POK", ...), ("value", "POK", ...)],
    ("eventsourcing.postgres:PostgresApplicationRecorder", "_lock_table"): [("curs", "POK", ...)],
    ("eventsourcing.postgres:PostgresApplicationRecorder", "_notify_channel"): [
        ("curs", "POK", ...)
    ],
    ("eventsourcing.sqlite:SQLiteTrackingRecorder", "_create_table"): [("c", "POK", ...)],
    ("eventsourcing.domain:Aggregate", "_create"): [
        ("event_class", "POK", ...),
        ("id", "KO", None),
        ("kwargs", "VK", ...),
    ],
}
KINDS = {
    "POK": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "KO": inspect.Parameter.KEYWORD_ONLY,
    "VK": inspect.Parameter.VAR_KEYWORD,
}


def resolve(owner: str) -> type:
    module, _, name = owner.partition(":")
    found: type = getattr(importlib.import_module(module), name)
    return found


class _Probe(Aggregate):
    """An aggregate to look at the library's instance attributes."""


def instance_attributes(cls: type) -> set[str]:
    """Attributes the library sets on instances (not visible on the class)."""
    if cls is ProcessingEvent:
        return set(vars(ProcessingEvent()))
    if cls.__name__ == "Repository":
        app: Application[UUID] = Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
        return set(vars(app.repository))
    if cls is Aggregate:
        return set(vars(_Probe()))
    # Recorders need a database to construct: their __init__ must assign the attribute.
    source = "".join(inspect.getsource(klass) for klass in cls.__mro__ if klass is not object)
    return set(re.findall(r"self\.(\w+)\s*(?::[^=\n]+)?=", source))


@pytest.mark.parametrize(
    ("owner", "name"),
    [pytest.param(owner, name, id=f"{owner}.{name}") for owner, name, _ in PRIVATE_API],
)
def test_the_library_still_has_what_the_project_uses(owner: str, name: str) -> None:
    cls = resolve(owner)
    assert hasattr(cls, name) or name in instance_attributes(cls), (
        f"the installed eventsourcing has no {owner}.{name}, which the project uses "
        f"(see PRIVATE_API in app/infra/library.py)"
    )
    expected = SIGNATURES.get((owner, name))
    if expected is None:
        return
    params = list(inspect.signature(getattr(cls, name)).parameters.values())
    if (
        params
        and params[0].name in ("self", "cls")
        and not isinstance(inspect.getattr_static(cls, name), classmethod)
    ):
        params = params[1:]
    found = [(p.name, p.kind, p.default) for p in params]
    wanted = [
        (pname, KINDS[kind], inspect.Parameter.empty if default is ... else default)
        for pname, kind, default in expected
    ]
    assert found == wanted, (
        f"eventsourcing's {owner}.{name} now takes {found}; the project calls or overrides "
        f"it as taking {wanted} (see app/infra/library.py)"
    )


def test_every_signature_checked_is_listed() -> None:
    listed = {(owner, name) for owner, name, _ in PRIVATE_API}
    assert set(SIGNATURES) <= listed


# What reaching into the library's private API looks like in app/ (outside library.py);
# ``self._record`` of the group committer is its own attribute.
PRIVATE_USES = re.compile(
    r"(?<!self)\._record\(|\._take_snapshots\(|\._notify\(|\bProcessingEvent[\[(]"
    r"|repository\.cache\b|\.cache\.cache\b|\._pending_events\b|\._create\("
)


def test_app_reaches_into_the_library_only_through_library_py() -> None:
    offenders = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        if path == ROOT / "app" / "infra" / "library.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if PRIVATE_USES.search(code):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "private eventsourcing API used outside app/infra/library.py:\n" + (
        "\n".join(offenders)
    )


def test_library_py_uses_only_what_it_lists() -> None:
    source = (ROOT / "app" / "infra" / "library.py").read_text()
    code = source[source.index("def cache_reader") :]
    called = set(re.findall(r"\bapp\.(_\w+)\(", code))
    listed = {name for owner, name, _ in PRIVATE_API if owner.endswith(":Application")}
    assert called <= listed, f"app/infra/library.py calls {called - listed}, not listed"
