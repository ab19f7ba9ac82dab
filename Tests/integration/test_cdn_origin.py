"""Kiln as a CDN origin (issue 11): nginx/kiln-cdn-origin.conf with the front cache
(nginx/kiln-front-cache.conf) in front of kiln on a signing server. Lifetimes and `immutable` as
configured and only where the URL cannot change, `Vary: Accept` only on negotiated answers,
ETag/304 through nginx and its cache, stale copies while kiln is down, nginx's own errors short and
never cached, and what `kiln cache purge` does and does not reach."""
from __future__ import annotations

import os
import signal
import time

import pytest

from cachefiles import entry_files, kiln
from helpers import assert_plain_error, sign_path

KEY = "0f9e8d7c6b5a49382716f5e4d3c2b1a00f1e2d3c4b5a69788796a5b4c3d2e1f0"
SALT = "00112233445566778899aabbccddeeff"
IMG = "pillow_hopper.jpg"
CC = "public, max-age=31536000, stale-while-revalidate=86400, stale-if-error=604800"
CDN_CC = "max-age=63072000, stale-if-error=604800"
VALID = 1  # seconds nginx's front cache keeps an answer fresh


def sign(path: str) -> str:
    return sign_path(path, KEY, SALT)


@pytest.fixture
def origin(make_stack, tmp_path):
    disk = tmp_path / "disk"
    s = make_stack(workers=2, nginx_env={"KILN_NGINX_CDN_ORIGIN": "1", "KILN_NGINX_FRONT_CACHE": str(VALID)},
                   extra_args=["--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}",
                               "--set", f"http.cache_control={CC}", "--set", f"http.cdn_cache_control={CDN_CC}",
                               "--set", f"cache.disk_path={disk}", "--set", "cache.memory_cost_limit=0"])
    return s, disk


def test_lifetimes_and_immutable_only_for_versioned_urls(origin):
    s, _ = origin
    c = s.client()
    plain, _ = c.image(sign(f"/rs:48:48:fill/f:webp/{IMG}"))
    assert plain.header("cache-control") == CC, "a signed URL names a path whose file may be replaced"
    assert plain.header("cdn-cache-control") == CDN_CC
    versioned, _ = c.image(sign(f"/cb:2026-11/rs:48:48:fill/f:webp/{IMG}"))
    assert versioned.header("cache-control") == CC + ", immutable"
    assert versioned.header("cdn-cache-control") == CDN_CC
    # A new version is a new variant (kiln renders it: a MISS), with the same pixels.
    assert versioned.header("x-cache") == "MISS" and versioned.header("x-cache-front") == "MISS"
    assert versioned.body == plain.body
    # Expiring links: every lifetime cut to what is left, stale ones too.
    exp = int(time.time()) + 120
    r, _ = c.image(sign(f"/exp:{exp}/rs:48:48:fill/f:webp/{IMG}"))
    lifetimes = dict(d.split("=") for d in r.header("cache-control").split(", ") if "=" in d)
    assert all(0 < int(v) <= 120 for v in lifetimes.values()), r.header("cache-control")
    assert set(lifetimes) == {"max-age", "stale-while-revalidate", "stale-if-error"}
    assert all(0 < int(d.split("=")[1]) <= 120 for d in r.header("cdn-cache-control").split(", ")), r.header("cdn-cache-control")
    # The origin keeps its render phases to itself; errors are never kept anywhere.
    assert plain.header("server-timing") is None
    bad = c.get(sign(f"/rs:48:48/{IMG}x"))
    assert bad.status == 404 and bad.header("cache-control") == "no-store"
    assert_plain_error(bad)


def test_vary_only_where_the_format_is_negotiated(origin):
    s, _ = origin
    c = s.client()
    webp = "image/webp,image/apng,*/*;q=0.8"  # a WebP-only client; AVIF: test_avif_heic.py
    for path in (f"/rs:40:40/f:webp/{IMG}", f"/rs:40:40/f:jpeg/{IMG}", f"/rs:40:40/{IMG}"):
        r = c.get(sign(path), headers={"Accept": webp})
        assert r.status == 200 and r.header("vary") is None, f"{path}: Vary {r.header('vary')}"
    auto = sign(f"/rs:40:40/f:auto/{IMG}")
    a = c.get(auto, headers={"Accept": webp})
    b = c.get(auto, headers={"Accept": "image/jpeg,*/*"})
    assert (a.content_type, b.content_type) == ("image/webp", "image/jpeg")
    assert a.header("vary") == "Accept" and b.header("vary") == "Accept"
    assert a.header("etag") != b.header("etag")


def test_etag_and_304_pass_through_nginx_and_its_cache(origin):
    s, _ = origin
    c = s.client()
    path = sign(f"/rs:56:56/f:png/{IMG}")
    first = c.get(path)
    assert first.status == 200 and first.header("x-cache-front") == "MISS"
    etag, last_modified = first.header("etag"), first.header("last-modified")
    assert etag and etag.startswith('"') and last_modified
    # From nginx's cache (fresh), then from kiln after it expired: 304 either way, no body.
    for attempt in ("fresh", "expired"):
        if attempt == "expired":
            time.sleep(VALID + 1.2)
        r = c.get(path, headers={"If-None-Match": etag})
        assert r.status == 304 and r.body == b"", f"{attempt}: {r.describe()}"
        assert r.header("etag") == etag
    r = c.get(path, headers={"If-None-Match": '"something-else"'})
    assert r.status == 200 and r.body == first.body
    r = c.get(path, headers={"If-Modified-Since": last_modified})
    assert r.status == 304, r.describe()


def test_kiln_down_stale_copies_and_short_errors(origin):
    s, _ = origin
    c = s.client()
    cached = sign(f"/rs:44:44/f:png/{IMG}")
    first = c.get(cached)
    assert first.status == 200
    time.sleep(VALID + 1.2)  # expired in nginx's cache: normally revalidated with kiln
    pids = [s.master_pid, *s.worker_pids()]
    for p in pids:
        os.kill(p, signal.SIGKILL)
    s.kiln.wait(10)
    s.exit_code = -9
    stale = c.get(cached)
    assert stale.status == 200 and stale.body == first.body, stale.describe()
    assert stale.header("x-cache-front") == "STALE"
    down = c.get(sign(f"/rs:45:45/f:png/{IMG}"))
    assert down.status == 502, down.describe()
    assert down.header("cache-control") == "no-store" and down.header("retry-after") == "5"
    assert down.content_type == "text/plain" and down.body.decode().startswith("unavailable: kiln did not answer")


def test_purge_reaches_kiln_not_the_caches_in_front(origin, root):
    s, disk = origin
    c = s.client()
    path = sign(f"/rs:52:52/f:png/{IMG}")
    first = c.get(path)
    assert first.status == 200 and first.header("x-cache") == "MISS"
    assert len(entry_files(disk)) == 1
    p = kiln("cache", "purge", "--root", str(root), "--set", f"cache.disk_path={disk}")
    assert p.returncode == 0 and p.stdout.startswith("purged 1 entries"), (p.stdout, p.stderr)
    assert entry_files(disk) == []
    # nginx's cache still answers while fresh: the purge did not reach it.
    again = c.get(path)
    assert again.header("x-cache-front") == "HIT" and again.body == first.body
    # After its validity nginx revalidates: kiln renders the variant again (a MISS, back in its
    # disk cache) with the same ETag, so the copy in front is kept (a 304 from kiln).
    time.sleep(VALID + 1.2)
    deadline = time.monotonic() + 5
    while not entry_files(disk) and time.monotonic() < deadline:
        r = c.get(path)
        assert r.status == 200 and r.body == first.body and r.header("etag") == first.header("etag")
        assert r.header("x-cache-front") in ("REVALIDATED", "STALE", "UPDATING", "EXPIRED"), r.header("x-cache-front")
        time.sleep(0.1)
    assert len(entry_files(disk)) == 1, "the revalidation rendered the purged variant again"
