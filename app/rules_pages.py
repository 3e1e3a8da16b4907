"""The rules as web pages (docs/web.md, "The rules"): ``/rules`` is the overview
(docs/rules/README.md) and ``/rules/{name}`` each other file of docs/rules/ (``/rules/common``,
``/rules/classic``, ...), rendered from their Markdown with markdown-it-py once per process (at
the first request) and kept.

docs/rules/ stays the one source: ``app/rules`` is a link to it in a checkout, and the package
holds the files themselves (pyproject.toml's package-data copies them through the link).

What the rendering adds to the Markdown:

- every rule definition (``**R-PILE-3.**``) is an anchor, ``/rules/common#R-PILE-3``, and a
  link to itself; every rule id written elsewhere in the text links to its definition;
- every code of common.md's "Error codes" table is an anchor too (``/rules/common#not_found``);
- every heading has GitHub's anchor (``#error-codes``), so the files' own links hold;
- links between the rule files lead to the served pages; links to the other documents of
  docs/ (not served) are plain text that names the document;
- the headings go one level down (the page's own ``h1`` is the site's name), and wide tables
  scroll inside their box on a phone.

``/rules/{code}`` with a rule id or an error code answers a redirect to its anchor
(``/rules/R-PILE-3`` -> ``/rules/common#R-PILE-3``): the pages link a refusal's code there.
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markdown_it import MarkdownIt
from markdown_it.token import Token

from app.web_ui import WEB_DIR

RULES_DIR = Path(__file__).parent / "rules"
OVERVIEW = "README"
ROUTE = "/rules"
#: A rule id: R-, one or more upper-case words, a number (R-PILE-3, R-MA-MELD-1).
RULE_ID = re.compile(r"R-[A-Z]+(?:-[A-Z]+)*-[0-9]+")
#: An error code of common.md's table that is no rule id (``not_found``, ``race_lost``).
ERROR_CODE = re.compile(r"[a-z][a-z0-9_]*")
ERROR_CODES_SECTION = "error-codes"


@dataclass
class RulesPage:
    name: str  # the file's stem: "README" (the overview), "common", "classic", ...
    title: str  # its first heading, as plain text
    html: str = ""  # the rendered text
    contents: list[tuple[str, str]] = field(default_factory=list)  # (anchor, title) of each h2

    @property
    def route(self) -> str:
        return ROUTE if self.name == OVERVIEW else f"{ROUTE}/{self.name}"


@dataclass
class RuleBook:
    pages: dict[str, RulesPage]  # by name, the overview first, then in its links' order
    anchors: dict[str, str]  # rule id or error code -> the name of the page defining it

    def where(self, code: str) -> str | None:
        """The address of a rule id's or an error code's anchor, or None."""
        name = self.anchors.get(code)
        return None if name is None else f"{self.pages[name].route}#{code}"


def slug(text: str, taken: set[str]) -> str:
    """GitHub's anchor for a heading (what the files' own links name): lower case, without
    punctuation, spaces as hyphens; a repeated one gets -1, -2, ..."""
    base = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
    anchor, n = base, 0
    while anchor in taken:
        n += 1
        anchor = f"{base}-{n}"
    taken.add(anchor)
    return anchor


def plain(inline: Token) -> str:
    return "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))


def definition(children: list[Token], i: int) -> str | None:
    """The rule id defined at ``children[i]``: ``**R-PILE-3.**``."""
    if i + 2 < len(children) and children[i].type == "strong_open":
        text, close = children[i + 1], children[i + 2]
        match = RULE_ID.fullmatch(text.content.removesuffix("."))
        if text.type == "text" and text.content.endswith(".") and close.type == "strong_close":
            return match[0] if match else None
    return None


def link(href: str, *children: Token, cls: str | None = None) -> list[Token]:
    opening = Token("link_open", "a", 1, attrs={"href": href})
    if cls:
        opening.attrSet("class", cls)
    return [opening, *children, Token("link_close", "a", -1)]


def text(content: str) -> Token:
    return Token("text", "", 0, content=content)


def html_block(content: str) -> Token:
    return Token("html_block", "", 0, content=content)


class Renderer:
    def __init__(self, sources: dict[str, str]) -> None:
        self.md = MarkdownIt("commonmark", {"html": False}).enable("table")
        self.tokens = {name: self.md.parse(source) for name, source in sources.items()}
        self.pages = {
            name: RulesPage(name, self._title(tokens)) for name, tokens in self.tokens.items()
        }
        self.anchors: dict[str, str] = {}
        for name, tokens in self.tokens.items():
            for inline in (t for t in tokens if t.type == "inline"):
                children = inline.children or []
                for i in range(len(children)):
                    if rule := definition(children, i):
                        self.anchors.setdefault(rule, name)

    @staticmethod
    def _title(tokens: list[Token]) -> str:
        heading = next((i for i, t in enumerate(tokens) if t.type == "heading_open"), None)
        return "" if heading is None else plain(tokens[heading + 1])

    def book(self) -> RuleBook:
        for name, page in self.pages.items():
            page.html = self.render(name)
        return RuleBook(self.pages, self.anchors)

    def href(self, code: str, here: str) -> str:
        name = self.anchors[code]
        return f"#{code}" if name == here else f"{self.pages[name].route}#{code}"

    def render(self, name: str) -> str:
        page, tokens = self.pages[name], self.tokens[name]
        out: list[Token] = []
        taken: set[str] = set()
        section, column = "", 0
        for i, token in enumerate(tokens):
            if token.type == "heading_open":
                anchor = slug(plain(tokens[i + 1]), taken)
                token.attrSet("id", anchor)
                if token.tag == "h2":
                    section = anchor
                    page.contents.append((anchor, plain(tokens[i + 1])))
            if token.type in ("heading_open", "heading_close"):
                token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"  # the page's h1 is the site's
            if token.type == "table_open":
                out.append(html_block('<div class="table-scroll" tabindex="0">'))
            if token.type in ("tr_open", "table_close"):
                column = 0
            elif token.type in ("td_open", "th_open"):
                column += 1
            if token.type == "inline":
                codes = section == ERROR_CODES_SECTION and column == 2  # the table's "code" column
                entries = column == 1 and name == OVERVIEW
                token.children = self.inline(token.children or [], name, taken, codes, entries)
            out.append(token)
            if token.type == "table_close":
                out.append(html_block("</div>\n"))
        if len(page.contents) < 3:
            page.contents = []  # a short page needs no contents of its own
        return str(self.md.renderer.render(out, self.md.options, {}))

    def inline(
        self, children: list[Token], here: str, taken: set[str], codes: bool, entries: bool
    ) -> list[Token]:
        out: list[Token] = []
        opened: Token | None = None  # the link the text is in
        i = 0
        while i < len(children):
            token = children[i]
            if rule := definition(children, i):
                token.attrs.update({"id": rule, "class": "rule-id"})
                taken.add(rule)
                out += [
                    token,
                    *link(f"#{rule}", text(rule), cls="self"),
                    text("."),
                    children[i + 2],
                ]
                i += 3
                continue
            if token.type == "link_open":
                opened = token
                self.rewrite(token, children[i + 1 : i + 3])
            elif token.type == "link_close" and opened is not None:
                token.tag = opened.tag
                opened = None
            elif token.type == "text" and opened is None:
                out += self.mentions(token.content, here)
                i += 1
                continue
            elif token.type == "code_inline" and opened is None:
                out += self.code(token, here, taken, codes, entries)
                i += 1
                continue
            out.append(token)
            i += 1
        return out

    def mentions(self, content: str, here: str) -> list[Token]:
        """A text with every rule id it names linked to its definition."""
        out: list[Token] = []
        start = 0
        for match in RULE_ID.finditer(content):
            if match[0] in self.anchors:
                out += [
                    text(content[start : match.start()]),
                    *link(self.href(match[0], here), text(match[0])),
                ]
                start = match.end()
        return [*out, text(content[start:])]

    def code(
        self, token: Token, here: str, taken: set[str], codes: bool, entries: bool
    ) -> list[Token]:
        content = token.content
        if RULE_ID.fullmatch(content) and content in self.anchors:  # `R-PILE-3`
            return link(self.href(content, here), token)
        if codes and ERROR_CODE.fullmatch(content) and content not in taken:
            token.attrSet("id", content)
            taken.add(content)
            self.anchors.setdefault(content, here)
            return link(f"#{content}", token, cls="self")
        if entries and content in self.pages:  # the overview's table of the entries
            return link(self.pages[content].route, token)
        return [token]

    def rewrite(self, opening: Token, inside: list[Token]) -> None:
        """A link of the Markdown: to a rules page's route, kept if it leads out of the site
        or within the page, else plain text naming the document (docs/ is not served)."""
        href = str(opening.attrGet("href") or "")
        parts = urlsplit(href)
        if parts.scheme or not parts.path:
            return
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        target = parts.path.removesuffix(".md")
        if "/" not in parts.path and parts.path.endswith(".md") and target in self.pages:
            opening.attrSet("href", self.pages[target].route + fragment)
            first = inside[0] if inside else None
            named = len(inside) == 2 and inside[1].type == "link_close"
            if named and first and first.type == "text" and first.content == parts.path:
                first.content = self.pages[target].title  # "common.md": "Common rules"
            return
        document = posixpath.normpath(posixpath.join("docs/rules", parts.path)) + fragment
        opening.tag = "span"
        opening.attrs = {
            "class": "doc-ref",
            "title": f"{document} (in the project's documentation)",
        }


def rule_sources() -> dict[str, str]:
    """The rule files by name, the overview first, then in the order its links name them."""
    files = {path.stem: path.read_text(encoding="utf-8") for path in sorted(RULES_DIR.glob("*.md"))}
    linked = re.findall(r"\]\(([\w-]+)\.md\)", files.get(OVERVIEW, ""))
    order = [OVERVIEW, *dict.fromkeys(n for n in linked if n in files), *sorted(files)]
    return {name: files[name] for name in dict.fromkeys(order) if name in files}


@cache
def rule_book() -> RuleBook:
    """The rules, rendered once per process."""
    return Renderer(rule_sources()).book()


# --- the pages ----------------------------------------------------------------------------------

TEMPLATE = WEB_DIR / "rules.html"
#: The navigation's words in the reader's language (app/web/i18n), by page; a page not named
#: here is named by its title.
NAV_KEYS = {
    OVERVIEW: "rules_overview",
    "common": "rules_common",
    "classic": "entry_classic",
    "extra_six": "entry_extra_six",
    "modern_american": "entry_modern_american",
    "ponytail": "entry_ponytail",
    "always_frozen": "rules_always_frozen",
}
_HEADERS = {"Cache-Control": "no-cache"}


def escape(value: str) -> str:
    return html.escape(value, quote=True)


def page_html(book: RuleBook, page: RulesPage | None) -> str:
    """The page of ``page`` (None: the page saying there is no such page, rule or code)."""
    nav = "".join(
        f'<li><a href="{escape(p.route)}"'
        + (f' data-i18n="{NAV_KEYS[p.name]}"' if p.name in NAV_KEYS else "")
        + (' aria-current="page"' if p is page else "")
        + f">{escape(p.title)}</a></li>"
        for p in book.pages.values()
    )
    if page is None:
        body = '<p class="error" role="alert" data-i18n="rules_not_found">No such rules page.</p>'
    else:
        contents = "".join(
            f'<li><a href="#{escape(anchor)}">{escape(title)}</a></li>'
            for anchor, title in page.contents
        )
        if contents:
            contents = (
                '<nav class="rules-contents" aria-labelledby="contents-heading">'
                '<h2 id="contents-heading" data-i18n="rules_contents">On this page</h2>'
                f'<ul lang="en">{contents}</ul></nav>'
            )
        body = f'{contents}<div class="rules" lang="en">\n{page.html}</div>'
    title = "Canasta ledger" if page is None else f"{page.title} · Canasta ledger"
    template = TEMPLATE.read_text(encoding="utf-8")
    return (
        template.replace("<title>Canasta ledger</title>", f"<title>{escape(title)}</title>")
        .replace("<!--rules:nav-->", nav)
        .replace("<!--rules:text-->", body)
    )


@cache
def rendered(name: str | None) -> str:
    book = rule_book()
    return page_html(book, None if name is None else book.pages[name])


def answer(name: str) -> Response:
    """``/rules/{name}``: the page, or a rule id's or error code's anchor, or 404."""
    book = rule_book()
    if name == OVERVIEW or name.removesuffix(".md") in book.pages:
        page = book.pages[name.removesuffix(".md")]
        if name == OVERVIEW or name.endswith(".md"):  # the file's own name: its route
            return RedirectResponse(page.route, status_code=307, headers=_HEADERS)
        return HTMLResponse(rendered(name), headers=_HEADERS)
    where = book.where(name)
    if where is not None:
        return RedirectResponse(where, status_code=307, headers=_HEADERS)
    return HTMLResponse(rendered(None), status_code=404, headers=_HEADERS)


def install(api: FastAPI) -> None:
    """Serve ``/rules`` and ``/rules/{name}`` (sync routes: the first request renders the
    rules, some 0.1 s, in the thread pool rather than in the event loop)."""

    @api.get(ROUTE, include_in_schema=False)
    def rules_overview() -> Response:
        return HTMLResponse(rendered(OVERVIEW), headers=_HEADERS)

    @api.get(ROUTE + "/{name}", include_in_schema=False)
    def rules_page(name: str) -> Response:
        return answer(name)
