"""Download names (`Content-Disposition`) and CORS (`http.allow_origin`), issue 26 §6, through
nginx with the real binary."""
from __future__ import annotations

import re

import pytest

from helpers import SetupError, assert_plain_error
from stack import KilnStack

IMG = "pillow_hopper.jpg"
ORIGIN = "https://a.example"


def running(root, *args: str):
    s = KilnStack(root=root, workers=1, extra_args=list(args))
    try:
        s.start()
    except SetupError as e:
        s.stop(check=False)
        s.cleanup()
        pytest.fail(str(e), pytrace=False)
    try:
        yield s
        assert s.stop() == 0, s.logs()
    finally:
        s.cleanup()


@pytest.fixture(scope="module")
def listed(root):
    yield from running(root, "--set", f"http.allow_origin={ORIGIN}, http://localhost:8080")


@pytest.fixture(scope="module")
def everyone(root):
    yield from running(root, "--set", "http.allow_origin=*")


def disposition(r) -> tuple[str, str, str | None]:
    """(type, filename, filename*) of a Content-Disposition that must be well-formed: one quoted
    ASCII filename without quotes, backslashes, slashes or controls, then an optional RFC 8187 name."""
    v = r.header("content-disposition")
    assert v is not None, r.headers
    m = re.fullmatch(r'(inline|attachment); filename="([\x20-\x7e]*)"(?:; filename\*=UTF-8\'\'([A-Za-z0-9!#$&+\-.^_`|~%]+))?', v)
    assert m, f"malformed Content-Disposition: {v!r}"
    name = m.group(2)
    assert not set(name) & set('"\\/;:%'), v
    assert not name.startswith("."), v
    return m.group(1), name, m.group(3)


def test_default_inline_with_source_name_and_output_extension(client):
    r = client.get(f"/w:40/f:webp/sub/{IMG}")
    assert r.status == 200
    assert disposition(r) == ("inline", "pillow_hopper.webp", None)
    r = client.get(f"/w:40/{IMG}")
    assert disposition(r) == ("inline", "pillow_hopper.jpg", None)
    # 304: no Content-Disposition (only the fields a cache updates).
    r304 = client.get(f"/w:40/{IMG}", headers={"If-None-Match": r.header("etag")})
    assert r304.status == 304 and r304.header("content-disposition") is None
    # No CORS header by default.
    assert client.get(f"/w:40/{IMG}", headers={"Origin": ORIGIN}).header("access-control-allow-origin") is None


def test_filename_and_attachment(listed):
    c = listed.client()
    first = c.get(f"/w:41/fn:Holiday%202024.png/att:1/{IMG}")
    assert first.status == 200
    assert disposition(first) == ("attachment", "Holiday 2024.jpg", None)
    # Another name for the same variant: the same entry (a memory hit, the same ETag and bytes),
    # answered with its own name, never the first request's.
    second = c.get(f"/w:41/fn:caf%C3%A9%20%E7%8C%AB/{IMG}")
    assert second.header("x-cache") == "HIT-MEMORY", second.headers
    assert second.header("etag") == first.header("etag") and second.body == first.body
    assert disposition(second) == ("inline", "caf_ _.jpg", "caf%C3%A9%20%E7%8C%AB.jpg")
    plain = c.get(f"/w:41/{IMG}")
    assert plain.header("etag") == first.header("etag")
    assert disposition(plain) == ("inline", "pillow_hopper.jpg", None)


def test_hostile_names(listed):
    c = listed.client()
    cases = {
        "crlf": ("a%0D%0ASet-Cookie:%20x=1", "aSet-Cookie_ x=1.jpg"),
        "lf header": ("a%0AX-Evil:%201", "aX-Evil_ 1.jpg"),
        "quotes": ("a%22%3B%20filename=evil.exe", "a__ filename=evil.jpg"),
        "backslashes": ("..%5C..%5Cboot.ini", "_.._boot.jpg"),
        "dots": ("...", "image.jpg"),
        "bidi": ("%E2%80%AEgpj.exe", "gpj.jpg"),
        "nul-free controls": ("a%01%1F%7Fb", "ab.jpg"),
        "long": ("x" * 900, "x" * 100 + ".jpg"),
    }
    for what, (raw, expected) in cases.items():
        r = c.get(f"/w:30/fn:{raw}/{IMG}")
        assert r.status == 200, f"{what}: {r.describe()}"
        _, name, _ = disposition(r)
        assert name == expected, f"{what}: {name!r}"
        assert r.header("set-cookie") is None and r.header("x-evil") is None, what
    # Encoded slashes: nginx decodes them into the path, which then names another file or folder.
    for raw in ("..%2F..%2Fetc%2Fpasswd", "a%2Fb"):
        r = c.get(f"/w:30/fn:{raw}/{IMG}")
        if r.status == 200:
            disposition(r)
        else:
            assert r.status in (400, 403, 404), r.describe()
            assert_plain_error(r)
    # Not UTF-8 once decoded: a one-line 400, nothing rendered.
    r = c.get(f"/w:30/fn:%FF%FE/{IMG}")
    assert r.status == 400, r.describe()
    assert_plain_error(r)
    assert c.get(f"/w:30/fn:/{IMG}").status == 400
    assert c.get(f"/w:30/att:2/{IMG}").status == 400


def test_cors_list(listed):
    c = listed.client()
    r = c.get(f"/w:40/{IMG}", headers={"Origin": ORIGIN})
    assert r.status == 200
    assert r.header("access-control-allow-origin") == ORIGIN
    assert r.header("vary") == "Origin"
    r = c.get(f"/w:40/{IMG}", headers={"Origin": "http://localhost:8080"})
    assert r.header("access-control-allow-origin") == "http://localhost:8080"
    for other in ("https://evil.example", "https://a.example.evil", "https://A.example", "null"):
        r = c.get(f"/w:40/{IMG}", headers={"Origin": other})
        assert r.status == 200 and r.header("access-control-allow-origin") is None, other
        assert r.header("vary") == "Origin", other
    r = c.get(f"/w:40/{IMG}")
    assert r.header("access-control-allow-origin") is None and r.header("vary") == "Origin"
    # f:auto: one Vary with both.
    r = c.get(f"/w:40/f:auto/{IMG}", headers={"Origin": ORIGIN, "Accept": "image/webp"})
    assert r.header("vary") == "Accept, Origin" and r.header("access-control-allow-origin") == ORIGIN
    # 304 and errors carry it too.
    etag = c.get(f"/w:40/{IMG}").header("etag")
    r = c.get(f"/w:40/{IMG}", headers={"Origin": ORIGIN, "If-None-Match": etag})
    assert r.status == 304 and r.header("access-control-allow-origin") == ORIGIN and r.header("vary") == "Origin"
    r = c.get("/w:40/no-such-file.jpg", headers={"Origin": ORIGIN})
    assert r.status == 404 and r.header("access-control-allow-origin") == ORIGIN
    assert_plain_error(r)


def test_cors_everyone(everyone):
    c = everyone.client()
    for headers in ({"Origin": ORIGIN}, {}):
        r = c.get(f"/w:40/{IMG}", headers=headers)
        assert r.header("access-control-allow-origin") == "*"
        assert r.header("vary") is None
    r = c.get("/w:40/no-such-file.jpg")
    assert r.status == 404 and r.header("access-control-allow-origin") == "*"
