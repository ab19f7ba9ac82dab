"""The documentation's links: every relative link and every `#anchor` in README.md, CHANGELOG.md and
docs/*.md resolves. A file link must name an existing file or folder of the repository; an anchor
must match a heading of the target page under GitHub's slug rules (lowercase; punctuation other
than `-` and `_` removed; spaces to `-`; a repeated heading gets `-1`, `-2`, ...), or an explicit
`<a id="...">` / `<a name="...">`.

Plain files only: no kiln binary, no nginx, no fixtures (`.venv-test/bin/pytest
Tests/integration/test_docs.py`)."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]


def doc_files() -> list[Path]:
    return [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks (``` or ~~~)."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)[0] * len(m.group(1))
                continue
            yield n, line
        elif m and m.group(1).startswith(fence) and line.strip() == m.group(1):
            fence = None


def strip_code_spans(line: str) -> str:
    """The line without `code spans` (links inside them are text)."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def heading_text(raw: str) -> str:
    """What GitHub slugs: the heading's text without its markdown markup."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)                      # inline HTML tags
    return text.replace("`", "")


def slug(text: str) -> str:
    """GitHub's heading anchor: lowercase, drop what is not a letter, digit, mark, connector
    punctuation (`_`), `-` or a space, then each space becomes `-`."""
    out = []
    for ch in text.strip().lower():
        cat = unicodedata.category(ch)
        if ch in "-_ " or cat[0] in "LNM" or cat == "Pc":
            out.append("-" if ch == " " else ch)
    return "".join(out)


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    text = path.read_text(encoding="utf-8")
    for _, line in prose_lines(text):
        m = re.match(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", line)
        if m:
            base = slug(heading_text(m.group(2)))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        for a in re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
            found.add(a)
    return found


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")


def links(path: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in prose_lines(path.read_text(encoding="utf-8")):
        m = REF_DEF.match(line)
        if m:
            out.append((n, m.group(1)))
            continue
        out.extend((n, target) for target in LINK.findall(strip_code_spans(line)))
    return out


def problems(path: Path) -> list[str]:
    bad = []
    cache: dict[Path, set[str]] = {}
    for n, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto: ...: not ours
            continue
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        where = f"{path.relative_to(REPO)}:{n}: {target}"
        if REPO not in dest.parents and dest != REPO:
            bad.append(f"{where}: points outside the repository")
            continue
        if not dest.exists():
            bad.append(f"{where}: no such file {dest.relative_to(REPO)}")
            continue
        if fragment:
            if dest.suffix != ".md":
                bad.append(f"{where}: an anchor into a file that is not markdown")
                continue
            if dest not in cache:
                cache[dest] = anchors(dest)
            if unquote(fragment) not in cache[dest]:
                bad.append(f"{where}: no heading #{fragment} in {dest.relative_to(REPO)}")
    return bad


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_links_and_anchors_resolve(path):
    assert path.is_file(), f"{path.relative_to(REPO)} is missing"
    bad = problems(path)
    assert not bad, "broken links:\n" + "\n".join(bad)


def test_the_docs_have_links_to_check():
    """The checker finds the README's links into docs/ (so a parsing slip cannot pass silently)."""
    targets = [t for _, t in links(REPO / "README.md")]
    assert any(t.startswith("docs/") and "#" in t for t in targets), targets
    assert len(doc_files()) >= 11


@pytest.mark.parametrize("heading, expected", [
    ("Metrics, status and health", "metrics-status-and-health"),
    ("One fetch per source, resumable downloads", "one-fetch-per-source-resumable-downloads"),
    ("Before and after the shape refactor (issue 8)", "before-and-after-the-shape-refactor-issue-8"),
    ("`kiln_http_requests_total` and friends", "kiln_http_requests_total-and-friends"),
    ("Use it as a CDN origin", "use-it-as-a-cdn-origin"),
    ("A -- B", "a----b"),
])
def test_slug_follows_github(heading, expected):
    assert slug(heading_text(heading)) == expected


def test_duplicate_headings_get_numbers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Notes\n\n## Notes\n\n```\n# not a heading\n```\n\n### Notes\n")
    assert anchors(page) == {"notes", "notes-1", "notes-2"}
