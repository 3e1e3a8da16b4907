"""The rules as web pages (docs/web.md, "The rules"): every rule id the code can refuse with,
and every other error code, leads to an anchor on a served rules page; no served rules page
has a broken link; the pages need nothing from another host; and an installed package holds
the rule files themselves (pyproject.toml's package-data, through the link app/rules)."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from app.rules_pages import RULES_DIR
from tests.docs.test_docs import REPO, RULE_ID, defined_ids, raised_ids
from tests.docs.test_error_codes import error_table


class Page(HTMLParser):
    """What a served page holds: its elements' ids, its links, what it loads."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.loads: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if "id" in values:
            self.ids.add(values["id"])
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        if tag in ("script", "img") and "src" in values:
            self.loads.append(values["src"])
        if tag == "link" and "href" in values:
            self.loads.append(values["href"])


class Site:
    """The rules pages as a reader's browser gets them, each read once."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.pages: dict[str, Page] = {}

    def page(self, path: str) -> Page:
        if path not in self.pages:
            answer = self.client.get(path)
            assert answer.status_code == 200, path
            assert answer.headers["content-type"].startswith("text/html"), path
            self.pages[path] = Page(answer.text)
        return self.pages[path]

    def resolve(self, code: str) -> str:
        """Where ``/rules/{code}`` sends the reader: its anchor, checked to be on that page."""
        answer = self.client.get(f"/rules/{code}", follow_redirects=False)
        assert answer.status_code == 307, (code, answer.status_code)
        target = str(answer.headers["location"])
        path, _, anchor = target.partition("#")
        assert anchor == code, target
        assert code in self.page(path).ids, f"{target}: no element with this id"
        return target


@pytest.fixture
def site(client: TestClient) -> Site:
    return Site(client)


def test_every_rule_id_the_code_can_refuse_with_is_an_anchor_of_a_served_page(site: Site) -> None:
    """The ids of domain/, app/, projections/ and the ones docs/rules/ defines."""
    ids = set(raised_ids()) | defined_ids()
    assert {"R-PILE-3", "R-MA-MELD-1", "R-PT-PONY-1", "R-FROZEN-1", "R-SEAT-2"} <= ids
    where = {code: site.resolve(code) for code in sorted(ids)}
    assert where["R-PILE-3"] == "/rules/common#R-PILE-3"
    assert where["R-SEAT-2"] == "/rules/classic#R-SEAT-2"  # defined in classic.md
    assert where["R-MA-MELD-1"] == "/rules/modern_american#R-MA-MELD-1"
    assert where["R-PT-PONY-1"] == "/rules/ponytail#R-PT-PONY-1"
    assert where["R-FROZEN-1"] == "/rules/always_frozen#R-FROZEN-1"


def test_every_other_error_code_is_an_anchor_of_the_error_codes_table(site: Site) -> None:
    codes = sorted(code for code in error_table() if code != "R-*" and not RULE_ID.fullmatch(code))
    assert {"malformed", "not_found", "race_lost", "name_taken"} <= set(codes)
    for code in codes:
        assert site.resolve(code) == f"/rules/common#{code}"


def test_no_served_rules_page_has_a_broken_link_or_loads_from_another_host(site: Site) -> None:
    overview = site.page("/rules")
    files = sorted(path.stem for path in RULES_DIR.glob("*.md") if path.stem != "README")
    assert files == sorted(
        ["common", "classic", "extra_six", "always_frozen", "modern_american", "ponytail"]
    )
    routes = {f"/rules/{name}" for name in files}
    assert routes <= set(overview.links), "the navigation names every rules page"
    for path in ["/rules", *sorted(routes)]:
        page = site.page(path)
        assert "/" in page.links, f"{path}: no way back to the lobby"
        for load in page.loads:
            if load.startswith("data:"):  # the icon: none
                continue
            assert load.startswith("/") and not urlsplit(load).netloc, f"{path} loads {load}"
            assert site.client.get(load).status_code == 200, load
        for href in page.links:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc, f"{path} links out of the site: {href}"
            assert not parts.path.endswith(".md"), f"{path}: a link to a Markdown file: {href}"
            target = parts.path or path
            if target.startswith("/rules"):
                linked = site.page(target)
                assert not parts.fragment or parts.fragment in linked.ids, f"{path}: {href}"
            else:
                assert site.client.get(target).status_code == 200, f"{path}: {href}"


def test_a_rules_file_s_own_name_and_an_unknown_name(client: TestClient) -> None:
    for asked, route in [
        ("common.md", "/rules/common"),
        ("README", "/rules"),
        ("README.md", "/rules"),
    ]:
        answer = client.get(f"/rules/{asked}", follow_redirects=False)
        assert (answer.status_code, answer.headers["location"]) == (307, route), asked
    unknown = client.get("/rules/R-NOPE-1")
    assert unknown.status_code == 404
    assert "No such rules page" in unknown.text
    assert "/rules/common" in Page(unknown.text).links  # the reader can go on from there


def test_the_rendered_text_is_the_rule_files(site: Site, client: TestClient) -> None:
    """The served text is docs/rules/ itself: every sentence of a rule there reaches the page,
    the rule files' links to documents that are not served are plain text naming them."""
    common = client.get("/rules/common").text
    assert "To take a frozen pile, the player must hold two natural cards" in common
    assert 'title="docs/tables.md#absent-players (in the project' in common
    assert "**" not in common and "](" not in common, "Markdown left unrendered"
    assert RULES_DIR.resolve() == (REPO / "docs" / "rules").resolve()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What setuptools' build (a wheel or an install) puts in the packages, from a copy of the
    source as a clone has it."""
    tmp_path = tmp_path_factory.mktemp("package")
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__")
    for top in ("app", "bots", "domain", "projections", "docs/rules"):
        shutil.copytree(REPO / top, source / top, symlinks=True, ignore=ignore)
    assert (source / "app" / "rules").is_symlink()
    lib = tmp_path / "built"
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(lib),
        ],
        cwd=source,
        check=True,
        capture_output=True,
    )
    return lib


def test_an_installed_package_holds_the_rule_files_themselves(built: Path) -> None:
    """setuptools' build copies docs/rules/ into the package through the link app/rules:
    files, not a link that would lead nowhere once installed."""
    packaged = built / "app" / "rules"
    assert not packaged.is_symlink()
    names = sorted(path.name for path in (REPO / "docs" / "rules").glob("*.md"))
    assert sorted(path.name for path in packaged.iterdir()) == names
    for name in names:
        assert not (packaged / name).is_symlink()
        assert filecmp.cmp(packaged / name, REPO / "docs" / "rules" / name, shallow=False), name


def test_an_installed_package_holds_every_file_the_server_serves_or_reads(built: Path) -> None:
    """Every file of the packages that is not Python (the pages, their scripts and styles,
    the translations of every folder under app/web/i18n, the log configuration) is in the
    build: a server installed from a wheel serves the same pages as one run from a clone."""
    listed = subprocess.run(
        ["git", "ls-files", "app", "bots", "domain", "projections"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    data = [name for name in listed if not name.endswith(".py") and name != "app/rules"]
    assert any(name.startswith("app/web/i18n/rules/") for name in data), data
    missing = [name for name in data if not (built / name).is_file()]
    assert not missing, f"not in the built package (pyproject.toml's package-data): {missing}"
