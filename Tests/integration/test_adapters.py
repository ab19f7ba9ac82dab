"""URL adapters (issue 27 §1, and §4's adapter bullet), through nginx with the real binary.

Next.js's `/_next/image?url=…&w=…&q=…`, Cloudflare's `/cdn-cgi/image/<options>/<source>` and imgix's
query parameters are parsed into the same request as a native URL: each adapted URL and its native
twin give the same bytes and ETag, and the second of the two is a cache hit. Bad adapted URLs are
one-line 400s and leave nothing in the caches; unsigned adapted URLs meet the allow-lists; with
signing on they are refused unless `adapters.allow_unsigned`. The browser test loads a page of
adapted URLs in headless Chromium (screenshot: .build/artifacts/adapters-page.png).
"""
from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from helpers import assert_plain_error
from stack import KilnStack, started_stack, stop_stack

pytestmark = pytest.mark.timeout(120)

K1 = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
S1 = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
ON = ["--set", "adapters.nextjs=true", "--set", "adapters.cloudflare=true", "--set", "adapters.imgix=true"]
PHOTO = "photo_1920x1080.jpg"
SMALL = "pillow_hopper.jpg"  # 128x128
# Next.js's defaults: images.deviceSizes and images.imageSizes (the documented starting point for
# limits.allowed_widths), and its default quality.
NEXT_WIDTHS = [640, 750, 828, 1080, 1200, 1920, 2048, 3840, 16, 32, 48, 64, 96, 128, 256, 384]
CHROMIUM_ACCEPT = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"


def next_url(src: str, w: int, q: int | None = 75) -> str:
    """What Next.js's default loader writes (`encodeURIComponent(src)`)."""
    return f"/_next/image?url={quote(src, safe='')}&w={w}" + (f"&q={q}" if q is not None else "")


def start(root, *args: str, workers: int = 1) -> KilnStack:
    return started_stack(root=root, workers=workers, extra_args=list(args))


stop = stop_stack


@pytest.fixture(scope="module", params=["adapted-first", "native-first"])
def adapted(root, request):
    """One stack per ordering of the pairs, so the first request of each pair is a miss."""
    s = start(root, *ON)
    s.adapted_first = request.param == "adapted-first"
    yield s
    stop(s)


# (adapted URL, native twin, Accept): the native URL is the documented translation.
TWINS = [
    (next_url(f"/{PHOTO}", 640), f"/w:640/q:75/f:auto/{PHOTO}", CHROMIUM_ACCEPT),
    (next_url(f"/{PHOTO}", 828, 60), f"/w:828/q:60/f:auto/{PHOTO}", "image/webp,*/*"),
    (next_url(f"/sub/{SMALL}", 64, None), f"/w:64/f:auto/sub/{SMALL}", "image/jpeg"),
    (f"/cdn-cgi/image/width=300,height=200,fit=cover,gravity=auto,format=webp/{PHOTO}",
     f"/rs:300:200:fill/el:1/g:smart/f:webp/{PHOTO}", ""),
    (f"/cdn-cgi/image/w=320,q=70,f=auto/{PHOTO}", f"/w:320/q:70/f:auto/{PHOTO}", CHROMIUM_ACCEPT),
    (f"/cdn-cgi/image/width=200,height=200,fit=crop,gravity=left,blur=4,rotate=90,format=png/{SMALL}",
     f"/rs:200:200:fill/g:west/bl:2/rot:90/f:png/{SMALL}", ""),
    (f"/cdn-cgi/image/height=90,background=%23ff8800,metadata=none,sharpen=1,format=jpeg/{PHOTO}",
     f"/h:90/bg:ff8800/sh:1/strip:1/f:jpeg/{PHOTO}", ""),
    (f"/cdn-cgi/image/format=json/{PHOTO}", f"/f:json/{PHOTO}", ""),
    (f"/cdn-cgi/image/width=60/w:50/{SMALL}", f"/w:60/-/w:50/{SMALL}", ""),
    (f"/{PHOTO}?w=300&h=300&fit=crop&crop=top,right&fm=webp&q=50", f"/rs:300:300:fill/el:1/g:ne/f:webp/q:50/{PHOTO}", ""),
    (f"/{SMALL}?w=64&auto=format&flip=h&blur=30", f"/w:64/el:1/f:auto/bl:3/flip:h/{SMALL}", CHROMIUM_ACCEPT),
    (f"/{SMALL}?h=100&fit=max&dpr=2&bg=fff&fm=png&rot=270", f"/h:100/dpr:2/bg:ffffff/f:png/rot:270/{SMALL}", ""),
    (f"/{PHOTO}?w=120&fm=jpg&chromasub=444", f"/w:120/el:1/f:jpeg/ss:444/{PHOTO}", ""),
]


@pytest.mark.parametrize("adapted_url,native,accept", TWINS, ids=[t[0][:70] for t in TWINS])
def test_adapted_url_and_native_twin_share_one_entry(adapted, adapted_url, native, accept):
    c = adapted.client()
    headers = {"Accept": accept} if accept else {}
    first, second = (adapted_url, native) if adapted.adapted_first else (native, adapted_url)
    a = c.get(first, headers)
    assert a.status == 200, f"{first}: {a.describe()}"
    assert a.header("x-cache") == "MISS", f"{first}: {a.headers}"
    b = c.get(second, headers)
    assert b.status == 200, f"{second}: {b.describe()}"
    assert (b.header("x-cache") or "").startswith("HIT"), f"{second} after {first}: {b.headers}"
    assert b.body == a.body and b.header("etag") == a.header("etag"), (first, second)
    for name in ("content-type", "vary", "cache-control", "content-disposition"):
        assert b.header(name) == a.header(name), (name, first, second)


# (URL, a word the one-line 400 must hold)
BAD = [
    (next_url(f"/{PHOTO}", 640) + "&foo=1", "'foo'"),
    (next_url(f"/{PHOTO}", 640) + "&dpl=abc", "'dpl'"),
    (f"/_next/image?url={quote('/' + PHOTO, safe='')}", "missing w="),
    (next_url(f"/{PHOTO}", -1), "w=-1"),
    (next_url(f"/{PHOTO}", 10**12), "w=1000000000000"),
    (next_url(f"/{PHOTO}", 640, 0), "q=0"),
    (next_url("https://evil.example/cat.jpg", 640), "not under a configured origin"),
    (next_url("http://169.254.169.254/latest/meta-data", 640), "not under a configured origin"),
    (next_url("//evil.example/cat.jpg", 640), "must be a path"),
    (f"/cdn-cgi/image/width=300,trim=10/{PHOTO}", "trim=10"),
    (f"/cdn-cgi/image/width=300,anim=maybe/{PHOTO}", "anim=maybe"),
    (f"/cdn-cgi/image/width=300,fit=pad/{PHOTO}", "fit=pad"),
    (f"/cdn-cgi/image/width=300,metadata=exif/{PHOTO}", "metadata=exif"),
    (f"/cdn-cgi/image/width=300/https://evil.example/{PHOTO}", "not under a configured origin"),
    (f"/cdn-cgi/image/dpr=1e9/{PHOTO}", "dpr=1e9"),
    (f"/{PHOTO}?w=300&auto=enhance", "auto=enhance"),
    (f"/{PHOTO}?w=300&s=0123abcd", "'s'"),
    (f"/{PHOTO}?w=300&fit=facearea", "fit=facearea"),
    (f"/{PHOTO}?rot=45", "rot=45"),
]


def test_bad_adapted_urls_are_one_line_400s_and_nothing_is_cached(adapted):
    c = adapted.client()
    for url, word in BAD:
        for attempt in range(2):  # the second answer is refused again, not remembered
            r = c.get(url)
            assert r.status == 400, f"{url}: {r.describe()}"
            assert_plain_error(r, url)
            assert word in r.body.decode(), f"{url}: {r.body!r}"
            assert r.header("x-cache") is None and r.header("cache-control") == "no-store", r.headers
    # The native parser's own limits still apply to the translation (16384 px, sigma 50).
    for url in (f"/cdn-cgi/image/width=20000/{PHOTO}", f"/cdn-cgi/image/blur=250/{PHOTO}"):
        r = c.get(url)
        assert r.status == 400, f"{url}: {r.describe()}"
        assert_plain_error(r, url)
    assert c.get(f"/_next/image?url={quote('/../etc/passwd', safe='')}&w=64").status in (400, 403)
    # The worker survived every one of them.
    r, im = c.image(next_url(f"/{SMALL}", 64))
    assert im.size == (64, 64)


def test_adapters_are_off_by_default(stack):
    c = stack.client()
    r = c.get(next_url(f"/{PHOTO}", 640))
    assert r.status == 404, r.describe()  # /_next/image is a source path like any other
    r = c.get(f"/cdn-cgi/image/width=300/{PHOTO}")
    assert r.status == 404, r.describe()
    # Without the imgix adapter a query string is ignored, as it always was.
    r, im = c.image(f"/{SMALL}?w=10&fit=crop")
    assert im.size == (128, 128)


@pytest.fixture(scope="module")
def listed(root):
    """Next.js's default sizes and quality as the allow-lists, refusing."""
    s = start(root, *ON, "--set", f"limits.allowed_widths={','.join(map(str, NEXT_WIDTHS))}",
              "--set", "limits.allowed_qualities=75")
    yield s
    stop(s)


def test_unsigned_adapted_urls_meet_the_allow_lists(listed):
    c = listed.client()
    for w in (640, 16, 3840):
        r, im = c.image(next_url(f"/{PHOTO}", w), {"Accept": "image/webp"})
        assert im.size[0] == min(w, 1920), (w, im.size)
    for url, key in ((next_url(f"/{PHOTO}", 641), "limits.allowed_widths"),
                     (next_url(f"/{PHOTO}", 640, 80), "limits.allowed_qualities"),
                     (f"/cdn-cgi/image/width=300/{PHOTO}", "limits.allowed_widths"),
                     (f"/cdn-cgi/image/width=640,dpr=2/{PHOTO}", "limits.allowed_widths"),
                     (f"/{PHOTO}?w=300", "limits.allowed_widths")):
        r = c.get(url)
        assert r.status == 400, f"{url}: {r.describe()}"
        assert_plain_error(r, url)
        assert key in r.body.decode(), r.body
    # dpr multiplies before the check: 320 at dpr 2 is 640, allowed.
    r, im = c.image(f"/cdn-cgi/image/width=320,dpr=2/{PHOTO}")
    assert im.size[0] == 640


def test_signing_refuses_adapted_urls_unless_allowed(root):
    signing = ["--set", f"security.keys={K1}", "--set", f"security.salts={S1}"]
    s = start(root, *ON, *signing)
    try:
        c = s.client()
        for url in (next_url(f"/{PHOTO}", 640), f"/cdn-cgi/image/width=300/{PHOTO}", f"/{PHOTO}?w=300"):
            r = c.get(url)
            assert r.status == 403, f"{url}: {r.describe()}"
            assert_plain_error(r, url)
            assert "adapters.allow_unsigned" in r.body.decode()
    finally:
        stop(s)
    s = start(root, *ON, *signing, "--set", "adapters.allow_unsigned=true", "--set", "limits.allowed_widths=640")
    try:
        c = s.client()
        r, im = c.image(next_url(f"/{PHOTO}", 640), {"Accept": "image/webp"})
        assert im.size == (640, 360) and r.content_type == "image/webp"
        r = c.get(next_url(f"/{PHOTO}", 641))
        assert r.status == 400 and "limits.allowed_widths" in r.body.decode(), r.describe()
        # Native unsigned URLs are still refused: only the adapters were let in.
        assert c.get(f"/w:640/{PHOTO}").status == 403
    finally:
        stop(s)


def test_a_query_on_a_trusted_rewrite_is_ignored(tmp_path):
    """Issue 36 §1: with imgix on, signing keys and an allow-list, an imgix query on the shipped
    `/thumb/WxH/` rewrite (trusted by nginx) ran unsigned and outside the allow-list when a file
    existed at the path before the rewrite (a 1500 px PNG), and broke the rewrite otherwise (a 400
    for `?v=2`, a 404 for `?w=1500`). The rewrite is now answered as rewritten, its query ignored."""
    import os
    import shutil
    from helpers import CORPUS
    root = tmp_path / "root"
    for folder in (root / "photos", root / "thumb" / "200x200" / "photos"):
        folder.mkdir(parents=True)
    bench = CORPUS.parent / "bench" / PHOTO
    shutil.copy2(bench, root / "photos" / PHOTO)
    shutil.copy2(bench, root / "thumb" / "200x200" / "photos" / PHOTO)   # the bypass needed this file
    shutil.copy2(CORPUS / SMALL, root / SMALL)                           # the stack's readiness probe
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    signing = ["--set", f"security.keys={K1}", "--set", f"security.salts={S1}", "--set", "limits.allowed_widths=320,640"]
    s = start(root, *ON, *signing)
    try:
        c = s.client()
        plain = c.get(f"/thumb/200x200/photos/{PHOTO}")
        assert plain.status == 200 and plain.content_type == "image/jpeg", plain.describe()
        for query in ("w=1500&blur=20&fm=png", "v=2", "w=1500", "s=0123"):
            r, im = c.image(f"/thumb/200x200/photos/{PHOTO}?{query}")
            assert r.status == 200 and r.content_type == "image/jpeg" and im.size == (200, 200), (query, r.describe())
            assert r.body == plain.body, f"?{query}: not the rewrite's answer"
        # The same imgix query on a client's own URL is unsigned: refused while URLs must be signed.
        assert c.get(f"/photos/{PHOTO}?w=1500&blur=20&fm=png").status == 403
    finally:
        stop(s)


# ---- in a real browser (issue 27 §4) ----------------------------------------------------------

def drain(driver, events: list) -> None:
    """Moves the DevTools network events Chromium logged so far into `events`."""
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method", "").startswith("Network.requestWillBeSent") or msg.get("method") == "Network.responseReceived":
            events.append(msg)


def exchanges(events: list, url: str) -> list[tuple[dict, dict]]:
    """(request headers, response) pairs Chromium had for `url`, in order. The request's headers
    are those of `requestWillBeSent`, completed by `requestWillBeSentExtraInfo` (what went on the
    wire) and the response's `requestHeaders` when present; names in lower case."""
    sent: dict[str, dict] = {}
    for m in events:
        p = m["params"]
        if m["method"] == "Network.requestWillBeSent" and p["request"]["url"] == url:
            sent.setdefault(p["requestId"], {}).update({k.lower(): v for k, v in p["request"]["headers"].items()})
    for m in events:
        p = m["params"]
        if m["method"] == "Network.requestWillBeSentExtraInfo" and p["requestId"] in sent:
            sent[p["requestId"]].update({k.lower(): v for k, v in p.get("headers", {}).items()})
    out = []
    for m in events:
        p = m["params"]
        if m["method"] == "Network.responseReceived" and p["response"]["url"] == url:
            headers = dict(sent.get(p["requestId"], {}))
            headers.update({k.lower(): v for k, v in (p["response"].get("requestHeaders") or {}).items()})
            out.append((headers, p["response"]))
    return out


def test_browser_loads_pages_of_adapted_urls(root, capsys):
    from demopage import chromium, screenshot, wait_for
    s = start(root, *ON)  # one worker: the second load is its memory-cache hit
    try:
        base = f"http://127.0.0.1:{s.port}"
        # As Next.js's <Image> writes them (default loader: srcset of 1x/2x candidates, src the
        # largest), and as a Cloudflare site writes them.
        n640, n1080 = next_url(f"/{PHOTO}", 640), next_url(f"/{PHOTO}", 1080)
        n256 = next_url(f"/{SMALL}", 256)
        cf_w = f"/cdn-cgi/image/width=320,quality=80,format=auto/{PHOTO}"
        cf_cover = f"/cdn-cgi/image/width=300,height=200,fit=cover,gravity=auto,format=auto/{PHOTO}"
        expected = {n640: (640, 360), n256: (128, 128), cf_w: (320, 180), cf_cover: (300, 200)}
        html = f"""<style>body{{font:14px sans-serif;margin:8px}} img{{display:inline-block;vertical-align:top;margin:4px}}</style>
<p>Next.js loader URLs</p>
<img id="n640" width="640" height="360" alt="next 640"
     srcset="{base}{n640} 1x, {base}{n1080} 2x" src="{base}{n1080}">
<img id="n256" alt="next 256" src="{base}{n256}">
<p>Cloudflare URLs</p>
<img id="cf_w" alt="cloudflare width" src="{base}{cf_w}">
<img id="cf_cover" alt="cloudflare cover" src="{base}{cf_cover}">"""
        # The page lives on the server's own origin (a data: page is a public context, and
        # Chromium's Private Network Access keeps it from loading 127.0.0.1): the health answer,
        # its body replaced by the page.
        page = base + "/_kiln/health"
        ids = {"n640": n640, "n256": n256, "cf_w": cf_w, "cf_cover": cf_cover}
        with chromium() as driver:
            # Every load goes to the server (not the browser's own cache), so the second is kiln's hit.
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
            events: list = []
            for round_ in (1, 2):
                driver.get(page)
                driver.execute_script("document.title = 'adapters'; document.body.innerHTML = arguments[0]", html)
                sizes = wait_for(driver, """(() => { const i = [...document.images];
                    return i.every(x => x.complete) && i.map(x => [x.id, x.naturalWidth, x.naturalHeight]); })()""",
                                 "the images to load")
                assert {i: (w, h) for i, w, h in sizes} == {i: expected[u] for i, u in ids.items()}, sizes
                if round_ == 1:
                    screenshot(driver, "adapters-page.png", capsys)
                drain(driver, events)
                for url in ids.values():
                    seen = exchanges(events, base + url)
                    assert len(seen) == round_, f"{url}: {len(seen)} responses after load {round_}"
                    request, response = seen[-1]
                    headers = {k.lower(): v for k, v in response["headers"].items()}
                    accept = request.get("accept", "")
                    assert response["status"] == 200, (url, response["status"])
                    want = "image/avif" if "image/avif" in accept else "image/webp"
                    assert "image/webp" in accept, accept
                    assert headers["content-type"] == want, (url, accept, headers)
                    assert headers.get("vary") == "Accept", headers
                    cache = headers.get("x-cache", "")
                    assert cache == "MISS" if round_ == 1 else cache.startswith("HIT"), (url, round_, cache)
            # The 2x candidate was not asked for at DPR 1.
            assert not exchanges(events, base + n1080)
    finally:
        stop(s)


def test_absolute_source_urls_read_configured_origins_only(root):
    """An absolute source URL under `source.origins` is that origin's source, shared with the native
    URL naming it (no second fetch); any other host is a 400 and is never asked."""
    from test_remote import HOPPER, Origin
    origin = Origin()
    s = start(root, *ON, "--set", f"source.origins=origin-a=http://127.0.0.1:{origin.port}/",
              "--set", "source.allowed_networks=127.0.0.1")
    try:
        c = s.client()
        base = f"http://127.0.0.1:{origin.port}/"
        for adapted_url, native in ((next_url(base + HOPPER, 64), f"/w:64/q:75/f:auto/origin-a/{HOPPER}"),
                                    (f"/cdn-cgi/image/width=32/{base}{HOPPER}", f"/w:32/origin-a/{HOPPER}")):
            a = c.get(adapted_url, {"Accept": "image/webp"})
            assert a.status == 200 and a.header("x-cache") == "MISS", f"{adapted_url}: {a.describe()}"
            b = c.get(native, {"Accept": "image/webp"})
            assert (b.header("x-cache") or "").startswith("HIT"), (b.status, b.header("x-cache"), b.header("etag"), a.header("etag"))
            assert b.body == a.body and b.header("etag") == a.header("etag")
        # One fetch per variant (no original cache here), none for the twins.
        assert origin.counts[HOPPER] == 2, origin.counts
        for url in (next_url(f"http://127.0.0.2:{origin.port}/{HOPPER}", 64),
                    next_url(f"http://127.0.0.1:{origin.port + 1}/{HOPPER}", 64),
                    f"/cdn-cgi/image/width=32/http://localhost:{origin.port}/{HOPPER}"):
            r = c.get(url)
            assert r.status == 400 and "not under a configured origin" in r.body.decode(), f"{url}: {r.describe()}"
        assert sum(origin.counts.values()) == 2, origin.counts
    finally:
        stop(s)
        origin.stop()
