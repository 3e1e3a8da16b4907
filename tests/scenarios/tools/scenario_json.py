"""Compact JSON layout for rule scenario files (docs/scenarios.md).

One top-level key per line, one hand per line, one step per line: scenarios stay readable
and diffs stay small. Used by the generators in this folder and to reformat hand-written files:

    .venv/bin/python tests/scenarios/tools/scenario_json.py FILE...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _inline(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _block(value: dict[str, Any], indent: str) -> str:
    inner = indent + "  "
    lines = [f"{inner}{json.dumps(k)}: {_inline(v)}" for k, v in value.items()]
    return "{\n" + ",\n".join(lines) + "\n" + indent + "}"


def _object(data: dict[str, Any], indent: str) -> str:
    inner = indent + "  "
    parts = []
    for key, value in data.items():
        if key == "deal" and isinstance(value, dict):
            deal_lines = []
            for k, v in value.items():
                if k in ("hands", "ponytails") and isinstance(v, dict):
                    deal_lines.append(f"{inner}  {json.dumps(k)}: {_block(v, inner + '  ')}")
                else:
                    deal_lines.append(f"{inner}  {json.dumps(k)}: {_inline(v)}")
            parts.append(
                f"{inner}{json.dumps(key)}: {{\n" + ",\n".join(deal_lines) + f"\n{inner}}}"
            )
        elif key == "steps" and isinstance(value, list):
            steps = ",\n".join(f"{inner}  {_inline(s)}" for s in value)
            parts.append(f"{inner}{json.dumps(key)}: [\n{steps}\n{inner}]")
        elif key == "deals" and isinstance(value, list):
            deals = ",\n".join(f"{inner}  " + _object(d, inner + "  ") for d in value)
            parts.append(f"{inner}{json.dumps(key)}: [\n{deals}\n{inner}]")
        else:
            parts.append(f"{inner}{json.dumps(key)}: {_inline(value)}")
    return "{\n" + ",\n".join(parts) + "\n" + indent + "}"


def dumps(data: dict[str, Any]) -> str:
    """One scenario file's text; ``deals`` (several deals) is laid out deal by deal."""
    return _object(data, "") + "\n"


def write(path: Path, data: dict[str, Any]) -> None:
    """Writes a generated scenario file (and its folder), and says so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(data), encoding="utf-8")
    steps = f" ({len(data['steps'])} steps)" if "steps" in data else ""
    print(f"wrote {path.relative_to(path.parents[3])}{steps}")


def main(paths: list[str]) -> None:
    for name in paths:
        path = Path(name)
        data = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(dumps(data), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
