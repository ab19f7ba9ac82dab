"""Client Hints and Save-Data through nginx (docs/url-api.md, "Client Hints and Save-Data").

`ch:1` / `w:auto` URLs take the device's width, DPR and data saving from the request headers
that nginx passes on as HTTP_* params; the resolved request is the native one (same cache entry,
same ETag), `Vary` lists the hints the URL consults, absurd hints fall back to the default width.
"""
from __future__ import annotations

import pytest

from stack import running_stack

IMG = "photo_1920x1080.jpg"
VARY_WIDTH = ["Sec-CH-Width", "Sec-CH-Viewport-Width", "Width", "Viewport-Width"]
VARY_DPR = ["Sec-CH-DPR", "DPR"]
# w:auto without dpr: or q: in the URL consults the width, the viewport and DPR, and Save-Data.
VARY_AUTO = VARY_WIDTH + VARY_DPR


@pytest.fixture(scope="module")
def client(root):
    """One worker, so a repeat is a memory-cache hit (X-Cache) without a disk cache."""
    yield from (s.client() for s in running_stack(root=root, workers=1))


def vary(r) -> list[str]:
    return [v.strip() for v in (r.header("vary") or "").split(",") if v.strip()]


def test_hinted_widths_snap_up_to_the_buckets(client):
    path = f"/w:auto/q:71/{IMG}"
    for hint, width in (("1", 320), ("320", 320), ("321", 640), ("700", 960), ("1000", 1280), ("5000", 1920)):
        r, im = client.image(path, headers={"Sec-CH-Width": hint})
        assert im.width == width, (hint, im.size)
        assert vary(r) == VARY_AUTO, r.describe()
    # The viewport (CSS px) times the DPR; the slot's width wins over it.
    r, im = client.image(path, headers={"Sec-CH-Viewport-Width": "375", "Sec-CH-DPR": "2"})
    assert im.width == 960, im.size
    r, im = client.image(path, headers={"Sec-CH-Viewport-Width": "1200", "Sec-CH-Width": "300"})
    assert im.width == 320, im.size


def test_one_bucket_is_one_cache_entry_shared_with_the_native_url(client):
    path = f"/w:auto/q:72/{IMG}"
    first = client.get(path, headers={"Sec-CH-Width": "500"})
    again = client.get(path, headers={"Sec-CH-Width": "600"})   # same bucket: 640
    native = client.get(f"/w:640/q:72/{IMG}")
    assert first.status == again.status == native.status == 200
    assert first.header("x-cache") == "MISS", first.describe()
    assert again.header("x-cache").startswith("HIT"), again.describe()
    assert native.header("x-cache").startswith("HIT"), native.describe()
    assert first.header("etag") == again.header("etag") == native.header("etag")
    assert first.body == native.body
    assert "vary" not in native.headers, native.describe()   # the native URL consults no hint
    # A conditional request with the bucket's ETag: 304 with the same Vary.
    nm = client.get(path, headers={"Sec-CH-Width": "639", "If-None-Match": first.header("etag")})
    assert nm.status == 304 and vary(nm) == VARY_AUTO, nm.describe()


@pytest.mark.parametrize("name,value", [
    ("Sec-CH-Width", "-1"), ("Sec-CH-Width", "1e9"), ("Sec-CH-Width", "abc"), ("Sec-CH-Width", "0"),
    ("Sec-CH-Width", "99999999999"), ("Sec-CH-Viewport-Width", "-5"), ("Width", "12.5")])
def test_absurd_width_hints_give_the_default_and_no_new_key(client, name, value):
    path = f"/w:auto/q:73/{IMG}"
    default = client.get(path)
    assert default.status == 200 and default.image().width == 960, default.describe()
    r = client.get(path, headers={name: value})
    assert r.status == 200, r.describe()
    assert r.header("etag") == default.header("etag") and r.header("x-cache").startswith("HIT"), r.describe()


def test_absurd_dpr_is_clamped_to_the_dpr_range(client):
    path = f"/ch:1/w:100/q:74/{IMG}"
    r, im = client.image(path, headers={"Sec-CH-DPR": "1e9"})   # not a number: ignored
    assert im.width == 100 and vary(r) == VARY_DPR, r.describe()
    r, im = client.image(path, headers={"Sec-CH-DPR": "9000000"})  # clamped to 4
    assert im.width == 400, im.size
    four = client.get(f"/w:100/dpr:4/q:74/{IMG}")
    assert four.header("etag") == r.header("etag") and four.header("x-cache").startswith("HIT"), four.describe()
    r, im = client.image(path, headers={"Sec-CH-DPR": "2.625"})  # up to a multiple of 0.5
    assert im.width == 300, im.size


def test_legacy_hint_names(client):
    path = f"/w:auto/q:75/{IMG}"
    r, im = client.image(path, headers={"Width": "500"})
    assert im.width == 640 and vary(r) == VARY_AUTO, r.describe()
    r, im = client.image(path, headers={"Viewport-Width": "1000"})
    assert im.width == 1280, im.size
    r, im = client.image(f"/ch:1/w:100/q:75/{IMG}", headers={"DPR": "3"})
    assert im.width == 300, im.size


def test_hints_need_the_urls_opt_in(client):
    r, im = client.image(f"/w:100/q:76/{IMG}", headers={"Sec-CH-DPR": "2", "Save-Data": "on"})
    assert im.width == 100 and "vary" not in r.headers, r.describe()
    bad = client.get(f"/ch:2/{IMG}")
    assert bad.status == 400 and b"ch:2" in bad.body, bad.describe()


def test_save_data_lowers_quality_and_varies(client):
    path = f"/ch:1/w:800/f:auto/{IMG}"
    accept = {"Accept": "image/webp,*/*"}
    normal = client.get(path, headers=accept)
    saving = client.get(path, headers={**accept, "Save-Data": "on"})
    assert normal.status == saving.status == 200
    assert saving.content_type == normal.content_type == "image/webp"
    assert len(saving.body) < len(normal.body) * 0.9, (len(saving.body), len(normal.body))
    assert vary(normal) == ["Accept"] + VARY_DPR + ["Save-Data"], normal.describe()
    assert vary(saving) == vary(normal)
    # The answer is the native q:50 variant.
    native = client.get(f"/w:800/q:50/f:auto/{IMG}", headers=accept)
    assert native.header("etag") == saving.header("etag") and native.header("x-cache").startswith("HIT")


def test_explicit_quality_wins_over_save_data(client):
    path = f"/ch:1/dpr:1/w:600/q:90/{IMG}"
    normal = client.get(path)
    saving = client.get(path, headers={"Save-Data": "on"})
    assert normal.header("etag") == saving.header("etag") and saving.header("x-cache").startswith("HIT")
    assert "vary" not in saving.headers, saving.describe()


def test_settings_buckets_default_ect_and_scope(make_stack):
    s = make_stack(extra_args=["--set", "http.hint_widths=200,400", "--set", "http.hint_default_width=300",
                               "--set", "http.save_data_ect=true", "--set", "http.save_data=all",
                               "--set", "http.save_data_quality=30"])
    c = s.client()
    r, im = c.image(f"/w:auto/{IMG}", headers={"Sec-CH-Width": "250"})
    assert im.width == 400, im.size
    r, im = c.image(f"/w:auto/{IMG}", headers={"Sec-CH-Width": "-1"})
    assert im.width == 300, im.size
    assert vary(r) == VARY_AUTO + ["Save-Data", "ECT"], r.describe()
    # `all`: URLs without ch:1 too; ECT 2g counts as Save-Data.
    plain = c.get(f"/w:500/{IMG}")
    slow = c.get(f"/w:500/{IMG}", headers={"ECT": "2g"})
    native = c.get(f"/w:500/q:30/{IMG}")
    assert vary(plain) == ["Save-Data", "ECT"], plain.describe()
    assert slow.header("etag") == native.header("etag") != plain.header("etag")
    assert len(slow.body) < len(plain.body)


@pytest.mark.parametrize("path,varies", [
    (f"/ch:1/dpr:1/w:300/{IMG}", True),                  # a JPEG answer: Save-Data lowers its quality
    (f"/ch:1/dpr:1/w:300/f:webp/{IMG}", True),
    (f"/ch:1/dpr:1/w:300/f:png/{IMG}", False),           # PNG has no quality
    (f"/ch:1/dpr:1/w:300/f:webp/ll:1/{IMG}", False),     # nor has lossless WebP
    ("/ch:1/dpr:1/w:300/alpha_1920x1080.png", False),    # a PNG source answered as PNG
])
def test_save_data_is_in_vary_only_where_it_can_change_the_answer(client, path, varies):
    """Save-Data is only in Vary for answers a quality changes: a PNG or lossless answer keeps one
    edge object whatever the client saves (issue 36 §2); the answer really is the same."""
    normal = client.get(path)
    saving = client.get(path, headers={"Save-Data": "on"})
    assert normal.status == saving.status == 200
    assert ("Save-Data" in vary(normal)) == varies and vary(normal) == vary(saving), normal.describe()
    if not varies:
        assert normal.body == saving.body
