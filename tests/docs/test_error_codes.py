"""One table lists every error code the server can send, with its status
(docs/rules/common.md, "Error codes"), and this test keeps it true: the codes are collected
from the source with an AST walk over app/, domain/ and projections/, so a code added later
without a row in the table fails here, naming the code and where it is sent.

Where a code comes from:

- a refusal built from an exception class (``RuleViolation``, ``SetupError``, ``Forbidden``,
  ``Conflict``, ``NotFound``, ``Unauthenticated``, ... every subclass of ``DomainError``):
  its code is the call's first argument (or ``code=``), or the class's own fixed code; its
  status is the one ``app.errors`` gives the class;
- ``error_body("code", ...)`` and ``said_body(...)`` (the error answers built by hand): the status is the number
  given next to it (``JSONResponse(error_body(...), 409)``), where there is one;
- a map from HTTP status to code in an exception handler (``{404: "not_found", ...}``) and
  its ``.get(..., "default")``.

A code the source computes (``RuleViolation(self.meld_rule, ...)``) cannot be read here; such
codes are rule ids, whose every literal in the code is checked against docs/rules/ by
``tests/docs/test_docs.py`` (and the table's first row covers every rule id refused with 400).
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass

import app.main  # noqa: F401  (imports every module that defines a refusal)
from app.errors import status_of
from domain import errors as domain_errors
from domain.errors import DomainError
from domain.refusals import MESSAGES, fields
from tests.docs.test_docs import CODE_DIRS, REPO, RULE_ID, defined_ids

TABLE_DOC = REPO / "docs" / "rules" / "common.md"
STATUSES = range(100, 600)
#: A refusal's key whose template takes no parameters (to build a ``NotFound``).
PLAIN_KEY = next(key for key, template in MESSAGES.items() if not fields(template))


@dataclass(frozen=True)
class Sent:
    code: str
    status: int | None  # None: not known from the source (the table may give any status)
    where: str


def refusal_classes() -> dict[str, type[DomainError]]:
    found: dict[str, type[DomainError]] = {}
    todo: list[type[DomainError]] = [DomainError]
    while todo:
        cls = todo.pop()
        found[cls.__name__] = cls
        todo.extend(cls.__subclasses__())
    return found


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _status_next_to(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> int | None:
    """The HTTP status given in the call that wraps ``call``, as an integer literal."""
    parent = parents.get(call)
    if isinstance(parent, ast.Call):
        for arg in [*parent.args, *(k.value for k in parent.keywords)]:
            if isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value in STATUSES:
                return arg.value
    return None


def sent_codes() -> list[Sent]:
    classes = refusal_classes()
    sent: list[Sent] = []
    for top in CODE_DIRS:
        for path in sorted((REPO / top).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            parents = {
                child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
            }
            named = _module_constants(tree)
            for node in ast.walk(tree):
                where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.Call):
                    sent.extend(_from_call(node, classes, parents, where, named))
                elif isinstance(node, ast.Dict):
                    sent.extend(_from_status_map(node, parents, where))
    return sent


def _from_call(
    call: ast.Call,
    classes: dict[str, type[DomainError]],
    parents: dict[ast.AST, ast.AST],
    where: str,
    named: dict[str, str],
) -> list[Sent]:
    name = _name(call.func)
    if name in ("error_body", "said_body"):  # said_body: worded by key (domain.refusals)
        first = call.args[0] if call.args else None
        code = _literal(first) or _named_code(first, named)
        return [Sent(code, _status_next_to(call, parents), where)] if code else []
    if name not in classes or (name == "DomainError" and not call.args):
        return []
    cls = classes[name]
    params = list(inspect.signature(cls.__init__).parameters)  # self first
    if "code" in params:
        given = next((k.value for k in call.keywords if k.arg == "code"), None)
        if given is None and call.args and params[1] == "code":
            given = call.args[0]
        code = _literal(given) or _named_code(given, named)
        if code is None:
            return []  # computed: a rule id (see the module's docstring)
        instance = cls.__new__(cls)
        DomainError.__init__(instance, code, "")
    else:
        try:
            instance = cls("")  # type: ignore[call-arg]
        except KeyError:  # worded by key (NotFound): a key whose template takes no params
            instance = cls(PLAIN_KEY)  # type: ignore[call-arg]
    return [Sent(instance.code, status_of(instance), where)]


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """The module's own string constants (``CSRF_CODE = "csrf_header_required"``)."""
    return {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _named_code(node: ast.expr | None, named: dict[str, str]) -> str | None:
    """A code named by a constant of its own module or of ``domain.errors``
    (``code=RACE_LOST``)."""
    name = node.id if isinstance(node, ast.Name) else None
    if isinstance(node, ast.Attribute):
        name = node.attr
    if name in named:
        return named[name]
    value = getattr(domain_errors, name, None) if name else None
    return value if isinstance(value, str) and name and name.isupper() else None


def _from_status_map(node: ast.Dict, parents: dict[ast.AST, ast.AST], where: str) -> list[Sent]:
    """``{404: "not_found", 405: "method_not_allowed"}`` (and ``.get(status, "default")``)."""
    pairs = [
        (k.value, v.value)
        for k, v in zip(node.keys, node.values, strict=True)
        if isinstance(k, ast.Constant) and type(k.value) is int and k.value in STATUSES
        if isinstance(v, ast.Constant) and isinstance(v.value, str)
    ]
    if not pairs or len(pairs) != len(node.keys):
        return []
    found = [Sent(code, status, where) for status, code in pairs]
    method = parents.get(node)
    call = parents.get(method) if method is not None else None
    if (
        isinstance(method, ast.Attribute)
        and method.attr == "get"
        and isinstance(call, ast.Call)
        and len(call.args) == 2
        and (default := _literal(call.args[1]))
    ):
        found.append(Sent(default, None, where))
    return found


def error_table() -> dict[str, set[str]]:
    """The table of the "Error codes" section: code -> the statuses its rows give it
    (``R-*`` for the row of the rule ids)."""
    text = TABLE_DOC.read_text()
    section = text.split("\n## Error codes\n", 1)[1].split("\n## ", 1)[0]
    tables = re.findall(r"(?:^\|.*\|\n)+", section, flags=re.MULTILINE)
    assert len(tables) == 1, f"{TABLE_DOC}: the Error codes section holds {len(tables)} tables"
    rows: dict[str, set[str]] = {}
    for line in tables[0].splitlines()[2:]:
        status, codes, _when = (cell.strip() for cell in line.strip("|").split("|", 2))
        for code in re.findall(r"`([^`]+)`", codes):
            rows.setdefault(code, set()).add(status)
    return rows


def test_the_scan_finds_the_codes_it_should() -> None:
    """The walk itself works: known codes are found with their statuses."""
    found = {(s.code, s.status) for s in sent_codes()}
    for expected in [
        ("not_found", 404),
        ("method_not_allowed", 405),
        ("malformed", 422),
        ("internal", 500),
        ("R-CMD-1", 409),
        ("race_lost", 409),
        ("name_taken", 409),
        ("seq_too_far", 409),
        ("csrf_header_required", 403),
        ("R-CMD-2", 401),
        ("R-VIEW-4", 403),
        ("R-HIST-1", 409),
        ("R-SEAT-3", 400),
        ("body_too_large", None),
        ("http_error", None),
    ]:
        assert expected in found, expected


def test_every_code_the_server_can_send_is_in_the_one_table() -> None:
    table = error_table()
    defined = defined_ids()
    problems = []
    for sent in sent_codes():
        statuses = table.get(sent.code, set())
        if RULE_ID.fullmatch(sent.code) and sent.status in (400, None):
            if "R-*" not in table or "400" not in table["R-*"]:
                problems.append(f"{sent.code} ({sent.where}): the table has no row R-* for 400")
            if sent.code not in defined:
                problems.append(f"{sent.code} ({sent.where}): not defined in docs/rules/")
            continue
        if not statuses:
            problems.append(
                f"{sent.code} (status {sent.status}, sent at {sent.where}): no row in the "
                f"error-code table of {TABLE_DOC.relative_to(REPO)}"
            )
        elif sent.status is not None and str(sent.status) not in statuses:
            problems.append(
                f"{sent.code} (sent at {sent.where}) with status {sent.status}: the table gives "
                f"it {sorted(statuses)} only"
            )
    assert not problems, "error codes missing from the table:\n" + "\n".join(sorted(set(problems)))


def test_every_code_in_the_table_is_sent() -> None:
    """No row for a code the server never sends (a renamed code leaves no stale row)."""
    sent = {s.code for s in sent_codes()}
    stale = sorted(
        code
        for code, statuses in error_table().items()
        if code not in sent
        and code != "R-*"
        and not (RULE_ID.fullmatch(code) and statuses == {"400"})
    )
    assert not stale, f"rows of the error-code table for codes nothing sends: {stale}"
