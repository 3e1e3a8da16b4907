"""Every log record and printed line of a test, for the secrecy tests to scan (no card a
viewer may not see in a log: R-VIEW rules, docs/api.md). The ``log_watch`` fixture
(tests/api/conftest.py) starts one for a test."""

from __future__ import annotations

import logging

import pytest

_STANDARD_RECORD_ATTRS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class LogWatch:
    """Every log record of every logger at DEBUG, and everything printed, for scanning."""

    def __init__(self, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]):
        self.caplog = caplog
        self.capsys = capsys
        self.attached: list[logging.Logger] = []

    def start(self) -> None:
        self.caplog.set_level(logging.DEBUG)
        for name, logger in list(logging.root.manager.loggerDict.items()):
            if not isinstance(logger, logging.Logger):
                continue
            if logger.level not in (logging.NOTSET, logging.DEBUG):
                self.caplog.set_level(logging.DEBUG, logger=name)
            if not logger.propagate and self.caplog.handler not in logger.handlers:
                logger.addHandler(self.caplog.handler)
                self.attached.append(logger)
        self.caplog.clear()
        self.capsys.readouterr()

    def stop(self) -> None:
        for logger in self.attached:
            logger.removeHandler(self.caplog.handler)
        self.attached.clear()

    def take(self) -> list[str]:
        """The log lines and printed text since the last call."""
        lines = []
        formatter = logging.Formatter()
        for record in list(self.caplog.records):
            try:
                text = record.getMessage()
            except Exception:
                text = f"{record.msg!r} % {record.args!r}"
            extras = [
                f"{k}={v!r}" for k, v in record.__dict__.items() if k not in _STANDARD_RECORD_ATTRS
            ]
            if record.exc_info:
                extras.append(formatter.formatException(record.exc_info))
            if record.stack_info:
                extras.append(record.stack_info)
            lines.append(f"{record.levelname} {record.name}: {text} {' '.join(extras)}".strip())
        self.caplog.clear()
        out, err = self.capsys.readouterr()
        lines += [f"stdout: {line}" for line in out.splitlines()]
        lines += [f"stderr: {line}" for line in err.splitlines()]
        return lines
