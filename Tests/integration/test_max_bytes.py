"""max_bytes:<n> (issue 26 §3): the highest quality whose result fits, found in at most 6 encodes
shown in Server-Timing; Kiln-Max-Bytes says fit or exceeded; the 400s. Bench photos, nginx."""
from __future__ import annotations

import re

import pytest

from helpers import ALPHA_HD, PHOTO_12MP, PHOTO_HD, assert_plain_error

MAX_ENCODES = 6
MIN_QUALITY = 10


def encode_desc(r) -> dict[str, str]:
    """The `encode` phase's description in Server-Timing: {'encodes': '4', 'q': '57', 'over': '58'}."""
    timing = r.header("server-timing") or ""
    m = re.search(r'\bencode;dur=[0-9.]+;desc="([^"]*)"', timing)
    assert m, f"no encode description in {timing!r}"
    out = {}
    for word in m.group(1).split():
        k, _, v = word.partition("=")
        out[k] = v
    return out


# Three output sizes, the three lossy formats, budgets well inside each one's range (between its
# q 10 and q 80 sizes), on both bench photos.
CASES = [
    (PHOTO_HD, 1920, "jpeg", 150_000),
    (PHOTO_12MP, 1200, "webp", 100_000),
    (PHOTO_HD, 800, "jpeg", 40_000),
    (PHOTO_HD, 800, "webp", 30_000),
    (PHOTO_HD, 400, "avif", 6_000),
]


@pytest.mark.parametrize("source,width,fmt,budget", CASES)
def test_result_fits_at_the_highest_quality(client, source, width, fmt, budget):
    url = f"/mb:{budget}/w:{width}/f:{fmt}/{source}"
    r, im = client.image(url)
    assert im.size[0] == width and im.format == fmt.upper()
    assert len(r.body) <= budget
    assert r.header("kiln-max-bytes") == "fit"
    d = encode_desc(r)
    encodes, q, over = int(d["encodes"]), int(d["q"]), int(d["over"])
    assert 2 < encodes <= MAX_ENCODES
    assert MIN_QUALITY < q < over  # a real search: not the floor, not the start
    # The answer is that quality's encode, and the quality found too large really is.
    same, _ = client.image(f"/q:{q}/w:{width}/f:{fmt}/{source}")
    assert same.body == r.body
    above, _ = client.image(f"/q:{over}/w:{width}/f:{fmt}/{source}")
    assert len(above.body) > budget
    # Within a few quality steps of the best (the search usually closes to one step).
    assert over - q <= 3, d


def test_first_encode_that_fits_is_the_only_one(client):
    r, _ = client.image(f"/mb:10000000/w:640/f:jpeg/{PHOTO_HD}")
    assert encode_desc(r) == {"encodes": "1", "q": "80"}
    assert r.header("kiln-max-bytes") == "fit"
    plain, _ = client.image(f"/w:640/f:jpeg/{PHOTO_HD}")
    assert plain.body == r.body and plain.header("kiln-max-bytes") is None
    # The request's quality is where the search starts.
    r, _ = client.image(f"/mb:10000000/q:55/w:640/f:webp/{PHOTO_HD}")
    assert encode_desc(r) == {"encodes": "1", "q": "55"}


def test_impossible_budget_answers_the_smallest_with_a_header(client):
    url = f"/mb:100/w:800/f:jpeg/{PHOTO_HD}"
    r, im = client.image(url)
    assert r.header("kiln-max-bytes") == "exceeded"
    d = encode_desc(r)
    assert d["encodes"] == "2" and d["q"] == str(MIN_QUALITY) and "exceeded" in d
    floor, _ = client.image(f"/q:{MIN_QUALITY}/w:800/f:jpeg/{PHOTO_HD}")
    assert r.body == floor.body
    # From a worker's memory cache (two workers: ask until one answers from it): the same
    # answer and the same header.
    for _ in range(8):
        again = client.get(url)
        assert again.status == 200 and again.body == r.body
        assert again.header("kiln-max-bytes") == "exceeded"
        if again.header("x-cache") != "MISS":
            break
    assert again.header("x-cache") != "MISS"


def test_budget_is_part_of_the_cache_key(client):
    a, _ = client.image(f"/mb:30000/w:700/f:webp/{PHOTO_HD}")
    b, _ = client.image(f"/mb:20000/w:700/f:webp/{PHOTO_HD}")
    assert a.header("etag") != b.header("etag")
    assert len(b.body) <= 20000 < len(a.body) <= 30000


@pytest.mark.parametrize("spec,words", [
    ("mb:0", "max_bytes"),
    ("mb:-5", "max_bytes"),
    ("mb:100000001", "max_bytes"),
    ("mb:abc", "max_bytes"),
    ("mb:5000/f:png", "lossy"),
    ("f:webp/ll:1/mb:5000", "lossy"),
])
def test_bad_budgets_are_400(client, spec, words):
    r = client.get(f"/{spec}/w:100/{PHOTO_HD}")
    assert r.status == 400, r.describe()
    assert_plain_error(r)
    assert words.encode() in r.body


def test_animated_output_is_a_400_and_a_frame_works(client):
    r = client.get("/mb:5000/imagewebp_random_lossy_anim.webp")
    assert r.status == 400, r.describe()
    assert_plain_error(r)
    assert b"frame:" in r.body
    r, im = client.image("/frame:0/mb:5000/f:webp/imagewebp_random_lossy_anim.webp")
    assert len(r.body) <= 5000 or r.header("kiln-max-bytes") == "exceeded"
    assert r.header("kiln-max-bytes") in ("fit", "exceeded")


def test_png_source_without_format_is_encoded_once_and_judged(client):
    r, im = client.image(f"/mb:1000/w:200/{ALPHA_HD}")
    assert im.format == "PNG"
    assert encode_desc(r) == {"encodes": "1", "exceeded": ""}
    assert r.header("kiln-max-bytes") == "exceeded"
    r, _ = client.image(f"/mb:10000000/w:200/{ALPHA_HD}")
    assert r.header("kiln-max-bytes") == "fit" and encode_desc(r) == {"encodes": "1"}


def test_auto_format_searches_the_negotiated_format(client):
    r, im = client.image(f"/mb:25000/w:800/f:auto/{PHOTO_HD}", headers={"Accept": "image/webp,*/*"})
    assert im.format == "WEBP" and len(r.body) <= 25000
    assert r.header("kiln-max-bytes") == "fit" and r.header("vary") == "Accept"
    assert int(encode_desc(r)["encodes"]) > 1


def test_every_encode_counts_in_the_work_budget(make_stack):
    """The plan counts the encode 6 times: under a work limit that one WebP encode of 3 MP fits
    and six do not, the URL with mb: is a 413 naming the limit, the same URL without it a 200."""
    s = make_stack(workers=1, extra_args=["--set", "limits.max_request_work=150"])
    c = s.client()
    plain = c.get(f"/w:2000/f:webp/{PHOTO_12MP}")
    assert plain.status == 200, plain.describe()
    r = c.get(f"/mb:50000/w:2000/f:webp/{PHOTO_12MP}")
    assert r.status == 413, r.describe()
    assert_plain_error(r)
    assert b"limits.max_request_work" in r.body
