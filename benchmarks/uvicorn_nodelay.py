"""``python -m benchmarks.uvicorn_nodelay ARGS``: the ``uvicorn`` command, with one fix.

With ``--workers N`` (N > 1) uvicorn binds the listening socket itself
(``Config.bind_socket``) with ``proto`` left at 0. Accepted connections inherit it, and
asyncio sets ``TCP_NODELAY`` only on sockets whose ``proto`` is ``IPPROTO_TCP``, so Nagle's
algorithm stays on: every keep-alive response written in two pieces (headers, then body)
waits for the client's delayed ACK, about 40 ms on Linux (uvicorn issue #3149, open for
uvicorn 0.54; uvloop sets the option regardless, so ``uvicorn[standard]`` does not suffer).
Here the bound socket is re-wrapped with ``IPPROTO_TCP`` before the workers get it.
Used by ``benchmarks.server --nodelay-fix``; a server deployment could do the same.
"""

from __future__ import annotations

import socket

import uvicorn.config
import uvicorn.main

_bind_socket = uvicorn.config.Config.bind_socket


def bind_socket(self: uvicorn.config.Config) -> socket.socket:
    sock = _bind_socket(self)
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.proto != socket.IPPROTO_TCP:
        fixed = socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
        fixed.set_inheritable(True)
        return fixed
    return sock


if __name__ == "__main__":  # the workers are spawned: they re-import this module
    uvicorn.config.Config.bind_socket = bind_socket  # type: ignore[method-assign]
    uvicorn.main.main()
