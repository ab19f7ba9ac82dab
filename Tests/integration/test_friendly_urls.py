"""The friendly-URL recipe of nginx/kiln-locations.conf (issue 11): /thumb/<w>x<h>/<path> and
/avatar/<path> are nginx's trusted rewrites to a resize and to the `avatar` preset, so they need
no signature on a server where every other URL must be signed; they render exactly the variant
of their signed long form (one cache entry), and what follows the prefix is only ever a path."""
from __future__ import annotations

import pytest

from helpers import assert_plain_error, sign_path
from stack import running_stack

KEY = "6b1d2f0e3a4c5b6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f"
SALT = "a1b2c3d4e5f60718"
AVATAR = "rs:64:64:fill/circle/f:png"
IMG = "pillow_hopper.jpg"


def sign(path: str) -> str:
    return sign_path(path, KEY, SALT)


@pytest.fixture(scope="module")
def friendly(root):
    yield from running_stack(root=root, workers=1, extra_args=[
        "--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}",
        "--set", f"presets.avatar={AVATAR}"])


def test_everything_else_needs_a_signature(friendly):
    c = friendly.client()
    for path in (f"/rs:40:30:fill/{IMG}", f"/pr:avatar/{IMG}", f"/pr:avatar/-/{IMG}", f"/unsafe/pr:avatar/{IMG}",
                 f"/rs:40:30:fill/-/{IMG}", f"/{IMG}"):
        r = c.get(path)
        assert r.status == 403, f"{path}: {r.describe()}"
        assert_plain_error(r, path)


def test_avatar_is_the_preset_without_a_signature(friendly):
    c = friendly.client()
    r, im = c.image(f"/avatar/{IMG}")
    assert (im.size, r.content_type) == ((64, 64), "image/png")
    assert im.mode == "RGBA" and im.getpixel((0, 0))[3] == 0 and im.getpixel((32, 32))[3] == 255, "circle"
    # The signed long form is the same variant: same bytes and ETag, and kiln's cache has it.
    long_form, _ = c.image(sign(f"/pr:avatar/{IMG}"))
    assert long_form.body == r.body and long_form.header("etag") == r.header("etag")
    assert long_form.header("x-cache") != "MISS", long_form.header("x-cache")
    expanded, _ = c.image(sign(f"/{AVATAR}/{IMG}"))
    assert expanded.header("etag") == r.header("etag"), "the preset expands to its chain"


def test_thumb_is_a_fill_without_a_signature(friendly):
    c = friendly.client()
    r, im = c.image(f"/thumb/40x30/{IMG}")
    assert im.size == (40, 30)
    signed, _ = c.image(sign(f"/rs:40:30:fill/{IMG}"))
    assert signed.header("etag") == r.header("etag") and signed.body == r.body


def test_the_rest_of_a_friendly_url_is_a_path(friendly):
    c = friendly.client()
    # Options after the prefix are not options: a source named "bl:20/..." does not exist.
    for path in (f"/avatar/bl:20/{IMG}", f"/avatar/rs:4000:4000/{IMG}", f"/thumb/40x30/bl:20/{IMG}"):
        r = c.get(path)
        assert r.status == 404, f"{path}: {r.describe()}"
        assert_plain_error(r, path)
    for path in ("/avatar/../../../etc/passwd", "/avatar/%2e%2e/%2e%2e/etc/passwd", "/avatar/nonexistent.jpg"):
        r = c.get(path)
        assert r.status in (400, 404), f"{path}: {r.describe()}"
        assert b"root:" not in r.body
    # Sizes outside the rewrite's pattern are not trusted: they need a signature like any URL.
    assert c.get(f"/thumb/40000x30/{IMG}").status == 403
    # A client cannot claim trust for the preset's long form.
    assert c.get(f"/pr:avatar/{IMG}", headers={"Kiln-Trusted": "1"}).status == 403


def test_without_the_preset_avatar_is_a_clear_400(make_stack):
    s = make_stack(workers=1)
    r = s.client().get(f"/avatar/{IMG}")
    assert r.status == 400, r.describe()
    assert "avatar" in r.body.decode(), r.body
