"""The deployment kit (``deploy/``, docs/deployment.md) works as its files say.

- ``deploy/nginx/canasta.conf``, run by a real nginx in front of a real server over HTTPS: a
  spectator's live stream gets each move as it is made (not held in nginx's buffers), plain
  HTTP is sent to HTTPS, the session cookie is Secure, the metrics are not public, the server
  counts its per-address limits by the client's own address (not nginx's), and a client that
  closes its streams frees them on the server.
- ``deploy/systemd/*``: systemd's own checker accepts the units, and their commands, run as
  the units run them, serve a PostgreSQL store with the read models and the bots in processes
  of their own.
- ``deploy/prometheus/canasta-alerts.yml``: every metric and label it names is one the server
  serves.
"""

from __future__ import annotations

import contextlib
import random
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from app import metrics
from app.routes import deals
from tests.e2e.client import Api, play_from_menu
from tests.e2e.conftest import Backend, make_backend, running
from tests.e2e.nginx import Nginx, nginx_in_front
from tests.e2e.server import server_env
from tests.support.http import free_port
from tests.support.keys import key_file

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
WAIT_SECONDS = 10.0


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Backend, Nginx]]:
    """A server (SQLite) behind nginx; per-address limits on, registrations at 2 a minute."""
    env = {"CANASTA_RATE_LIMITS": "true", "CANASTA_RATE_LIMIT_REGISTRATION": "2/minute"}
    (tmp_path / "server").mkdir()
    for backend in running(make_backend("sqlite", tmp_path / "server", extra_env=env)):
        with nginx_in_front(tmp_path / "nginx", backend.server.port) as nginx:
            yield backend, nginx


def https_api(nginx: Nginx) -> Api:
    api = Api(nginx.url)
    api.http.close()
    api.http = nginx.client(headers={"Connection": "close"})
    return api


class StreamReader:
    """A spectator reading ``GET /deals/{id}/stream`` through nginx in a thread: the time each
    event's line arrived."""

    def __init__(self, nginx: Nginx, deal: str) -> None:
        self.arrived: dict[int, float] = {}
        self.client = nginx.client(timeout=httpx.Timeout(10.0, read=60.0))
        self.path = f"/deals/{deal}/stream"
        self.error: BaseException | None = None
        self._socket: socket.socket | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with self.client.stream("GET", self.path) as answer:
                assert answer.status_code == 200, answer.status_code
                self._socket = answer.extensions["network_stream"].get_extra_info("socket")
                for line in answer.iter_lines():
                    if line.startswith("id:"):
                        self.arrived[int(line[3:])] = time.monotonic()
        except httpx.HTTPError as exc:  # closed by the test
            self.error = exc

    def wait_for(self, step: int) -> float:
        deadline = time.monotonic() + WAIT_SECONDS
        while step not in self.arrived:
            assert time.monotonic() < deadline, (
                f"event {step} did not reach the spectator through nginx within {WAIT_SECONDS} s"
            )
            time.sleep(0.02)
        return self.arrived[step]

    def close(self) -> None:
        """As a closed tab: the connection shut down, which ends the thread's blocked read,
        then closed. (Closed first from here, its file descriptor was freed while the thread
        still read it: the next connection the test opened got that number, and the thread
        took the first 5 bytes of its answer, a TLS record's header: "illegal status line:
        1.1 200 OK".)"""
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=10)
        self.client.close()


def last_public_step(api: Api, deal: str) -> int:
    """The step of the deal's last event a spectator may see (the stream sends only those)."""
    return int(api.events(deal)[-1]["step"])


def test_through_nginx_a_spectator_sees_each_move_as_it_is_made(
    site: tuple[Backend, Nginx],
) -> None:
    _backend, nginx = site
    api = https_api(nginx)
    ann, bob = api.register("ann"), api.register("bob")
    table = api.seated_table([ann, bob])
    deal = api.start(ann, table)
    reader = StreamReader(nginx, deal)
    try:
        step = last_public_step(api, deal)
        reader.wait_for(step)  # the catch-up
        rng = random.Random(7)
        for _ in range(5):  # each move reaches the spectator before the next is made
            assert any(play_from_menu(api, p, deal, rng) for p in (ann, bob))
            reader.wait_for(last_public_step(api, deal))
    finally:
        reader.close()
        api.close()


def client_from(nginx: Nginx, address: str, base_url: str | None = None) -> httpx.Client:
    """A client of the site (or of ``base_url``) that connects from a loopback address of its
    own (Linux answers on all of 127.0.0.0/8), as another machine would."""
    transport = httpx.HTTPTransport(local_address=address, verify=nginx.trust())
    return httpx.Client(base_url=base_url or nginx.url, transport=transport, timeout=30)


def test_through_nginx_https_is_required_and_the_session_cookie_is_secure(
    site: tuple[Backend, Nginx],
) -> None:
    backend, nginx = site
    with httpx.Client(base_url=nginx.plain_url) as plain:
        answer = plain.get("/tables?x=1")
    assert answer.status_code == 308
    assert answer.headers["location"] == f"{nginx.url}/tables?x=1"

    with nginx.client() as client:
        token = client.post("/players", json={"name": "cleo"}).json()["token"]
        signed_in = client.post("/sessions", headers={"Authorization": f"Bearer {token}"})
        assert signed_in.status_code == 201, signed_in.text
        cookie = signed_in.headers["set-cookie"]
        assert cookie.startswith("canasta_session=") and "; Secure" in cookie, cookie
        # Straight to uvicorn, over plain HTTP, the same sign-in's cookie is not Secure: the
        # Secure above comes from nginx's X-Forwarded-Proto.
        with client_from(nginx, "127.0.0.4", backend.server.url) as direct_client:
            direct = direct_client.post("/sessions", headers={"Authorization": f"Bearer {token}"})
        assert direct.status_code == 201 and "; Secure" not in direct.headers["set-cookie"]

        # HSTS is nginx's; the server's own security headers pass through once.
        page = client.get("/", headers={"Accept": "text/html"})
        assert page.headers["strict-transport-security"] == "max-age=63072000"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert len(page.headers.get_list("content-security-policy")) == 1
        assert signed_in.headers["strict-transport-security"] == "max-age=63072000"
        with client_from(nginx, "127.0.0.4", backend.server.url) as direct_client:
            assert "strict-transport-security" not in direct_client.get("/").headers

        # The metrics are not served to the public site; Prometheus reads uvicorn's port.
        assert client.get("/metrics").status_code == 404
        assert httpx.get(f"{backend.server.url}/metrics").status_code == 200


def test_through_nginx_limits_count_each_client_address_apart(
    site: tuple[Backend, Nginx],
) -> None:
    """Registrations are limited per client address (2 a minute here): two clients behind the
    same nginx, on two addresses, each get their own two. Were the server counting nginx's own
    address, the second client would be refused at once."""
    _backend, nginx = site

    with client_from(nginx, "127.0.0.2") as first, client_from(nginx, "127.0.0.3") as second:
        # A client cannot pass itself off as another address: nginx replaces the header.
        spoof = {"X-Forwarded-For": "203.0.113.9"}
        for n in range(2):
            assert (
                first.post("/players", json={"name": f"first{n}"}, headers=spoof).status_code == 201
            )
        refused = first.post("/players", json={"name": "first2"})
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "rate_limited"
        assert int(refused.headers["retry-after"]) > 0
        for n in range(2):
            assert second.post("/players", json={"name": f"second{n}"}).status_code == 201


def open_streams(server_url: str) -> float:
    # Plain HTTP to uvicorn's own port: no certificate is involved, and without verify=False
    # httpx loads the CA bundle again at every poll (once, under load, an OpenSSL error left
    # behind by the test's TLS streams failed that load: "[X509] PEM lib").
    text = httpx.get(f"{server_url}/metrics", verify=False).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("canasta_open_streams{")
    )


def test_streams_closed_by_their_clients_behind_nginx_are_freed(
    site: tuple[Backend, Nginx],
) -> None:
    """A browser tab closed behind nginx frees its streams on the server (each counts towards
    the client's cap of open streams, and holds a place in the server's memory)."""
    backend, nginx = site
    api = https_api(nginx)
    ann, bob = api.register("ann"), api.register("bob")
    table = api.seated_table([ann, bob])
    deal = api.start(ann, table)
    readers = [StreamReader(nginx, deal) for _ in range(3)]
    step = last_public_step(api, deal)
    for reader in readers:
        reader.wait_for(step)
    assert open_streams(backend.server.url) == 3
    for reader in readers:
        reader.close()
    deadline = time.monotonic() + WAIT_SECONDS
    while (count := open_streams(backend.server.url)) != 0:
        assert time.monotonic() < deadline, f"{count} streams still open on the server"
        time.sleep(0.1)
    api.close()


# --- systemd -----------------------------------------------------------------------------
UNITS = [
    *sorted((DEPLOY / "systemd").glob("canasta*.service")),
    DEPLOY / "systemd" / "canasta.target",
]


def unit_for_test(text: str, prefix: Path) -> str:
    """A unit with the install directory (/opt/canasta) replaced by this checkout."""
    return (
        text.replace("/opt/canasta/.venv/bin/", f"{Path(sys.executable).parent}/")
        .replace("/opt/canasta", str(REPO))
        .replace("/etc/canasta/", f"{prefix}/")
    )


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    checker = shutil.which("systemd-analyze")
    if checker is None:
        pytest.fail("systemd-analyze is missing (Debian's systemd package)")
    for unit in UNITS:
        (tmp_path / unit.name).write_text(unit_for_test(unit.read_text(), tmp_path))
    (tmp_path / "canasta.env").write_text((DEPLOY / "systemd" / "canasta.env").read_text())
    check = subprocess.run(
        [checker, "verify", *(str(tmp_path / unit.name) for unit in UNITS)],
        capture_output=True,
        text=True,
    )
    # A user the unit names that this machine lacks is not the unit's fault.
    problems = [
        line
        for line in (check.stdout + check.stderr).splitlines()
        if line.strip() and "canasta" in line and "user" not in line.lower()
    ]
    assert check.returncode == 0 and not problems, check.stdout + check.stderr


def exec_start(unit: Path) -> list[str]:
    line = next(ln for ln in unit.read_text().splitlines() if ln.startswith("ExecStart="))
    return shlex.split(unit_for_test(line.removeprefix("ExecStart="), REPO))


def unit_environment(unit: Path) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in unit.read_text().splitlines():
        if line.startswith("Environment="):
            for item in shlex.split(line.removeprefix("Environment=")):
                name, value = item.split("=", 1)
                env[name] = value
    return env


def env_file(path: Path) -> dict[str, str]:
    """The settings of a systemd ``EnvironmentFile`` (NAME=value lines, # comments)."""
    settings: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, value = line.split("=", 1)
            settings[name] = value
    return settings


@pytest.mark.postgres
def test_the_units_commands_serve_a_store_with_the_read_models_and_bots_apart(
    migrated_postgres_url: str, tmp_path: Path
) -> None:
    """The three services' commands, with the example settings file (its database and paths
    replaced by the test's), run as systemd would run them: the server answers ready, the
    read models follow (``/ready`` waits on them), a bot plays at a table, and ``/metrics``
    adds up the three processes' counts (the bots' moves are counted by ``canasta bots``)."""
    settings = env_file(DEPLOY / "systemd" / "canasta.env")
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    settings.update(
        DATABASE_URL=migrated_postgres_url,
        CANASTA_SIGNING_KEY_FILE=str(key_file(tmp_path)),
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
    )
    port = free_port()
    processes: list[subprocess.Popen[bytes]] = []
    logs = []
    try:
        for name in ("canasta-web", "canasta-project", "canasta-bots"):
            unit = DEPLOY / "systemd" / f"{name}.service"
            command = exec_start(unit)
            if name == "canasta-web":
                command[command.index("--port") + 1] = str(port)
            env = {**server_env(tmp_path / "data", None), **settings, **unit_environment(unit)}
            log = tmp_path / f"{name}.log"
            logs.append(log)
            processes.append(
                subprocess.Popen(
                    command, cwd=REPO, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
                )
            )
        api = Api(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 60
        while True:
            try:
                if api.http.get("/ready").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "\n".join(p.read_text() for p in logs)
            time.sleep(0.2)
        ann = api.register("ann")
        table = api.create_table(ann, "classic", 2)
        api.join(ann, table, 0)
        api.call(
            "POST",
            f"/tables/{table}/seats",
            player=ann,
            json={"seat": 1, "bot": "basic"},
            expect=200,
        )
        deal = api.start(ann, table)
        rng = random.Random(3)
        # ann plays until /metrics, which adds up the three processes' counts, shows two
        # moves of the bot (played by canasta bots).
        counted = re.compile(r'^canasta_bot_moves_total\{outcome="accepted"\} ([0-9.]+)$', re.M)
        deadline = time.monotonic() + 60
        while (
            not (found := counted.search(api.http.get("/metrics").text))
            or float(found.group(1)) < 2
        ):
            assert time.monotonic() < deadline, "no bot move in /metrics:\n" + logs[2].read_text()
            play_from_menu(api, ann, deal, rng)
            time.sleep(0.2)
        for log in logs[1:]:  # the read models and the bots each in their own process
            assert "leading" in log.read_text(), log.read_text()
        api.close()
    finally:
        for proc in processes:
            proc.terminate()
        for proc in processes:
            try:
                assert proc.wait(timeout=30) in (0, -15), "a process did not stop cleanly"
            except subprocess.TimeoutExpired:
                proc.kill()
                raise


# --- Prometheus ----------------------------------------------------------------------------
def test_every_metric_and_label_the_alert_rules_name_is_served() -> None:

    rules = yaml.safe_load((DEPLOY / "prometheus" / "canasta-alerts.yml").read_text())
    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert alerts and all({"alert", "expr", "annotations"} <= rule.keys() for rule in alerts)
    served: dict[str, set[str]] = {}  # a sample's name -> its label names
    for value in vars(metrics).values():
        describe = getattr(value, "describe", None)
        if describe is None or not hasattr(value, "_labelnames"):
            continue
        for family in describe():
            suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"]}
            for suffix in suffixes.get(family.type, [""]):
                labels = set(value._labelnames) | ({"le"} if suffix == "_bucket" else set())
                served[family.name + suffix] = labels
    for name in ("canasta_store_up", "canasta_store_head"):
        served[name] = set()
    served["canasta_projection_lag"] = {"projection"}
    for rule in alerts:
        for name, labels in re.findall(r"(canasta_\w+)(?:\{([^}]*)\})?", rule["expr"]):
            assert name in served, f"{rule['alert']}: the server serves no {name}"
            for label in re.findall(r"(\w+)\s*=~?", labels):
                assert label in served[name], f"{rule['alert']}: {name} has no label {label}"
    # A route label is a route template, as the server writes it.
    routes = {route.path for route in deals.router.routes if hasattr(route, "path")}
    for rule in alerts:
        for route in re.findall(r'route="([^"]+)"', rule["expr"]):
            assert route in routes, f"{rule['alert']}: no route {route}"
