"""Watermarks (issue 26 §1) through nginx: `[watermarks]` files of the operator drawn with
`wm:<name>:<opacity>:<position>:<x>:<y>:<scale>` on the final image. Every source and watermark
is made here with Pillow; outputs are PNG (or lossless WebP) where pixels are compared exactly.

Tolerances: the blend rounds once per channel, so a lossless output is within 1 of the blend
computed here in premultiplied float (0 for opaque marks at full opacity); lossy outputs at
q:95 are checked inside flat areas within 6 (JPEG, WebP) or 8 (AVIF), and the JPEG of a small
mark at its centre within 12 (chroma subsampling around a hard red edge)."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageSequence

from helpers import KILN_BIN, assert_plain_error
from stack import running_stack

W, H = 200, 120          # flat source
MW, MH = 20, 10          # the red mark
FLAT = (40, 80, 120)
RED = (255, 0, 0)


def save(im: Image.Image, path: Path) -> Path:
    im.save(path)
    os.chmod(path, 0o644)
    return path


def arr(im: Image.Image, mode: str = "RGB") -> np.ndarray:
    return np.asarray(im.convert(mode), dtype=np.float64)


@pytest.fixture(scope="module")
def marks(tmp_path_factory) -> dict[str, Path]:
    """The watermark files: an opaque red block, and a translucent gradient (alpha 0..255)."""
    d = tmp_path_factory.mktemp("marks")
    os.chmod(d, 0o755)
    grad = np.zeros((40, 64, 4), dtype=np.uint8)
    grad[..., 0] = np.linspace(0, 255, 64, dtype=np.uint8)[None, :]
    grad[..., 1] = 200
    grad[..., 2] = np.linspace(255, 0, 40, dtype=np.uint8)[:, None]
    grad[..., 3] = np.linspace(0, 255, 64, dtype=np.uint8)[None, :]
    return {
        "red": save(Image.new("RGBA", (MW, MH), RED + (255,)), d / "red.png"),
        "grad": save(Image.fromarray(grad, "RGBA"), d / "grad.png"),
    }


@pytest.fixture(scope="module")
def sources(root) -> str:
    """Sources in the served root: a flat RGB PNG, a transparent PNG, a 3-frame GIF."""
    folder = root / "marked"
    folder.mkdir(exist_ok=True)
    os.chmod(folder, 0o755)
    save(Image.new("RGB", (W, H), FLAT), folder / "flat.png")
    save(Image.new("RGBA", (W, H), (0, 0, 0, 0)), folder / "clear.png")
    colours = [(0, 0, 255), (0, 255, 0), (255, 255, 0)]
    frames = [Image.new("RGB", (W, H), c) for c in colours]
    frames[0].save(folder / "anim.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
    os.chmod(folder / "anim.gif", 0o644)
    return "marked"


@pytest.fixture(scope="module")
def wm_stack(root, marks, sources):
    yield from running_stack(root=root, workers=2, extra_args=[
        "--set", f"watermarks.logo={marks['red']}", "--set", f"watermarks.grad={marks['grad']}",
        "--set", "presets.branded=w:100/wm:logo:1:se"])


@pytest.fixture
def client(wm_stack):
    return wm_stack.client()


def red_box(a: np.ndarray) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1) of the pure red pixels, exclusive ends."""
    mask = (a[..., 0] == 255) & (a[..., 1] == 0) & (a[..., 2] == 0)
    if not mask.any():
        return None
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


# --- placement ------------------------------------------------------------------------------

@pytest.mark.parametrize("gravity,x,y", [
    ("nw", 5, 3), ("north", (W - MW) // 2 + 5, 3), ("ne", W - MW - 5, 3),
    ("west", 5, (H - MH) // 2 + 3), ("center", (W - MW) // 2 + 5, (H - MH) // 2 + 3), ("east", W - MW - 5, (H - MH) // 2 + 3),
    ("sw", 5, H - MH - 3), ("south", (W - MW) // 2 + 5, H - MH - 3), ("se", W - MW - 5, H - MH - 3),
])
def test_every_gravity_places_the_mark(client, sources, gravity, x, y):
    _, im = client.image(f"/wm:logo:1:{gravity}:5:3/f:png/{sources}/flat.png")
    a = arr(im)
    assert red_box(a) == (x, y, x + MW, y + MH), gravity
    # Everything else is the source, untouched.
    outside = np.ones((H, W), dtype=bool)
    outside[y:y + MH, x:x + MW] = False
    assert (a[outside] == FLAT).all(), gravity


def test_dpr_multiplies_the_offsets_and_position_in_the_url_does_not_matter(client, sources):
    _, a = client.image(f"/dpr:2/wm:logo:1:nw:5:3/f:png/{sources}/flat.png")
    assert red_box(arr(a)) == (10, 6, 10 + MW, 6 + MH)
    r1 = client.get(f"/wm:logo:1:se/w:100/f:png/{sources}/flat.png")
    r2 = client.get(f"/w:100/wm:logo:1:se/f:png/{sources}/flat.png")
    assert r1.status == r2.status == 200 and r1.body == r2.body
    assert r1.header("etag") == r2.header("etag")
    # On the resized image: the mark keeps its own size in the corner of the 100x60 result.
    assert red_box(arr(Image.open(io.BytesIO(r1.body)))) == (100 - MW, 60 - MH, 100, 60)


def test_scale_is_relative_to_the_output_width(client, sources):
    _, im = client.image(f"/wm:logo:1:nw:0:0:0.5/f:png/{sources}/flat.png")
    a = arr(im)
    # 100x50 after Lanczos resampling of a flat block: the inside stays pure red.
    assert (a[2:48, 2:98] == RED).all()
    assert (a[:, 102:] == FLAT).all() and (a[52:, :] == FLAT).all()


# --- blending -------------------------------------------------------------------------------

def expected_blend(dst: np.ndarray, mark: np.ndarray, opacity: float) -> np.ndarray:
    """Source-over in premultiplied space onto an opaque image."""
    sa = mark[..., 3:4] / 255 * opacity
    premult = mark[..., :3] * (mark[..., 3:4] / 255) * opacity
    return premult + dst * (1 - sa)


def test_half_opacity_matches_the_computed_blend(client, sources, marks):
    _, im = client.image(f"/wm:grad:0.5:nw/f:png/{sources}/flat.png")
    got = arr(im)[:40, :64]
    mark = np.asarray(Image.open(marks["grad"]).convert("RGBA"), dtype=np.float64)
    want = expected_blend(np.full((40, 64, 3), FLAT, dtype=np.float64), mark, 0.5)
    diff = np.abs(got - want)
    assert diff.max() <= 1.0, f"max difference {diff.max()} at {np.unravel_index(diff.argmax(), diff.shape)}"
    # The opaque red at half opacity, exactly: (255 + 40) / 2 = 147.5 -> 148, 40, 60.
    _, red = client.image(f"/wm:logo:0.5:nw/f:png/{sources}/flat.png")
    assert tuple(arr(red)[0, 0]) == (148, 40, 60)


def test_transparent_output_keeps_alpha(client, sources):
    _, im = client.image(f"/wm:logo:0.5:center/f:png/{sources}/clear.png")
    a = arr(im, "RGBA")
    x, y = (W - MW) // 2, (H - MH) // 2
    inside = a[y:y + MH, x:x + MW]
    assert (inside[..., 3] == 128).all() and (inside[..., :3] == RED).all()
    outside = a.copy()
    outside[y:y + MH, x:x + MW] = 0
    assert (outside[..., 3] == 0).all()


def test_jpeg_output_is_flattened_after_the_blend(client, sources):
    r, im = client.image(f"/wm:logo:0.5:center/bg:ffffff/f:jpeg/q:95/{sources}/clear.png")
    assert r.content_type == "image/jpeg"
    a = arr(im)
    # Red at alpha 0.5 over white: (255, 128, 128); white elsewhere.
    centre = a[H // 2, W // 2]
    assert np.abs(centre - (255, 127.5, 127.5)).max() <= 12, centre
    assert np.abs(a[5, 5] - (255, 255, 255)).max() <= 2


@pytest.mark.parametrize("fmt,tolerance", [("png", 0), ("webp/ll:1", 0), ("webp/q:95", 6), ("avif/q:95", 8), ("jpeg/q:95", 6)])
def test_every_output_format(client, sources, fmt, tolerance):
    """The mark scaled to 100x50 at half opacity on the flat source: (148, 40, 60) inside, the
    source outside, in every format Kiln writes (lossy ones within `tolerance`)."""
    r, im = client.image(f"/wm:logo:0.5:nw:0:0:0.5/f:{fmt}/{sources}/flat.png")
    assert r.content_type == "image/" + fmt.split("/")[0]
    a = arr(im)
    assert np.abs(a[10:40, 10:90] - (148, 40, 60)).max() <= tolerance, fmt
    assert np.abs(a[70:, 110:] - FLAT).max() <= tolerance, fmt


@pytest.mark.parametrize("fmt", ["png", "webp/ll:1"])
def test_transparent_outputs_blend_alpha(client, sources, fmt):
    _, im = client.image(f"/wm:logo:0.5:nw:0:0:0.5/f:{fmt}/{sources}/clear.png")
    a = arr(im, "RGBA")
    assert (a[:50, :100] == (255, 0, 0, 128)).all(), fmt
    assert (a[:, 100:, 3] == 0).all() and (a[50:, :, 3] == 0).all(), fmt


def test_tiles_cover_the_image(client, sources):
    _, im = client.image(f"/wm:logo:1:tile:10:10/f:png/{sources}/flat.png")
    red = (arr(im) == RED).all(axis=2)
    # Columns start every 30 px (0, 30, ..., 180): 7; rows every 20 px (0, ..., 100): 6.
    def runs(line: np.ndarray) -> int:
        return int(np.count_nonzero(np.diff(np.concatenate([[0], line.astype(int)])) == 1))
    assert runs(red[0]) == 7
    assert runs(red[:, 0]) == 6
    assert red.sum() == 7 * 6 * MW * MH


def test_every_frame_of_an_animation(client, sources):
    r = client.get(f"/wm:logo:1:se/f:webp/ll:1/{sources}/anim.gif")
    assert r.status == 200 and r.content_type == "image/webp", r.describe()
    frames = [f.convert("RGB").copy() for f in ImageSequence.Iterator(Image.open(io.BytesIO(r.body)))]
    assert len(frames) == 3
    for i, f in enumerate(frames):
        assert red_box(arr(f)) == (W - MW, H - MH, W, H), f"frame {i}"
    assert len({tuple(arr(f)[0, 0]) for f in frames}) == 3


def test_presets_may_carry_a_watermark(client, sources):
    _, im = client.image(f"/pr:branded/f:png/{sources}/flat.png")
    assert red_box(arr(im)) == (100 - MW, 60 - MH, 100, 60)


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,words", [
    ("wm:nope", "nope"),
    ("wm:logo:1.5", "opacity"),
    ("wm:logo:-1", "opacity"),
    ("wm:logo:0.5:smart", "position"),
    ("wm:logo:1:se:5", "x and y"),
    ("wm:evil.example", "no watermark named"),
])
def test_bad_watermarks_are_400(client, sources, spec, words):
    path = f"/{spec}/f:png/{sources}/flat.png"
    for _ in range(2):  # the same answer again: nothing was cached or broken
        r = client.get(path)
        assert r.status == 400, r.describe()
        assert_plain_error(r, path)
        assert words in r.body.decode(), r.body
    assert client.get(f"/wm:logo/f:png/{sources}/flat.png").status == 200


# --- identity, reload, CLI ------------------------------------------------------------------

def test_replaced_file_gives_a_new_etag_after_reload(make_stack, root, sources, tmp_path):
    """The file is read once per worker: replacing it changes nothing until the workers are
    renewed (SIGHUP), then the key and ETag change with its bytes."""
    os.chmod(tmp_path, 0o755)
    mark = save(Image.new("RGBA", (MW, MH), RED + (255,)), tmp_path / "mark.png")
    s = make_stack(workers=1, extra_args=["--set", f"watermarks.logo={mark}"])
    c = s.client()
    path = f"/wm:logo:1:nw/f:png/{sources}/flat.png"
    first = c.get(path)
    assert first.status == 200 and first.header("etag")
    save(Image.new("RGBA", (MW, MH), (0, 0, 255, 255)), tmp_path / "mark.new.png").rename(mark)
    same = c.get(path)
    assert same.header("etag") == first.header("etag") and same.body == first.body
    old = set(s.worker_pids())
    os.kill(s.master_pid, signal.SIGHUP)
    s.wait_workers(1, timeout=10, exclude=old)
    deadline = time.monotonic() + 10
    while True:
        r = c.get(path)
        if r.status == 200 and r.header("etag") != first.header("etag"):
            break
        assert time.monotonic() < deadline, f"no new ETag after SIGHUP: {r.describe()}\n{s.logs()}"
        time.sleep(0.05)
    assert tuple(arr(r.image())[0, 0]) == (0, 0, 255)


def test_missing_file_stops_the_start(root, tmp_path):
    from stack import KilnStack, SetupError
    s = KilnStack(root=root, workers=1, with_nginx=False,
                  extra_args=["--set", f"watermarks.logo={tmp_path / 'missing.png'}"])
    try:
        with pytest.raises(SetupError) as e:
            s.start(ready_timeout=10)
        assert "watermarks.logo" in str(e.value)
    finally:
        s.stop(check=False)
        s.cleanup()


def test_kiln_process_renders_the_same_bytes(client, root, sources, marks, tmp_path):
    spec = "w:150/wm:grad:0.5:se:4:4:0.3/f:png"
    served = client.get(f"/{spec}/{sources}/flat.png")
    assert served.status == 200
    out = tmp_path / "out.png"
    p = subprocess.run([str(KILN_BIN), "process", "--set", f"watermarks.grad={marks['grad']}",
                        str(root / sources / "flat.png"), spec, str(out)],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == served.body
