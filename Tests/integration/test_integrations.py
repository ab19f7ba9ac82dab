"""The front-end loaders of integrations/ and `kiln srcset`, against the real kiln behind nginx.

`node --test integrations/test/` runs with KILN_TEST_BASE_URL set to a stack whose root holds the
files of integrations/test/fixtures.json: its server tests fetch every URL the loaders build
(kilnURL, srcset, the Next.js loader, the Astro service, the Nuxt provider) and check the status,
type and pixel size. The TAP output must show them passed, not skipped. `kiln srcset` is checked
for its tag and JSON, against the JavaScript srcset() (the same URLs), its signed URLs against an
independent signer, each URL rendered at its width, and its bad input.
"""
from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import BENCH, KILN_BIN, REPO, sign_path
from stack import running_stack

pytestmark = pytest.mark.timeout(120)

INTEGRATIONS = REPO / "integrations"
FIXTURES = json.loads((INTEGRATIONS / "test" / "fixtures.json").read_text())["files"]
SERVER_TESTS = 5  # the `server:` tests of integrations/test/server.test.mjs
KEY, SALT = "a1" * 32, "b2" * 16
PRESET = ["--set", "presets.card=rs:400:300:fill/f:webp"]


def node() -> str:
    path = shutil.which("node")
    if not path:
        pytest.fail("node is not installed (scripts/test installs Debian's nodejs)", pytrace=False)
    return path


def make_root(base: Path) -> Path:
    """The files of fixtures.json, copied from the bench images."""
    root = base / "root"
    for rel, spec in FIXTURES.items():
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(BENCH / spec["from"], dest)
    for d in [root, *root.rglob("*")]:
        os.chmod(d, 0o755 if d.is_dir() else 0o644)
    return root


@pytest.fixture(scope="module")
def loader_root(tmp_path_factory):
    base = tmp_path_factory.mktemp("loaders")
    os.chmod(base, 0o755)
    return make_root(base)


@pytest.fixture(scope="module")
def loader_stack(loader_root):
    yield from running_stack(root=loader_root, workers=2, extra_args=PRESET)


@pytest.fixture(scope="module")
def signed_stack(loader_root):
    yield from running_stack(root=loader_root, workers=1, extra_args=PRESET + [
        "--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}"])


def run_node_tests(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([node(), "--test", "--test-reporter=tap", str(INTEGRATIONS / "test")],
                          cwd=REPO, capture_output=True, text=True, timeout=110,
                          env={k: v for k, v in {**os.environ, **env}.items() if v is not None})


def top_level(tap: str) -> list[str]:
    return [line for line in tap.splitlines() if re.match(r"(not )?ok \d+ - ", line)]


def srcset_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([str(KILN_BIN), "srcset", *args], capture_output=True, text=True, timeout=30)
    if check:
        assert r.returncode == 0, f"kiln srcset {' '.join(args)}: {r.returncode}\n{r.stderr}"
    return r


class ImgTag(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.tags.append(dict(attrs))


def parse_img(text: str) -> dict[str, str]:
    p = ImgTag()
    p.feed(text)
    assert len(p.tags) == 1, text
    return p.tags[0]


def js_srcset(src: str, widths: list[int], options: dict) -> str:
    script = ("import(process.argv[1]).then(m => console.log(m.srcset(process.argv[2], JSON.parse(process.argv[3]), "
              "JSON.parse(process.argv[4]))))")
    r = subprocess.run([node(), "-e", script, str(INTEGRATIONS / "kiln-url.mjs"), src, json.dumps(widths), json.dumps(options)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


# ---- node --test ------------------------------------------------------------------------------

def test_node_loader_tests_render_every_url_through_kiln(loader_stack):
    base = f"http://127.0.0.1:{loader_stack.port}"
    r = run_node_tests({"KILN_TEST_BASE_URL": base})
    lines = top_level(r.stdout)
    assert r.returncode == 0, f"node --test failed ({r.returncode}):\n{r.stdout[-6000:]}\n{r.stderr[-2000:]}"
    server = [line for line in lines if " - server: " in line]
    assert len(server) == SERVER_TESTS, lines
    for line in server:
        assert line.startswith("ok ") and "# SKIP" not in line, f"a server test did not pass: {line}"
    assert re.search(r"^# skipped 0$", r.stdout, re.M) and re.search(r"^# fail 0$", r.stdout, re.M), r.stdout[-800:]
    unit = [line for line in lines if " - server: " not in line]
    assert len(unit) >= 8 and all(line.startswith("ok ") for line in unit), lines


def test_node_server_tests_skip_with_a_reason_without_a_server():
    r = run_node_tests({"KILN_TEST_BASE_URL": None})
    assert r.returncode == 0, r.stdout[-3000:]
    server = [line for line in top_level(r.stdout) if " - server: " in line]
    assert len(server) == SERVER_TESTS, r.stdout[-3000:]
    assert all("# SKIP KILN_TEST_BASE_URL is not set" in line for line in server), server


# ---- kiln srcset ------------------------------------------------------------------------------

def test_kiln_srcset_tag_renders_each_width_and_matches_the_javascript_srcset(loader_stack):
    client = loader_stack.client()
    base = f"http://127.0.0.1:{loader_stack.port}"
    sizes = "(max-width: 600px) 100vw, 600px"
    for src, spec in FIXTURES.items():
        r = srcset_cli(src, "--widths", "960, 320,640", "--options", "q:70/f:webp", "--sizes", sizes,
                       "--alt", 'A "cat" & <dog>', "--base-url", base + "/")
        tag = r.stdout.strip()
        assert tag.startswith("<img ") and tag.count("\n") == 0, tag
        assert "&quot;cat&quot; &amp; &lt;dog&gt;" in tag and "&amp;c%23" not in tag, tag
        img = parse_img(tag)
        assert img["sizes"] == sizes and img["alt"] == 'A "cat" & <dog>', img
        assert img["srcset"] == js_srcset(src, [320, 640, 960], {"quality": 70, "format": "webp", "baseURL": base}), img
        entries = [e.rsplit(" ", 1) for e in img["srcset"].split(", ")]
        assert [d for _, d in entries] == ["320w", "640w", "960w"], entries
        assert img["src"] == entries[-1][0]
        for url, descriptor in entries:
            assert url.startswith(base + "/w:") and "/q:70/f:webp/" in url, url
            answer, im = client.image(url[len(base):])
            assert answer.content_type == "image/webp", answer.describe()
            assert im.width == int(descriptor[:-1]), (url, im.size)
            assert abs(im.height - round(im.width * spec["height"] / spec["width"])) <= 1, (url, im.size)

    # JSON: the same URLs, and the preset before the width (rs:400:300:fill → rs:<w>:300:fill).
    r = srcset_cli("photos/cat.jpg", "--widths", "200,100", "--preset", "card", "--json", *PRESET)
    doc = json.loads(r.stdout)
    assert [u["width"] for u in doc["urls"]] == [100, 200], doc
    assert doc["urls"][0]["url"] == "/pr:card/w:100/-/photos/cat.jpg", doc
    assert doc["src"] == "/pr:card/w:200/-/photos/cat.jpg" and doc["sizes"] == "100vw" and doc["alt"] == "", doc
    assert doc["srcset"] == js_srcset("photos/cat.jpg", [100, 200], {"preset": "card"}), doc
    for u in doc["urls"]:
        answer, im = client.image(u["url"])
        assert answer.content_type == "image/webp" and im.size == (u["width"], 300), (u, im.size)


def test_kiln_srcset_signs_with_the_configured_key(signed_stack):
    client = signed_stack.client()
    r = srcset_cli("w:50/photo.webp", "--widths", "100,300", "--sign", "--json", *PRESET,
                   "--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}")
    doc = json.loads(r.stdout)
    for u in doc["urls"]:
        unsigned = f"/w:{u['width']}/-/w%3A50/photo.webp"
        assert u["url"] == sign_path(unsigned, KEY, SALT), u
        answer, im = client.image(u["url"])
        assert im.width == u["width"], (u, im.size)
        assert client.get(unsigned).status == 403  # the unsigned twin is refused
    forged = doc["urls"][0]["url"].replace("w:100", "w:101")
    assert client.get(forged).status == 403

    r = srcset_cli("photo_1920x1080.jpg", "--widths", "64", "--sign", "--expires", "1h",
                   "--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}")
    url = parse_img(r.stdout)["src"]
    assert re.fullmatch(r"/[A-Za-z0-9_-]{43}/exp:\d+/w:64/photo_1920x1080\.jpg", url), url
    assert client.image(url)[1].width == 64


@pytest.mark.parametrize("args, message", [
    (["a.jpg", "--widths", "0,320"], "--widths: expected comma-separated positive whole numbers"),
    (["a.jpg", "--widths", "abc"], "--widths: expected"),
    (["a.jpg", "--widths", "20000"], "not a valid image path for width 20000"),
    (["a.jpg", "--widths", "320", "--preset", "nope"], 'no preset named "nope"'),
    (["a.jpg", "--widths", "320", "--options", "bogus:1"], "not a valid image path for width 320"),
    (["../etc/passwd", "--widths", "320"], "not a valid image path"),
    (["a.jpg", "--widths", "320", "--expires", "1h"], "--expires needs --sign"),
    (["a.jpg", "--widths", "320", "--sign"], "no signing key"),
])
def test_kiln_srcset_bad_input_is_one_line_and_exit_2(args, message):
    r = srcset_cli(*args, check=False)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
