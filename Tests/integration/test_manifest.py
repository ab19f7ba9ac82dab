"""Every file of shared/corpus/MANIFEST.tsv through nginx and kiln.

- `DECODE WxH` rows: 200 and Pillow decodes the body at W×H. Output is PNG (`f:png`,
  lossless) at the source size; sources above 1 MP are scaled down by `w:` so that PNG
  encoding stays fast, and the height is checked against the aspect ratio.
- `ORIENT n -> displayed WxH` rows: kiln applies EXIF orientation, so the *displayed* size is
  expected (and the pixels are compared with the upright original, see the oracle test).
- `REJECT-*` and `CORRUPT-WARN` rows: a 4xx, never a 5xx, with a one-line text/plain reason.
  Kiln's policy is strict (libjpeg warnings and truncation are errors), so CORRUPT-WARN
  rows are rejected too; the exact statuses of the contract are checked separately.
- No worker may crash on any of it: the worker PIDs after the sweep are the ones before.

Expectations were measured with Debian 12's libjpeg-turbo 2.1.5, libpng 1.6.39,
libwebp 1.2.4 and libmagic 5.44 (shared/corpus/README.md).
"""
from __future__ import annotations

import math

import pytest

from helpers import ManifestRow, assert_plain_error, load_manifest, CORPUS

ROWS = load_manifest()  # raises (collection error) when shared/ is missing

# Issue 12 (animation): MANIFEST.tsv (shared/, read-only) predates GIF input and animated output.
# These rows are overridden here: GIF now decodes (the first frame for still outputs such as the
# f:png of this test), and the animation bomb written as a still (`f:png`) is its first frame
# alone, one 16 MP canvas, which no limit refuses; animated, the same file is refused with a 413
# naming limits.max_animation_frames (test_animation.py checks that and the truncated WebP).
OVERRIDES = {
    "pillow_hopper.gif": "DECODE 128x128 (GIF input, issue 12)",
    "webp_anim_bomb_4000x4000_500frames.webp": "DECODE 4000x4000 (first frame; animated: 413, test_animation.py)",
    # Issue 38 (more inputs): BMP is decoded (BMPDecoder), as KilnCodecsTests' Corpus.overrides says too.
    "pillow_hopper.bmp": "DECODE 128x128 (BMP input, issue 38)",
    # Issue 38 (SVG in): an SVG is sanitised and drawn (test_svg.py has the hostile ones).
    "drawing.svg": "DECODE 64x64 (SVG input, issue 38: sanitised, then drawn by librsvg)",
}
ROWS = [ManifestRow(r.file, r.family, OVERRIDES.get(r.file, r.expected), r.detail) for r in ROWS]
BY_FILE = {r.file: r for r in ROWS}

# Statuses the contract gives for each kind of rejection.
REJECT_STATUS = {
    "REJECT-TYPE": 415,     # not JPEG/PNG/WebP by content (libmagic)
    "REJECT-LIMIT": 413,    # over 50 MP, or frames x canvas over the animation budget
    "REJECT-CORRUPT": 422,  # decoder error
    "CORRUPT-WARN": 422,    # strict policy: libjpeg warnings are errors
}


@pytest.fixture(scope="module")
def workers_before(stack):
    pids = stack.wait_workers()
    assert len(pids) == stack.workers, f"expected {stack.workers} workers, found {pids}"
    return pids


def decode_url(row) -> tuple[str, tuple[int, int], bool]:
    """URL, expected output size, and whether the height may be off by one (scaled)."""
    w, h = row.expected_size
    if w * h <= 1_000_000:
        return f"/f:png/{row.file}", (w, h), False
    k = math.ceil(math.sqrt(w * h / 250_000))
    tw = w // k
    return f"/w:{tw}/f:png/{row.file}", (tw, round(h * tw / w)), True


@pytest.mark.parametrize("row", ROWS, ids=[r.file for r in ROWS])
def test_manifest_row(client, workers_before, row):
    if row.category == "DECODE":
        url, (ew, eh), scaled = decode_url(row)
        r, im = client.image(url, timeout=90)
        assert r.content_type == "image/png", f"{url}: {r.describe()}"
        what = "displayed size (EXIF orientation applied)" if row.oriented else "decoded size"
        if scaled:
            assert im.width == ew and abs(im.height - eh) <= 1, \
                f"{url}: got {im.size}, expected {ew}x{eh}±1 ({what} {row.expected_size} scaled)"
        else:
            assert im.size == (ew, eh), f"{url}: got {im.size}, expected {ew}x{eh} ({what}); {row.expected}"
    else:
        assert row.category in REJECT_STATUS, f"unknown expectation {row.expected!r}"
        url = f"/f:png/{row.file}"
        r = client.get(url, timeout=60)
        assert 400 <= r.status < 500, f"{url} ({row.expected}): expected a 4xx, got {r.describe()}"
        assert_plain_error(r, url)
        assert r.elapsed < 20, f"{url}: took {r.elapsed:.1f}s to reject"


REJECTS = [r for r in ROWS if r.category != "DECODE"]


@pytest.mark.parametrize("row", REJECTS, ids=[r.file for r in REJECTS])
def test_manifest_reject_status(client, row):
    """The contract's status for each kind: 415 type, 413 limits, 422 corrupt (strict)."""
    url = f"/w:100/{row.file}"
    r = client.get(url, timeout=60)
    assert r.status == REJECT_STATUS[row.category], f"{url} ({row.expected}): {r.describe()}"


ORIENTED = [r for r in ROWS if r.file.startswith("pillow_hopper_orientation_")]


@pytest.mark.parametrize("row", ORIENTED, ids=[r.file for r in ORIENTED])
def test_orientation_pixels(client, row):
    """Pixel oracle from shared/corpus/README.md: with orientation applied, the mean absolute
    difference to the upright pillow_hopper.jpg is about 5 (0-255); without, 59-82."""
    import numpy as np
    from PIL import Image

    ref = np.asarray(Image.open(CORPUS / "pillow_hopper.jpg").convert("RGB"), dtype=np.int16)
    _, im = client.image(f"/f:png/{row.file}")
    got = np.asarray(im.convert("RGB"), dtype=np.int16)
    assert got.shape == ref.shape
    mad = float(np.abs(got - ref).mean())
    assert mad < 20, f"{row.file}: mean abs difference {mad:.1f} to the upright image (orientation not applied?)"


def test_manifest_sweep_left_workers_alive(stack, workers_before):
    """Runs after the sweep (file order): no worker crashed or was replaced."""
    after = stack.worker_pids()
    assert after == workers_before, (f"worker PIDs changed during the corpus sweep: {workers_before} -> {after} "
                                     f"(a worker crashed or was restarted)")
