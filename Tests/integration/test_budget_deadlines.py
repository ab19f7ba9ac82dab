"""Budgets x AVIF encodes and scaled watermarks (issue 36 §3): what the probe saw run into the
render deadline (a 502 on every repeat) is now refused by the planner in milliseconds, or answered
within the deadline; no worker is killed.

- AVIF and WebP encodes are priced by quality and effort (`EncoderCost`): `q:100/mb:…/f:avif` of a
  3900x2900 noise JPEG and of the 12 MP bench photo are 413s before any decode.
- A scaled watermark is priced by its own pixels on every frame: 8 scaled 4000x4000 marks on a
  100-frame GIF are a 413.
- A `max_bytes` search starts no encode that would end past the deadline: with most of the
  deadline spent in the sleep processor (debug.sleep_processor, an exact length on any machine)
  it answers its first encode, marked `deadline` in Server-Timing; without the sleep the same URL
  searches on."""
from __future__ import annotations

import os
import re
import time

import pytest
from PIL import Image

from helpers import PHOTO_12MP, PHOTO_HD, SLEEP_ON

RENDER_TIMEOUT = 6.0


def encode_desc(r) -> str:
    m = re.search(r'\bencode;dur=[0-9.]+;desc="([^"]*)"', r.header("server-timing") or "")
    assert m, r.header("server-timing")
    return m.group(1)


def killed(s) -> bool:
    return "past limits.render_timeout" in s.kiln_log.read_text(errors="replace")


@pytest.fixture
def heavy_sources(root, tmp_path):
    """A 3900x2900 noise JPEG (the encoders' worst case), a 100-frame 500x500 GIF and a 4000x4000
    watermark outside the root."""
    Image.frombytes("RGB", (3900, 2900), os.urandom(3900 * 2900 * 3)).save(root / "budget_noise.jpg", quality=95)
    frames = [Image.new("RGB", (500, 500), (i * 2, 255 - i * 2, 90)) for i in range(100)]
    frames[0].save(root / "budget_anim.gif", save_all=True, append_images=frames[1:], duration=40, loop=0)
    mark = tmp_path / "big_mark.png"
    Image.new("RGBA", (4000, 4000), (255, 0, 0, 128)).save(mark)
    return mark


def test_heavy_encodes_and_scaled_marks_are_refused_in_milliseconds(make_stack, heavy_sources):
    s = make_stack(workers=1, extra_args=["--set", f"limits.render_timeout={RENDER_TIMEOUT}s",
                                          "--set", f"watermarks.big={heavy_sources}"])
    client = s.client()
    marks = "/".join(["wm:big:0.5:center:0:0:0.5"] * 8)
    for url, limit in [("/q:100/mb:4000000/f:avif/budget_noise.jpg", "max_request_"),
                       (f"/q:100/mb:2000000/w:3900/f:avif/{PHOTO_12MP}", "max_request_"),
                       (f"/{marks}/f:webp/budget_anim.gif", "max_request_work")]:
        for _ in range(2):   # refused again at once, not killed again
            started = time.monotonic()
            r = client.get(url)
            took = time.monotonic() - started
            assert r.status == 413, (url, r.status, r.body[:200])
            assert limit in r.body.decode(errors="replace"), (url, r.body[:200])
            assert took < RENDER_TIMEOUT / 3, f"{url}: refused after {took:.2f} s"
    # What the planner admits still renders: one AVIF encode of the photo at a web size.
    r = client.get(f"/w:1200/f:avif/{PHOTO_12MP}")
    assert r.status == 200 and r.body[4:12] == b"ftypavif"
    assert not killed(s), s.logs()


def test_a_max_bytes_search_stops_before_the_render_deadline(make_stack):
    s = make_stack(workers=1, extra_args=["--set", f"limits.render_timeout={RENDER_TIMEOUT}s", *SLEEP_ON])
    client = s.client()
    # 30 kB sits between this result's q 10 and q 80 sizes: a search of several encodes.
    free = client.get(f"/mb:30000/w:800/f:webp/{PHOTO_HD}")
    assert free.status == 200 and "deadline" not in encode_desc(free), encode_desc(free)
    assert int(re.search(r"encodes=(\d+)", encode_desc(free)).group(1)) > 2, encode_desc(free)
    # 5.2 s of the 6 s spent asleep: what is left cannot hold another encode and the answer's
    # reserve (a second), so the first encode is answered, over budget and marked.
    started = time.monotonic()
    r = client.get(f"/sleep:5200/mb:30000/w:800/f:webp/{PHOTO_HD}")
    took = time.monotonic() - started
    assert r.status == 200, (r.status, r.body[:200])
    desc = encode_desc(r)
    assert "deadline" in desc and "encodes=1" in desc, desc
    assert r.header("kiln-max-bytes") == "exceeded" and len(r.body) > 30000
    assert took < RENDER_TIMEOUT, took
    assert not killed(s), s.logs()
