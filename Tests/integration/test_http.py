"""HTTP behaviour: HEAD, conditional requests, methods, caching and timing headers."""
from __future__ import annotations

import email.utils
import os
import re

from helpers import DEFAULT_CACHE_CONTROL, PHOTO_HD, assert_plain_error

URL = f"/rs:300:200:fill/q:80/f:webp/{PHOTO_HD}"


def test_get_headers(client):
    r, im = client.image(URL)
    assert r.content_type == "image/webp"
    assert int(r.header("content-length")) == len(r.body) > 0
    assert r.header("cache-control") == DEFAULT_CACHE_CONTROL
    etag = r.header("etag")
    assert etag and re.fullmatch(r'(W/)?"[^"]+"', etag), f"ETag {etag!r} is not a quoted entity tag"
    assert r.header("last-modified"), "no Last-Modified"


def test_last_modified_is_the_source_mtime(client, root):
    r = client.get(URL)
    assert r.status == 200
    lm = email.utils.parsedate_to_datetime(r.header("last-modified")).timestamp()
    assert abs(lm - int(os.stat(root / PHOTO_HD).st_mtime)) <= 1, r.header("last-modified")


def test_etag_stable_and_specific(client):
    a = client.get(URL)
    b = client.get(URL)  # possibly the other worker
    c = client.get(URL.replace("q:80", "q:81"))
    assert a.status == b.status == c.status == 200
    assert a.header("etag") == b.header("etag"), "same variant, different ETags"
    assert a.header("etag") != c.header("etag"), "different variants, same ETag"


def test_head_has_headers_and_no_body(client):
    get = client.get(URL)
    head = client.head(URL)
    assert head.status == 200
    assert head.body == b""
    assert head.header("content-length") == get.header("content-length") == str(len(get.body))
    assert head.header("content-type") == get.header("content-type")
    assert head.header("etag") == get.header("etag")


def test_if_none_match_304(client):
    r = client.get(URL)
    etag = r.header("etag")
    nm = client.get(URL, headers={"If-None-Match": etag})
    assert nm.status == 304, nm.describe()
    assert nm.body == b""
    assert nm.header("etag") == etag
    # a list containing it, and the wildcard
    assert client.get(URL, headers={"If-None-Match": f'"nope", {etag}'}).status == 304
    assert client.get(URL, headers={"If-None-Match": "*"}).status == 304
    # another tag: full answer
    other = client.get(URL, headers={"If-None-Match": '"something-else"'})
    assert other.status == 200 and other.body == r.body


def test_if_modified_since_304(client):
    r = client.get(URL)
    lm = r.header("last-modified")
    nm = client.get(URL, headers={"If-Modified-Since": lm})
    assert nm.status == 304, nm.describe()
    assert nm.body == b""
    # What the 200 would carry (RFC 9110 §15.4.5): the ETag (it had none), Cache-Control, Date.
    assert nm.header("etag") == r.header("etag") and nm.header("etag"), (nm.headers, r.headers)
    assert nm.header("cache-control") == r.header("cache-control")
    assert nm.header("last-modified") == lm and nm.header("date")
    old = client.get(URL, headers={"If-Modified-Since": "Mon, 01 Jan 1990 00:00:00 GMT"})
    assert old.status == 200 and old.body == r.body


def test_if_modified_since_in_the_future_is_ignored(client):
    """RFC 9110 §13.1.3: a date later than the server's clock is no validator (it was a 304)."""
    r = client.get(URL)
    future = client.get(URL, headers={"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"})
    assert future.status == 200 and future.body == r.body, future.describe()


def test_post_and_other_methods_405(client):
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        r = client.request(method, URL, body=b"x" if method != "DELETE" else None)
        assert r.status == 405, f"{method}: {r.describe()}"
        assert_plain_error(r, method)


def test_server_timing_has_total(client):
    r = client.get(URL)
    st = r.header("server-timing")
    assert st, "no Server-Timing header"
    phases = {}
    for part in st.split(","):
        name, _, params = part.strip().partition(";")
        m = re.search(r"dur=([0-9.]+)", params)
        phases[name.strip()] = float(m.group(1)) if m else None
    assert "total" in phases and phases["total"] is not None, f"Server-Timing without total;dur=: {st}"
    assert 0 < phases["total"] < 60_000, st
    assert len(phases) >= 2, f"expected phases besides total: {st}"


def test_error_answers_are_short_text(client):
    r = client.get("/w:10/does-not-exist.jpg")
    assert r.status == 404
    assert_plain_error(r)
    assert int(r.header("content-length")) == len(r.body)
