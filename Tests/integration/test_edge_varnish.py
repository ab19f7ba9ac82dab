"""The Varnish edge recipe (varnish/kiln.vcl, issue 28) in front of one kiln behind nginx: the
surrogate-key headers kiln sends (and their switches), repeats answered by Varnish without
reaching kiln, `PURGE` with `xkey: <source tag>` dropping every variant of one source and no
other, a preset's tag, f:auto kept apart per Accept class, and the purge ACL.

Each test uses its own source files, so purges in one never touch another's objects. kiln runs
one worker, so its access lines are in request order: once a later request's line is there,
every earlier request that reached kiln has its line too."""
from __future__ import annotations

import hashlib
import itertools
import os
import random
import re
import shutil
import time

import pytest
from PIL import Image

from helpers import CORPUS
from stack import running_stack
from varnish import Varnish, started_varnish

SOURCES = ["tags.jpg", "hit.jpg", "x.jpg", "y.jpg", "preset.jpg", "auto.jpg", "acl.jpg", "url.jpg", "sentinel.jpg",
           "hint-w.jpg", "hint-vw.jpg", "hint-dpr.jpg", "hint-sd.jpg", "hint-origin.jpg"]
PRESETS = ["--set", "presets.thumb=rs:50:50:fill/f:png", "--set", "presets.soft=bl:2"]
_sentinels = itertools.count(10)


def source_tag(path: str) -> str:
    """`SourceTag(sourcePath:).headerValue`: what kiln sends and `kiln cache purge` purges."""
    return "kiln-src-" + hashlib.sha256(("kiln-source\n" + path).encode()).hexdigest()[:32]


@pytest.fixture(scope="module")
def edge_root(tmp_path_factory):
    base = tmp_path_factory.mktemp("edge")
    root = base / "root"
    root.mkdir()
    os.chmod(base, 0o755)
    os.chmod(root, 0o755)
    for name in SOURCES:
        if name.startswith("hint-"):
            # Wide enough that every hinted width (up to 1920 px, DPR 4 of 100 px) is its own answer.
            Image.linear_gradient("L").resize((2400, 1600)).convert("RGB").save(root / name, quality=80)
        else:
            shutil.copy2(CORPUS / "pillow_hopper.jpg", root / name)
        os.chmod(root / name, 0o644)
    # The stack's readiness probe asks for this one.
    shutil.copy2(CORPUS / "pillow_hopper.jpg", root / "pillow_hopper.jpg")
    os.chmod(root / "pillow_hopper.jpg", 0o644)
    return root


@pytest.fixture(scope="module")
def kiln(edge_root):
    yield from running_stack(root=edge_root, workers=1, extra_args=PRESETS)


@pytest.fixture(scope="module")
def edge(kiln):
    v = started_varnish("127.0.0.1", kiln.port)
    yield v
    v.cleanup()


def access_count(stack, uri: str) -> int:
    """kiln's access lines for `uri`."""
    n = 0
    for line in stack.kiln_log.read_text(errors="replace").splitlines():
        if "msg=access" in line:
            m = re.search(r'\buri="?([^"\s]+)"?', line)
            if m and m[1] == uri:
                n += 1
    return n


def settle(stack) -> None:
    """Waits until kiln logged every request it got so far: a new request straight to nginx,
    whose access line (one worker: written after every earlier one) is then awaited."""
    uri = f"/w:{next(_sentinels)}/sentinel.jpg"
    assert stack.client().get(uri).status == 200
    deadline = time.monotonic() + 10
    while access_count(stack, uri) < 1:
        assert time.monotonic() < deadline, f"no access line for {uri} within 10 s"
        time.sleep(0.02)


def is_edge_hit(r) -> bool:
    """Answered from Varnish's cache: two ids in X-Varnish (this request's and the object's)."""
    return r.header("x-cache-edge") == "HIT" and len((r.header("x-varnish") or "").split()) == 2


def test_answers_carry_the_source_and_preset_tags(kiln, edge):
    c = kiln.client()
    tag = source_tag("tags.jpg")
    for uri in ["/w:40/tags.jpg", "/rs:30:30:fill/f:png/-/tags.jpg", "/f:json/tags.jpg"]:
        r = c.get(uri)
        assert r.status == 200, r.describe()
        assert r.header("xkey") == tag and r.header("surrogate-key") == tag and r.header("cache-tag") == tag, r.headers
    r = c.get("/pr:thumb:soft/tags.jpg")
    assert r.status == 200 and r.header("xkey") == f"{tag} kiln-preset-thumb kiln-preset-soft", r.headers
    assert r.header("cache-tag") == f"{tag},kiln-preset-thumb,kiln-preset-soft"
    # A 304 carries them too (a cache refreshing its object keeps them).
    again = c.get("/w:40/tags.jpg", {"If-None-Match": c.get("/w:40/tags.jpg").header("etag")})
    assert again.status == 304 and again.header("xkey") == tag
    # Errors carry none.
    assert c.get("/w:40/missing.jpg").header("xkey") is None
    # Varnish keeps them on its object and strips them from the answer.
    through = edge.client().get("/w:40/tags.jpg")
    assert through.status == 200 and through.header("x-cache-edge") in ("MISS", "HIT"), through.describe()
    assert through.header("xkey") is None and through.header("surrogate-key") is None and through.header("cache-tag") is None


def test_a_repeat_is_answered_by_varnish_without_reaching_kiln(kiln, edge):
    c = edge.client()
    uri = "/w:44/hit.jpg"
    first = c.get(uri)
    assert first.status == 200 and first.header("x-cache-edge") == "MISS", first.describe()
    second = c.get(uri)
    assert second.status == 200 and is_edge_hit(second), second.headers
    assert second.body == first.body and second.header("etag") == first.header("etag")
    # Kiln's Cache-Control reaches the client as kiln wrote it.
    assert second.header("cache-control") == "public, max-age=31536000"
    settle(kiln)
    assert access_count(kiln, uri) == 1


def test_purge_by_xkey_drops_every_variant_of_one_source_only(kiln, edge):
    c = edge.client()
    x = ["/w:40/x.jpg", "/w:60/f:png/x.jpg", "/pr:thumb/x.jpg", "/rs:20:20:fill/-/x.jpg"]
    x_auto = ("/w:48/f:auto/x.jpg", [{"Accept": "image/webp,*/*"}, {"Accept": "text/html"}])
    y = ["/w:40/y.jpg", "/pr:thumb/y.jpg"]

    def fetch_all():
        out = {u: c.get(u) for u in x + y}
        for i, h in enumerate(x_auto[1]):
            out[f"{x_auto[0]}#{i}"] = c.get(x_auto[0], h)
        return out

    for r in fetch_all().values():
        assert r.status == 200, r.describe()
    for key, r in fetch_all().items():
        assert is_edge_hit(r), (key, r.headers)

    purged = edge.purge_xkey(source_tag("x.jpg"))
    assert Varnish.purged_count(purged) == len(x) + len(x_auto[1])  # both Accept variants of the f:auto URL
    settle(kiln)
    before = {u: access_count(kiln, u) for u in x + y + [x_auto[0]]}

    after = fetch_all()
    for u in x:
        assert after[u].status == 200 and after[u].header("x-cache-edge") == "MISS", (u, after[u].headers)
    for i in range(len(x_auto[1])):
        assert after[f"{x_auto[0]}#{i}"].header("x-cache-edge") == "MISS"
    for u in y:
        assert is_edge_hit(after[u]), (u, after[u].headers)
    settle(kiln)
    for u in x:
        assert access_count(kiln, u) == before[u] + 1, u   # reached kiln again, once
    assert access_count(kiln, x_auto[0]) == before[x_auto[0]] + 2
    for u in y:
        assert access_count(kiln, u) == before[u], u       # still Varnish's
    # Nothing left under the tag: a second purge finds only what was fetched again.
    assert Varnish.purged_count(edge.purge_xkey(source_tag("x.jpg"))) == len(x) + len(x_auto[1])
    assert Varnish.purged_count(edge.purge_xkey(source_tag("x.jpg"))) == 0


def test_a_preset_tag_purges_that_presets_variants(kiln, edge):
    c = edge.client()
    with_preset = ["/pr:soft/preset.jpg", "/pr:soft/w:30/preset.jpg"]
    without = "/bl:2/preset.jpg"  # the same image as pr:soft, another URL and no preset tag
    for u in with_preset + [without]:
        assert c.get(u).status == 200
    assert Varnish.purged_count(edge.purge_xkey("kiln-preset-soft")) >= len(with_preset)
    for u in with_preset:
        assert c.get(u).header("x-cache-edge") == "MISS", u
    assert is_edge_hit(c.get(without))


def test_f_auto_answers_stay_apart_per_accept_class(kiln, edge):
    c = edge.client()
    uri = "/w:40/f:auto/auto.jpg"
    classes = {
        "image/avif": ["image/avif,image/webp,image/apng,*/*;q=0.8", "image/avif,image/webp,*/*"],
        "image/webp": ["image/webp,*/*", "image/*", "image/avif;q=0,image/webp"],
        "image/jpeg": ["*/*", "text/html,application/xhtml+xml"],
    }
    for expected, accepts in classes.items():
        first = c.get(uri, {"Accept": accepts[0]})
        assert first.status == 200 and first.content_type == expected, (accepts[0], first.describe())
        assert "accept" in (first.header("vary") or "").lower(), first.headers
        # Another spelling of the same class is the same object in Varnish.
        for accept in accepts[1:] + accepts[:1]:
            r = c.get(uri, {"Accept": accept})
            assert r.content_type == expected and is_edge_hit(r), (accept, r.headers)
    settle(kiln)
    assert access_count(kiln, uri) == len(classes)


def test_purge_needs_an_allowed_address(kiln, edge):
    c = edge.client()
    uri = "/w:40/acl.jpg"
    assert c.get(uri).status == 200
    refused = edge.purge_xkey(source_tag("acl.jpg"), source="127.0.0.2")
    assert refused.status == 403, refused.describe()
    assert is_edge_hit(c.get(uri))
    # /_kiln/metrics (local-only at nginx, where every Varnish request is local) is refused too.
    assert edge.client("127.0.0.2").get("/_kiln/metrics").status == 403
    assert edge.client("127.0.0.2").get("/_kiln/health").status == 200


def test_plain_purge_of_one_url(kiln, edge):
    c = edge.client()
    a, b = "/w:40/url.jpg", "/w:41/url.jpg"
    for u in (a, b):
        assert c.get(u).status == 200
    r = edge.purge_url(a)
    assert r.status == 200, r.describe()
    assert c.get(a).header("x-cache-edge") == "MISS"
    assert is_edge_hit(c.get(b))


def test_each_header_can_be_turned_off(make_stack, edge_root):
    """A restart with `http.xkey=false`: no xkey header, so Varnish files nothing under the tag
    and an xkey purge finds nothing; the other headers follow their own switches."""
    stack = make_stack(root=edge_root, workers=1, extra_args=["--set", "http.xkey=false", "--set", "http.cache_tag=false"])
    tag = source_tag("tags.jpg")
    r = stack.client().get("/w:40/tags.jpg")
    assert r.status == 200 and r.header("xkey") is None and r.header("cache-tag") is None, r.headers
    assert r.header("surrogate-key") == tag
    v = started_varnish("127.0.0.1", stack.port)
    try:
        assert v.client().get("/w:40/tags.jpg").status == 200
        assert Varnish.purged_count(v.purge_xkey(tag)) == 0
        assert is_edge_hit(v.client().get("/w:40/tags.jpg"))
    finally:
        v.cleanup()


def test_a_fallback_gets_no_grace_past_its_max_age(make_stack, edge_root, tmp_path):
    """Issue 36: a fallback answer (`Kiln-Fallback`, `fallback.max_age` 1 s here) is not answered
    by the edge once its max-age is over, even while every backend is down (the VCL's 1 h grace
    is for real images only); a real image is still answered from grace."""
    fallback = tmp_path / "missing.png"
    Image.new("RGB", (40, 30), (255, 0, 0)).save(fallback)
    stack = make_stack(root=edge_root, workers=1, extra_args=[
        "--set", f"fallback.not_found={fallback}", "--set", "fallback.max_age=1s"])
    v = started_varnish("127.0.0.1", stack.port)
    try:
        c = v.client()
        placeholder = c.get("/w:20/no-such-image.jpg")
        assert placeholder.status == 404 and placeholder.header("kiln-fallback") == "not-found", placeholder.describe()
        assert placeholder.header("cache-control") == "public, max-age=1"
        image = c.get("/w:21/hit.jpg")
        assert image.status == 200
        assert is_edge_hit(c.get("/w:20/no-such-image.jpg")), "the fallback is kept for its max-age"
        stack.stop()
        # Poll: within its max-age of 1 s the edge answers the fallback from its cache; past it,
        # with no grace, nothing (a 503), however long it is asked (the old 1 h grace kept
        # answering the placeholder, so the poll runs out).
        deadline = time.monotonic() + 10
        while True:
            after = c.get("/w:20/no-such-image.jpg")
            if after.status != 404 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert after.status == 503 and after.header("kiln-fallback") is None, \
            f"the edge answered a fallback past its max-age: {after.describe()}"
        assert c.get("/w:21/hit.jpg").status == 200, "a real image is answered within its TTL"
    finally:
        v.cleanup()


def _flood_values(kind: str) -> list[str]:
    """1,000 values of one header as browsers and clients send them: every spelling Kiln can
    tell apart, junk it ignores, and near-duplicates of each class."""
    rng = random.Random(kind)
    if kind in ("width", "viewport"):
        values = [str(rng.randint(1, 3000)) for _ in range(900)]
        values += [f" {rng.randint(1, 3000)}\t", "0", "-1", "1e3", "abc", "", "1234567890", "12.5"] * 12 + ["640", "320"] * 2
    elif kind == "dpr":
        values = [f"2.{i:05d}" for i in range(400)] + [f"{rng.uniform(0.1, 6):.6f}" for _ in range(500)]
        values += ["1", "3.0", "0", "-2", "x", "2.", ".5", "1e1"] * 12 + ["4"] * 4
    elif kind == "save-data":
        values = [f"on;v={i}" for i in range(500)] + [f"ON ; x={i}" for i in range(200)] + [f"off;v={i}" for i in range(300)]
    else:
        values = [f"https://site{i}.example" for i in range(1000)]
    return values[:1000]


@pytest.mark.parametrize("uri,header,kind", [
    ("/w:auto/hint-w.jpg", "Sec-CH-Width", "width"),
    ("/w:auto/hint-vw.jpg", "Viewport-Width", "viewport"),
    ("/ch:1/w:100/hint-dpr.jpg", "Sec-CH-DPR", "dpr"),
    ("/ch:1/w:300/hint-sd.jpg", "Save-Data", "save-data"),
    ("/w:40/hint-origin.jpg", "Origin", "origin"),
])
def test_a_flood_of_header_values_keeps_one_edge_object_per_answer(kiln, edge, uri, header, kind):
    """Issue 36: 1,000 values of a header Kiln varies on are as many edge objects as Kiln has
    different answers (the VCL's generated `kiln_normalize_hints`), not 1,000 backend fetches."""
    c = edge.client()
    settle(kiln)
    objects_before = edge.stats().get("MAIN.n_object", 0)
    etags = set()
    for value in _flood_values(kind):
        r = c.get(uri, {header: value})
        assert r.status == 200, (header, value, r.describe())
        etags.add(r.header("etag"))
    settle(kiln)
    fetched = access_count(kiln, uri)
    objects = edge.stats().get("MAIN.n_object", 0) - objects_before
    assert fetched == len(etags), f"{header}: {fetched} backend fetches for {len(etags)} distinct answers"
    assert objects == len(etags), f"{header}: {objects} edge objects for {len(etags)} distinct answers"
    expected = {"width": 5, "viewport": 5, "dpr": 7, "save-data": 2, "origin": 1}[kind]
    assert len(etags) == expected, f"{header}: {len(etags)} distinct answers"
