"""Every message the docs quote is one Kiln writes. In docs/*.md, README.md and the comments of
nginx/*.conf, a code span shaped like a message (lowercase words, at least three, optionally after
an HTTP status: `no preset named "avatar"`, `200 purged N entries (B bytes) of <path>`; not a
command, directive or option) must match a string literal of Sources/: either a literal, its
interpolations as wildcards, is found in the quoted text, or the quoted text, with `...`/`…` as
wildcards and its data (numbers, names, paths) standing for interpolations, is the start of a
literal (of the Swift sources or of the shipped VCL, varnish/*.vcl). Drift such as
`unknown preset` (when Kiln says `no preset named "avatar"`) fails here.

Plain files only (`.venv-test/bin/pytest Tests/integration/test_docs_messages.py`)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INTERPOLATION = re.compile(r"\\\([^()]*(\([^()]*\)[^()]*)*\)")
COMMAND = re.compile(r"^(kiln |nginx|curl|docker|podman |kubectl |scripts/|\.build|sudo|install|cd |swift|python|ip |apache|lighttpd|rm |ln |mc |"
                     r"xxd|openssl|rss\.py|libfloor|hash |rewrite|fastcgi|limit_|git |cjpeg|djpeg|cwebp|connect\(\))")


def swift_literals(text: str) -> list[list[str | None]]:
    """Single-line string literals as their parts: text, and None for each interpolation."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            i = n if j < 0 else j + 3
        elif text[i] == '"':
            i += 1
            parts: list[str | None] = []
            buf = ""
            while i < n and text[i] not in '"\n':
                if text[i] == "\\" and i + 1 < n:
                    if text[i + 1] == "(":
                        depth, i = 1, i + 2
                        while i < n and depth:
                            if text[i] == "(":
                                depth += 1
                            elif text[i] == ")":
                                depth -= 1
                            elif text[i] == '"':
                                k = text.find('"', i + 1)
                                i = k if k > 0 else i
                            i += 1
                        parts += [buf, None]
                        buf = ""
                        continue
                    buf += text[i + 1]
                    i += 2
                    continue
                buf += text[i]
                i += 1
            parts.append(buf)
            out.append(parts)
            i += 1
        else:
            i += 1
    return out


@lru_cache(maxsize=1)
def sources() -> tuple[list[re.Pattern], list[str]]:
    """Literal patterns (interpolations as `.+?`, at least two words of fixed text) and literal
    texts (interpolations as NUL), multi-line literals included."""
    patterns, texts = [], []
    for path in sorted((REPO / "Sources").rglob("*.swift")):
        text = path.read_text()
        for parts in swift_literals(text):
            texts.append("".join("\0" if p is None else p for p in parts))
            if len(re.findall(r"[A-Za-z]{2,}", " ".join(p for p in parts if p))) >= 2:
                patterns.append(re.compile("".join(".+?" if p is None else re.escape(p) for p in parts)))
        texts += [INTERPOLATION.sub("\0", m.group(1)) for m in re.finditer(r'"""(.*?)"""', text, re.S)]
    # The shipped VCL's answers (`"purged " + n + " objects"`: the variable as an interpolation).
    for path in sorted((REPO / "varnish").glob("*.vcl")):
        joined = re.sub(r'"\s*\+\s*[\w.\-()]+\s*\+\s*"', "\0", path.read_text())
        texts += re.findall(r'"([^"\n]*)"', joined)
    return patterns, texts


def quoted_messages() -> list[tuple[str, str]]:
    files = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md", *sorted((REPO / "nginx").glob("*.conf"))]
    out = []
    for path in files:
        for line in path.read_text().splitlines():
            parts = line.split("`")
            for span in parts[1:-1:2] if len(parts) > 2 else []:
                if is_message(span):
                    out.append((path.name, span))
    return out


def is_message(span: str) -> bool:
    # Not a command, a directive, nginx's own error log (`connect() ... failed`) or an option (`bl:<sigma>`).
    if len(span.split()) < 3 or COMMAND.match(span) or re.search(r"[=;{}$|]|::|^\W|^[a-z_]+:\S", span):
        return False
    return re.match(r"^(\d{3} )?[a-z]", span) is not None


# Data in a quoted message: numbers, quoted names, paths and file names, placeholders (`<path>`,
# `N`), constants (`KILN_PEER_SECRET`).
DATA = re.compile(r"[\d'\"/.<>]|^[A-Z][A-Z_]*$")


def doc_pattern(message: str) -> re.Pattern:
    rx = ""
    for token in re.split(r"(\.\.\.|…)", re.sub(r"\s+(\.\.\.|…)", r"\1", message)):
        if token in ("...", "…"):
            rx += ".*"
            continue
        for word in re.split(r"(\s+)", token):
            if word.isspace():
                rx += r"\s+"
            elif word:
                # Only a word that looks like data may stand for an interpolation.
                rx += "(?:" + re.escape(word) + (r"|\x00\S*|\S*\x00)" if DATA.search(word) else ")")
    return re.compile(rx, re.S)


def written_by_kiln(quoted: str) -> bool:
    message = re.sub(r"^\d{3} ", "", quoted).strip()
    patterns, texts = sources()
    if any(p.search(message) for p in patterns):
        return True
    pattern = doc_pattern(message)
    return any(pattern.match(t) for t in texts if len(re.findall(r"[A-Za-z]{2,}", t)) >= 2)


def test_docs_quote_messages_as_kiln_writes_them():
    quoted = quoted_messages()
    assert len(quoted) >= 20, f"only {len(quoted)} quoted messages found: the filter lost them"
    drifted = [f"{name}: `{span}`" for name, span in quoted if not written_by_kiln(span)]
    assert not drifted, "quoted messages Kiln does not write:\n" + "\n".join(drifted)


def test_the_check_catches_drift():
    # The wordings the first-hour issue found in the docs, before they were fixed.
    assert not written_by_kiln('unknown preset "avatar"')
    assert not written_by_kiln("no such file: nope.jpg")
    assert written_by_kiln('no preset named "avatar"') and written_by_kiln("no source at nope.jpg")
