"""A real nginx running the project's own site file (``deploy/nginx/canasta.conf``) in front
of a test server, over HTTPS with a certificate made for the test.

Only the lines an operator marks CHANGE are replaced (the server's name and certificate, the
upstream's port) and the listening ports, so what the tests check is the file operators copy.
nginx itself must be installed: ``make test`` installs Debian's (``scripts/nginx.sh``); a
missing nginx fails the tests, it never skips them.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import ssl
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.support.http import free_port

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "deploy" / "nginx" / "canasta.conf"
NGINX = os.environ.get("CANASTA_NGINX", "/usr/sbin/nginx")
HOST = "localhost"


def nginx_binary() -> str:
    found = shutil.which(NGINX) or shutil.which("nginx")
    if found is None:
        pytest.fail(
            f"no nginx at {NGINX}: the deployment tests need it. `make test` installs it "
            "(scripts/nginx.sh), or: apt-get install nginx-light (or set CANASTA_NGINX)"
        )
    return found


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and 127.0.0.1 (it is its own authority) and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(HOST), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def site_for_test(
    upstream_port: int, http_port: int, https_port: int, cert: Path, key: Path
) -> str:
    """The site file with its CHANGE lines (and ports) set for this test."""
    text = SITE.read_text()
    replacements = {
        "server 127.0.0.1:8000;": f"server 127.0.0.1:{upstream_port};",
        "listen 80;": f"listen 127.0.0.1:{http_port};",
        "listen [::]:80;": "",
        "listen 443 ssl http2;": f"listen 127.0.0.1:{https_port} ssl http2;",
        "listen [::]:443 ssl http2;": "",
        "server_name table.example;": f"server_name {HOST};",
        "/etc/letsencrypt/live/table.example/fullchain.pem": str(cert),
        "/etc/letsencrypt/live/table.example/privkey.pem": str(key),
        # The redirection names the port the client used (443 in production).
        "return 308 https://$host$request_uri;": f"return 308 https://$host:{https_port}$request_uri;",
    }
    for old, new in replacements.items():
        assert old in text, f"{SITE} no longer has {old!r}: update tests/e2e/nginx.py"
        text = text.replace(old, new)
    return text


class Nginx:
    """nginx in the foreground in its own directory, serving the site for a test server."""

    def __init__(self, workdir: Path, upstream_port: int) -> None:
        self.dir = workdir
        self.http_port = free_port()
        self.https_port = free_port()
        self.cert, key = self_signed(workdir)
        site = workdir / "canasta.conf"
        site.write_text(
            site_for_test(upstream_port, self.http_port, self.https_port, self.cert, key)
        )
        # The part of nginx.conf Debian's package provides around its conf.d/ files, with
        # every path in this directory. As root, the workers run as root too (nginx's default
        # user, nobody, could not write this test's temporary files).
        user = "user root root;" if os.geteuid() == 0 else ""
        temp = "\n".join(
            f"    {kind}_temp_path {workdir / kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        (workdir / "nginx.conf").write_text(
            f"""{user}
worker_processes 1;
pid {workdir / "nginx.pid"};
error_log {workdir / "error.log"} info;
events {{ worker_connections 256; }}
http {{
    access_log {workdir / "access.log"};
{temp}
    include {site};
}}
"""
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.https_port}"

    @property
    def plain_url(self) -> str:
        return f"http://{HOST}:{self.http_port}"

    def trust(self) -> ssl.SSLContext:
        """TLS settings that trust the test's certificate (and nothing else)."""
        return ssl.create_default_context(cafile=str(self.cert))

    def client(self, **options: Any) -> httpx.Client:
        """A client of the site over HTTPS that trusts the test's certificate."""
        options.setdefault("timeout", 30)
        return httpx.Client(base_url=self.url, verify=self.trust(), **options)

    def start(self) -> None:
        binary = nginx_binary()
        conf = str(self.dir / "nginx.conf")
        check = subprocess.run(
            [binary, "-t", "-p", str(self.dir), "-c", conf], capture_output=True, text=True
        )
        assert check.returncode == 0, f"nginx -t refused the site file:\n{check.stderr}"
        self.proc = subprocess.Popen(
            [binary, "-p", str(self.dir), "-c", conf, "-g", "daemon off;"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / "stderr.log").open("wb"),
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                with self.client() as client:
                    client.get("/health")
                return
            except httpx.TransportError:
                assert self.proc.poll() is None, self.log()
                time.sleep(0.1)
        raise AssertionError("nginx did not answer within 15 s:\n" + self.log())

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def log(self) -> str:
        return "\n".join(
            path.read_text(errors="replace")
            for path in (self.dir / "error.log", self.dir / "stderr.log")
            if path.exists()
        )


@contextmanager
def nginx_in_front(workdir: Path, upstream_port: int) -> Iterator[Nginx]:
    workdir.mkdir(parents=True, exist_ok=True)
    nginx = Nginx(workdir, upstream_port)
    nginx.start()
    try:
        yield nginx
    finally:
        nginx.stop()
