"""Per-request budgets (issue 14, "budgets before work"), through nginx with the real binary.

Kiln plans each request's memory (the largest set of buffers alive at once) and work from the
source's header before decoding, and refuses what is over `limits.max_request_memory` (256 MiB)
or `limits.max_request_work` with a 413 naming the limit; an encoded result over
`limits.max_output_bytes` is a 413 too. Refusals are remembered like other failures. A 50 MP PNG
resized to a thumbnail stays within the defaults: it is read row by row and shrunk while decoding.
"""
from __future__ import annotations

import os
import time

import pytest
from PIL import Image

from cachefiles import check_entry, entry_files
from helpers import PHOTO_12MP, assert_plain_error

HITS = {"HIT-MEMORY", "HIT-DISK", "COALESCED"}
SHARPENS = "/".join(["sh:50"] * 15)

# The probe's heavy URLs: seconds of CPU and 1.5-2.5 GB in one worker before the budget.
HEAVY = [
    f"/el:1/w:8164/f:webp/ll:1/{PHOTO_12MP}",
    f"/el:1/w:8164/{SHARPENS}/{PHOTO_12MP}",
    f"/el:1/rs:8000:6000:force/bl:50/sh:40/bl:49/{PHOTO_12MP}",
]


@pytest.fixture(scope="module")
def big_png(root):
    """An 8000x6250 (50 MP, the default limits.max_pixels) RGBA PNG written into the test root."""
    name = f"big50-{os.getpid()}.png"
    w, h = 8000, 6250
    r = Image.linear_gradient("L").resize((w, h), Image.Resampling.NEAREST)
    g = Image.linear_gradient("L").transpose(Image.Transpose.ROTATE_90).resize((w, h), Image.Resampling.NEAREST)
    b = Image.new("L", (w, h), 90)
    a = Image.new("L", (w, h), 255)
    Image.merge("RGBA", (r, g, b, a)).save(root / name, compress_level=1)
    os.chmod(root / name, 0o644)
    with open(root / name, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    yield name
    (root / name).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def pad_png(root):
    """A 7000x5600 (39 MP) RGB PNG for pad + blur + sharpen + rounded."""
    name = f"big39-{os.getpid()}.png"
    w, h = 7000, 5600
    r = Image.linear_gradient("L").resize((w, h), Image.Resampling.NEAREST)
    Image.merge("RGB", (r, r.transpose(Image.Transpose.FLIP_TOP_BOTTOM), Image.new("L", (w, h), 40))).save(
        root / name, compress_level=1)
    os.chmod(root / name, 0o644)
    yield name
    (root / name).unlink(missing_ok=True)


@pytest.fixture
def disk_stack(make_stack, tmp_path):
    disk = tmp_path / "cache"
    s = make_stack(workers=1, extra_args=["--set", f"cache.disk_path={disk}"])
    s.disk = disk
    return s


def _budget_error(r, path, key):
    assert r.status == 413, f"GET {path}: {r.describe()}"
    assert_plain_error(r, path)
    text = r.body.decode()
    assert key in text, f"{path}: the reason must name {key}: {text!r}"
    return text


def _vm(pid: int, field: str) -> int:
    """VmHWM / VmRSS of `pid` in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def _assert_nothing_partial(disk):
    tmp = disk / "tmp"
    leftovers = [p for p in tmp.iterdir()] if tmp.is_dir() else []
    assert leftovers == [], f"temporary files left in the cache: {leftovers}"
    for p in entry_files(disk):
        assert check_entry(p) is None, f"{p}: {check_entry(p)}"


def test_heavy_urls_are_refused_at_once_naming_the_limit(disk_stack, pad_png):
    c = disk_stack.client()
    workers = disk_stack.worker_pids()
    paths = HEAVY + [f"/pad:40/bl:20/sh:10/rounded:300/{pad_png}"]
    for path in paths:
        r = c.get(path)
        text = _budget_error(r, path, "limits.max_request_memory")
        assert "(256 MiB)" in text and "of memory (at " in text, f"{path}: names the planned amount: {text!r}"
        assert r.elapsed < 1.0, f"{path}: refused from the plan, before decoding: {r.elapsed:.2f} s"
        print(f"{path}: 413 in {r.elapsed * 1000:.0f} ms: {text}")
        assert r.header("x-cache") == "MISS"
        again = c.get(path)
        assert _budget_error(again, path, "limits.max_request_memory") == text
        assert again.header("x-cache") in HITS, f"a budget 413 is remembered: {again.headers}"
        ok, im = c.image(f"/w:300/{PHOTO_12MP}")
        assert ok.status == 200 and im.size[0] == 300, "the worker keeps serving"
    assert set(disk_stack.worker_pids()) == set(workers), "no worker died or was replaced"
    _assert_nothing_partial(disk_stack.disk)


def test_a_50mp_png_thumbnail_is_admitted_and_stays_small(make_stack, big_png):
    s = make_stack(workers=1)
    c = s.client()
    ok, _ = c.image("/w:10/pillow_hopper.jpg")  # the worker is up and has served once
    assert ok.status == 200
    [pid] = s.wait_workers(1)
    before = _vm(pid, "VmHWM")
    path = f"/rs:300:300/{big_png}"
    r, im = c.image(path)
    assert r.status == 200 and im.size == (300, 234), r.describe()
    px = im.convert("RGB").getpixel((150, 117))
    assert abs(px[0] - 128) < 12 and abs(px[2] - 90) < 3, f"the gradient's middle: {px}"
    after = _vm(pid, "VmHWM")
    grown = after - before
    print(f"50 MP PNG -> 300 px: worker VmHWM {before >> 20} MiB -> {after >> 20} MiB (+{grown >> 20} MiB)")
    # Decoded whole, the source alone is 200 MB; read row by row it is never held.
    assert after < before + (256 << 20), f"peak RSS grew by {grown >> 20} MiB, more than the budget"
    assert grown < 64 << 20, f"peak RSS grew by {grown >> 20} MiB: the source was held whole"
    # A 50 MP source without a leading resize is decoded whole: planned, and refused for memory.
    whole = c.get(f"/gs/{big_png}")
    _budget_error(whole, f"/gs/{big_png}", "limits.max_request_memory")
    assert whole.elapsed < 1.0


def test_lower_limits_refuse_a_normal_request(make_stack):
    s = make_stack(workers=1, extra_args=["--set", "limits.max_request_memory=32MiB",
                                          "--set", "limits.max_request_work=25"])
    c = s.client()
    ok, im = c.image(f"/rs:300:300/{PHOTO_12MP}")
    assert im.size == (300, 225), "a thumbnail of the 12 MP photo fits in 32 MiB (DCT scaling)"
    path = f"/gs/{PHOTO_12MP}"  # 36 MB decoded, twice
    text = _budget_error(c.get(path), path, "limits.max_request_memory")
    assert "(32 MiB)" in text, text
    path = f"/rs:1000:1000/f:png/{PHOTO_12MP}"
    r = c.get(path)
    text = _budget_error(r, path, "limits.max_request_work")
    assert "megapixel-passes" in text and "(25)" in text, text


def test_output_over_max_output_bytes_is_413_and_remembered(make_stack, tmp_path):
    disk = tmp_path / "cache"
    s = make_stack(workers=1, extra_args=["--set", "limits.max_output_bytes=200KiB",
                                          "--set", f"cache.disk_path={disk}"])
    c = s.client()
    ok, im = c.image(f"/w:400/{PHOTO_12MP}")
    assert len(ok.body) < 200 << 10 and im.size[0] == 400
    path = f"/w:1200/f:png/{PHOTO_12MP}"
    first = c.get(path)
    text = _budget_error(first, path, "limits.max_output_bytes")
    assert "(200 KiB)" in text and "the result is" in text, text
    again = c.get(path)
    assert _budget_error(again, path, "limits.max_output_bytes") == text
    assert again.header("x-cache") in HITS, again.headers
    assert again.elapsed < 1.0, "remembered: not encoded again"
    after, _ = c.image(f"/w:300/{PHOTO_12MP}")
    assert after.status == 200
    _assert_nothing_partial(disk)
