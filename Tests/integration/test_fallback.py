"""Fallback images (issue 26 §4), through nginx with the real binary.

Each stack has its own root (made here with Pillow, so a test can add a source and see the real
image replace the fallback) and its fallback file in a folder outside the root.
"""
from __future__ import annotations

import os
import subprocess

import pytest
from PIL import Image

from helpers import KILN_BIN, assert_plain_error
from stack import running_stack

RED, BLUE = (220, 20, 20), (20, 40, 220)


def make_image(path, size, colour, fmt) -> None:
    Image.new("RGB", size, colour).save(path, fmt)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    base = tmp_path_factory.mktemp("fallback")
    os.chmod(base, 0o755)
    root = base / "root"
    root.mkdir()
    make_image(root / "present.jpg", (600, 400), BLUE, "JPEG")
    (root / "garbage.jpg").write_bytes(b"this is no image at all\n" * 40)
    with open(root / "present.jpg", "rb") as f:
        head = f.read(600)
    (root / "cut.jpg").write_bytes(head)   # a JPEG cut short: damaged
    fb = base / "fallback"
    fb.mkdir()
    make_image(fb / "missing.png", (400, 300), RED, "PNG")
    return root, fb


def running(root, *args: str):
    return running_stack(root=root, workers=1, extra_args=list(args))


@pytest.fixture(scope="module")
def kept(files):
    """With a disk cache too: the fallback's entries go there under their own keys."""
    root, fb = files
    (root.parent / "cache").mkdir()
    yield from running(root, "--set", f"fallback.image={fb / 'missing.png'}", "--set", f"cache.disk_path={root.parent / 'cache'}")


@pytest.fixture(scope="module")
def ok200(files):
    root, fb = files
    yield from running(root, "--set", f"fallback.not_found={fb / 'missing.png'}", "--set", "fallback.status=200",
                       "--set", "fallback.max_age=5s")


def mean(im) -> tuple[int, int, int]:
    px = list(im.convert("RGB").resize((8, 8)).getdata())
    return tuple(sum(p[i] for p in px) // len(px) for i in range(3))


def near(a, b, tol=30) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def assert_fallback(r, status: int, kind: str, size, max_age: int = 60):
    assert r.status == status, r.describe()
    assert r.header("kiln-fallback") == kind, r.headers
    assert r.header("cache-control") == f"public, max-age={max_age}", r.headers
    im = r.image()
    assert im.size == size
    assert near(mean(im), RED), mean(im)
    return im


def test_missing_source_gets_the_fallback_then_the_real_image(kept, files):
    root, _ = files
    c = kept.client()
    path = "/rs:300:200:force/f:jpeg/appears-later.jpg"
    first = c.get(path)
    assert_fallback(first, 404, "not-found", (300, 200))
    assert first.content_type == "image/jpeg"
    # Other missing files with the same options: the fallback's own cache entry (a memory hit).
    again = c.get("/rs:300:200:force/f:jpeg/also-missing.jpg")
    assert_fallback(again, 404, "not-found", (300, 200))
    assert again.header("x-cache") == "HIT-MEMORY" and again.header("etag") == first.header("etag")
    # A conditional request never turns a fallback into a 304.
    assert c.get(path, headers={"If-None-Match": first.header("etag")}).status == 404
    # Options apply: without f: the fallback's own format (PNG), at another size.
    r = c.get("/w:100/missing.jpg")
    assert_fallback(r, 404, "not-found", (100, 75))
    assert r.content_type == "image/png"
    # The source appears: the real image at once (nothing was stored under its key).
    make_image(root / "appears-later.jpg", (600, 400), BLUE, "JPEG")
    real = c.get(path)
    assert real.status == 200, real.describe()
    assert real.header("kiln-fallback") is None
    assert real.header("cache-control") == "public, max-age=31536000"
    assert real.header("etag") != first.header("etag")
    assert real.image().size == (300, 200) and near(mean(real.image()), BLUE)


def test_documents_of_a_missing_source_get_the_plain_error(ok200):
    """Issue 36: f:json, f:blurhash and f:thumbhash describe the source; a fallback would describe
    the placeholder (and, with fallback.status = 200, call the missing image a 400x300 PNG)."""
    c = ok200.client()
    for doc in ("json", "blurhash", "thumbhash"):
        r = c.get(f"/f:{doc}/nothing-here.jpg")
        assert r.status == 404 and r.header("kiln-fallback") is None, (doc, r.describe())
        assert_plain_error(r)
    # The image itself still gets the fallback.
    assert c.get("/w:64/nothing-here.jpg").header("kiln-fallback") == "not-found"


def test_broken_sources_get_the_fallback_with_their_status(kept):
    c = kept.client()
    for name in ("garbage.jpg", "cut.jpg"):
        r = c.get(f"/rs:120:90:force/{name}")
        assert r.status in (415, 422), (name, r.describe())
        assert_fallback(r, r.status, "broken", (120, 90))
    # A bad URL, a forbidden path: no fallback, the plain error.
    r = c.get("/rs:abc/missing.jpg")
    assert r.status == 400 and r.header("kiln-fallback") is None
    assert_plain_error(r)
    # Present images are unaffected.
    r = c.get("/rs:120:90:force/present.jpg")
    assert r.status == 200 and r.header("kiln-fallback") is None


def test_status_200_opt_in_and_classes(ok200):
    c = ok200.client()
    r = c.get("/rs:64:48:force/nothing-here.jpg")
    assert_fallback(r, 200, "not-found", (64, 48), max_age=5)
    # Only not_found is configured: a broken source gets its plain error.
    r = c.get("/rs:64:48:force/garbage.jpg")
    assert r.status in (415, 422) and r.header("kiln-fallback") is None
    assert_plain_error(r)


def test_a_fallback_broken_at_request_time_gives_the_plain_error(tmp_path):
    os.chmod(tmp_path, 0o755)
    root = tmp_path / "root"
    root.mkdir()
    fb = tmp_path / "fb.png"
    make_image(fb, (40, 30), RED, "PNG")
    gen = running(root, "--set", f"fallback.image={fb}")
    s = next(gen)
    try:
        c = s.client()
        assert_fallback(c.get("/w:20/none.jpg"), 404, "not-found", (20, 15))
        fb.write_bytes(b"broken now, and of another size")
        r = c.get("/w:20/none.jpg")
        assert r.status == 404 and r.header("kiln-fallback") is None, r.describe()
        assert_plain_error(r)
        assert r.header("cache-control") == "no-store"
        fb.unlink()
        r = c.get("/w:21/none.jpg")
        assert r.status == 404 and r.header("kiln-fallback") is None
        assert_plain_error(r)
    finally:
        next(gen, None)   # stops the stack (the master must exit 0)


@pytest.mark.parametrize("what", ["missing", "undecodable"])
def test_a_bad_fallback_file_stops_the_start(tmp_path, what):
    os.chmod(tmp_path, 0o755)
    fb = tmp_path / "fb.png"
    if what == "undecodable":
        fb.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    p = subprocess.run([str(KILN_BIN), "serve", "--listen", f"unix:{tmp_path / 'k.sock'}", "--root", str(tmp_path),
                        "--set", f"fallback.broken={fb}", "--set", "cache.disk_path="],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, env=env)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    assert "fallback.broken" in lines[0] and str(fb) in lines[0], lines[0]
    assert not (tmp_path / "k.sock").exists()
