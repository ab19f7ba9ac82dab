"""Allowed sizes and qualities (issue 26 §7), through nginx with the real binary.

Two stacks with the same lists (widths 40,80,160; heights 30,60; qualities 50,80), one per
policy, both with a signing key and unsigned URLs allowed (`/unsafe/...`), one worker each (a
repeated variant is a memory-cache hit).
"""
from __future__ import annotations

import pytest

from helpers import SetupError, assert_plain_error, sign_path
from stack import KilnStack

K1 = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
S1 = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
IMG = "pillow_hopper.jpg"   # 128x128 (in the corpus)
LISTS = ["--set", "limits.allowed_widths=80, 40,160", "--set", "limits.allowed_heights=30,60",
         "--set", "limits.allowed_qualities=50,80",
         "--set", f"security.keys={K1}", "--set", f"security.salts={S1}", "--set", "security.allow_unsigned=true"]


def start(root, policy: str) -> KilnStack:
    s = KilnStack(root=root, workers=1, extra_args=LISTS + ["--set", f"limits.allowed_policy={policy}"])
    try:
        return s.start()
    except SetupError as e:
        s.stop(check=False)
        s.cleanup()
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="module")
def refusing(root):
    s = start(root, "refuse")
    yield s
    try:
        assert s.stop() == 0, s.logs()
    finally:
        s.cleanup()


@pytest.fixture(scope="module")
def snapping(root):
    s = start(root, "snap")
    yield s
    try:
        assert s.stop() == 0, s.logs()
    finally:
        s.cleanup()


def test_refuse_names_the_key_and_the_values(refusing):
    c = refusing.client()
    _, im = c.image(f"/unsafe/w:40/q:80/{IMG}")
    assert im.size == (40, 40)
    _, im = c.image(f"/unsafe/rs:80:60:fill/{IMG}")
    assert im.size == (80, 60)
    # dpr multiplies before the check: w:20 at dpr 2 is 40, allowed; w:40 at dpr 1.5 is 60, not.
    _, im = c.image(f"/unsafe/w:20/dpr:2/{IMG}")
    assert im.size == (40, 40)
    for path, key, values in ((f"/unsafe/w:41/{IMG}", "limits.allowed_widths", "40, 80, 160"),
                              (f"/unsafe/w:40/dpr:1.5/{IMG}", "limits.allowed_widths", "40, 80, 160"),
                              (f"/unsafe/rs:40:31/{IMG}", "limits.allowed_heights", "30, 60"),
                              (f"/unsafe/h:10/{IMG}", "limits.allowed_heights", "30, 60"),
                              (f"/unsafe/w:40/q:79/{IMG}", "limits.allowed_qualities", "50, 80")):
        r = c.get(path)
        assert r.status == 400, f"{path}: {r.describe()}"
        assert_plain_error(r, path)
        text = r.body.decode()
        assert key in text and values in text, f"{path}: {text!r}"
        assert r.header("cache-control") == "no-store"
    # No resize, no q: nothing to check.
    _, im = c.image(f"/unsafe/gs/{IMG}")
    assert im.size == (128, 128)


def test_signed_and_trusted_are_not_restricted(refusing, snapping):
    for s in (refusing, snapping):
        c = s.client()
        r, im = c.image(sign_path(f"/rs:41:31:force/q:79/{IMG}", K1, S1))
        assert im.size == (41, 31)
        # nginx's trusted rewrite (/thumb/WxH/ -> rs:W:H:fill).
        _, im = c.image(f"/thumb/41x31/{IMG}")
        assert im.size == (41, 31)


def test_snap_goes_up_and_shares_the_snapped_entry(snapping):
    c = snapping.client()
    exact, im = c.image(f"/unsafe/w:80/q:80/{IMG}")
    assert im.size == (80, 80)
    # 41..80 snap to 80 and q:51..80 to 80: the same variant, answered from the memory cache.
    for path in (f"/unsafe/w:41/q:80/{IMG}", f"/unsafe/w:80/q:51/{IMG}", f"/unsafe/w:30/dpr:2/q:75/{IMG}"):
        r, im = c.image(path)
        assert im.size == (80, 80), path
        assert r.header("etag") == exact.header("etag"), path
        assert r.header("x-cache") == "HIT-MEMORY", (path, r.header("x-cache"))
        assert r.body == exact.body
    # Above every value: the largest (160; enlarge so the 128 px source reaches it).
    _, im = c.image(f"/unsafe/w:5000/el:1/{IMG}")
    assert im.size == (160, 160)
    _, im = c.image(f"/unsafe/rs:10:10:force/{IMG}")
    assert im.size == (40, 30)
    # q above every value: the largest (80), the same bytes as q:80.
    r = c.get(f"/unsafe/w:80/q:100/{IMG}")
    assert r.status == 200 and r.header("etag") == exact.header("etag")
