"""``/docs`` and ``/redoc`` work without internet: every script, stylesheet, icon and schema
they load comes from the server itself (app/docs_ui.py, docs/operations.md).

Against a real uvicorn server (SQLite, as ``make run``): each page is fetched, every URL it
references is collected (``<script src>``, ``<link href>``, ReDoc's ``spec-url`` and the
quoted URLs of the inline Swagger UI configuration) and fetched from the same server: all
answer 200 with a body, and neither page names another host.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from tests.e2e.server import Server

#: Attributes that make a browser load something.
LOADING_ATTRIBUTES = {("script", "src"), ("link", "href"), ("img", "src"), ("redoc", "spec-url")}
#: A quoted URL-like string in an inline script: absolute, or a path from the root.
QUOTED_URL = re.compile(r"""["'](https?://[^"']+|/[^"'\s]*)["']""")
ABSOLUTE_URL = re.compile(r"""https?://[^\s"'<>)]+""")


class References(HTMLParser):
    """The URLs a page makes the browser load."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if (tag, name) in LOADING_ATTRIBUTES and value:
                self.urls.append(value)
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.urls.extend(QUOTED_URL.findall(data))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    workdir: Path = tmp_path_factory.mktemp("docs")
    with Server(workdir) as running:
        yield running


@pytest.mark.parametrize(("page", "expected"), [("/docs", 4), ("/redoc", 3)])
def test_the_api_docs_load_every_asset_from_the_server_itself(
    server: Server, page: str, expected: int
) -> None:
    answer = httpx.get(server.url + page, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    own_host = urlsplit(server.url).netloc
    foreign = [url for url in ABSOLUTE_URL.findall(answer.text) if urlsplit(url).netloc != own_host]
    assert not foreign, f"{page} names other hosts: {foreign}"

    parser = References()
    parser.feed(answer.text)
    urls = sorted(set(parser.urls))
    # Swagger UI: its script, stylesheet, icon and the schema; ReDoc: its script, icon and
    # the schema.
    assert len(urls) >= expected, urls
    assert any(url.endswith("/openapi.json") for url in urls)
    for url in urls:
        asset = httpx.get(urljoin(server.url + page, url), timeout=10)
        assert asset.status_code == 200, f"{page} references {url}: {asset.status_code}"
        assert asset.content, f"{page} references {url}: an empty body"
    scripts = [url for url in urls if url.endswith(".js")]
    assert scripts and all(url.startswith("/docs-assets/") for url in scripts), scripts
