"""Animated sources (issue 12, "Animation"): GIF (giflib) and animated WebP in, animated WebP out.

The GIFs are made here: single-frame GIFs of solid colours written by Pillow, assembled by Debian's
`gifsicle` with per-frame delays, disposal methods, positions, transparency, interlacing and loop
counts. Results are read back with real decoders: Pillow (frames composited, durations, loop) and
libwebp's `webpmux -info`. Compositing is checked on pixels: each frame's expected canvas is
worked out by hand from the GIF rules, and lossless WebP (`ll:1`) keeps the colours exact.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageSequence

from helpers import CORPUS, assert_plain_error

RED, GREEN, BLUE, YELLOW, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 255, 255)
SOLIDS = [RED, GREEN, BLUE, YELLOW]


def gifsicle(*args: str) -> None:
    exe = shutil.which("gifsicle")
    assert exe, "gifsicle is installed by scripts/test (KILN_TEST_APT_PACKAGES)"
    subprocess.run([exe, *args], check=True, capture_output=True, timeout=60)


def solid(path: Path, size: tuple[int, int], colour: tuple[int, int, int]) -> str:
    Image.new("RGB", size, colour).save(path)
    return str(path)


def webpmux_info(data: bytes, tmp: Path) -> str:
    exe = shutil.which("webpmux")
    assert exe, "webpmux (Debian's webp package) is installed by scripts/test"
    f = tmp / "out.webp"
    f.write_bytes(data)
    return subprocess.run([exe, "-info", str(f)], check=True, capture_output=True, text=True, timeout=30).stdout


def frames_of(body: bytes) -> list[tuple[Image.Image, int]]:
    """Composited frames (RGBA) and durations, as Pillow reads them."""
    import io
    im = Image.open(io.BytesIO(body))
    return [(f.convert("RGBA").copy(), f.info.get("duration", 0)) for f in ImageSequence.Iterator(im)]


def close(pixel, colour, tolerance=0) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour)) and (len(pixel) < 4 or pixel[3] == 255)


@pytest.fixture(scope="module")
def gifs(root, tmp_path_factory):
    work = tmp_path_factory.mktemp("anim")
    folder = root / "anim"
    folder.mkdir(exist_ok=True)
    os.chmod(folder, 0o755)
    made: dict[str, Path] = {}

    # Four full frames of distinct colours, delays 10..40 cs, NETSCAPE loop count 3.
    parts = [solid(work / f"s{i}.gif", (40, 30), c) for i, c in enumerate(SOLIDS)]
    out = folder / "solid.gif"
    args = ["--loopcount=3"]
    for i, p in enumerate(parts):
        args += ["-d", str(10 * (i + 1)), p]
    gifsicle(*args, "-o", str(out))
    made["solid"] = out

    # Disposal, offsets, transparency and local palettes on a 40x40 canvas:
    #  f0 red 40x40 (keep); f1 blue 20x20 at 0,0 (restore to previous); f2 green 20x20 at 20,20
    #  (restore to background); f3 a white 10x10 at 0,0 whose white is the transparent colour.
    red = solid(work / "red.gif", (40, 40), RED)
    blue = solid(work / "blue.gif", (20, 20), BLUE)
    green = solid(work / "green.gif", (20, 20), GREEN)
    white = solid(work / "white.gif", (10, 10), WHITE)
    out = folder / "dispose.gif"
    gifsicle("--no-loopcount", "-S", "40x40", "-d", "5", "-D", "none", "-p", "0,0", red,
             "-d", "5", "-D", "previous", "-p", "0,0", blue,
             "-d", "5", "-D", "background", "-p", "20,20", green,
             "-d", "5", "-D", "none", "-p", "0,0", "-t", "#FFFFFF", white, "-o", str(out))
    made["dispose"] = out

    # Interlaced, 16 rows of different colours (row order matters), one frame.
    stripes = Image.new("RGB", (8, 16))
    for y in range(16):
        for x in range(8):
            stripes.putpixel((x, y), (y * 16, 255 - y * 16, (y * 53) % 256))
    plain = work / "stripes.gif"
    stripes.save(plain)
    out = folder / "interlaced.gif"
    gifsicle("--interlace", str(plain), "-o", str(out))
    made["interlaced"] = out
    made["interlaced_reference"] = plain

    # Delays of 0 and 1 cs, loop forever.
    out = folder / "fast.gif"
    gifsicle("--loopcount=forever", "-d", "0", parts[0], "-d", "1", parts[1], "-d", "0", parts[2], "-o", str(out))
    made["fast"] = out

    # Truncated: cut inside the LZW data of the third frame.
    data = made["solid"].read_bytes()
    out = folder / "truncated.gif"
    out.write_bytes(data[: len(data) * 2 // 3])
    made["truncated"] = out

    # Bombs: a 20000x20000 canvas (400 MP) with a 1x1 frame; 150 frames of 10x10; a 2000x2000
    # canvas with 20 tiny frames (80 MP composited).
    dot = solid(work / "dot.gif", (1, 1), RED)
    out = folder / "bomb_canvas.gif"
    gifsicle("-S", "20000x20000", dot, "-o", str(out))
    made["bomb_canvas"] = out
    ten = [solid(work / f"t{i}.gif", (10, 10), SOLIDS[i % 4]) for i in range(4)]
    out = folder / "many_frames.gif"
    gifsicle("-d", "2", *[ten[i % 4] for i in range(150)], "-o", str(out))
    made["many_frames"] = out
    out = folder / "bomb_pixels.gif"
    gifsicle("-S", "2000x2000", "-d", "2", *[ten[i % 4] for i in range(20)], "-o", str(out))
    made["bomb_pixels"] = out

    for p in folder.iterdir():
        os.chmod(p, 0o644)
    return made


def test_gif_to_animated_webp_keeps_frames_timing_loop_and_processes_every_frame(stack, gifs, tmp_path):
    c = stack.client()
    r = c.get("/w:20/flip:h/f:webp/ll:1/anim/solid.gif")
    assert r.status == 200, r.describe()
    assert r.content_type == "image/webp"
    frames = frames_of(r.body)
    assert [d for _, d in frames] == [100, 200, 300, 400]
    for (im, _), colour in zip(frames, SOLIDS):
        assert im.size == (20, 15)
        for xy in [(0, 0), (19, 14), (10, 7)]:
            assert close(im.getpixel(xy), colour), f"frame pixel {xy}: {im.getpixel(xy)} != {colour}"
    info = webpmux_info(r.body, tmp_path)
    assert re.search(r"Number of frames:\s*4", info), info
    # NETSCAPE2.0 loop count 3 = 3 repetitions after the first play = 4 plays (WebP counts plays).
    assert re.search(r"Loop Count\s*:\s*4", info), info
    assert "Canvas size: 20 x 15" in info, info


def test_disposal_offsets_and_transparency_composite_as_browsers_do(stack, gifs):
    c = stack.client()
    r = c.get("/f:webp/ll:1/anim/dispose.gif")
    assert r.status == 200, r.describe()
    frames = [im for im, _ in frames_of(r.body)]
    assert len(frames) == 4 and all(f.size == (40, 40) for f in frames)
    f0, f1, f2, f3 = frames
    assert close(f0.getpixel((5, 5)), RED) and close(f0.getpixel((35, 35)), RED)
    assert close(f1.getpixel((5, 5)), BLUE) and close(f1.getpixel((25, 25)), RED)
    # f1 was "restore to previous": red again under it; f2 drawn at its offset.
    assert close(f2.getpixel((5, 5)), RED) and close(f2.getpixel((25, 25)), GREEN)
    # f2 was "restore to background": its rectangle is transparent; f3's white is the
    # transparent index, so it draws nothing over the red.
    assert f3.getpixel((25, 25))[3] == 0 and f3.getpixel((39, 39))[3] == 0
    assert close(f3.getpixel((5, 5)), RED) and close(f3.getpixel((35, 5)), RED)
    # No NETSCAPE extension: played once.
    assert Image.open(__import__("io").BytesIO(r.body)).info.get("loop") == 1


def test_shape_processors_apply_to_every_frame(stack, gifs):
    c = stack.client()
    for spec in ("rs:20:20:fill/circle", "rs:20:20:fill/rounded:6"):
        r = c.get(f"/{spec}/f:webp/ll:1/anim/solid.gif")
        assert r.status == 200, f"{spec}: {r.describe()}"
        frames = frames_of(r.body)
        assert len(frames) == 4, spec
        for (im, _), colour in zip(frames, SOLIDS):
            assert im.size == (20, 20)
            assert im.getpixel((0, 0))[3] == 0 and im.getpixel((19, 19))[3] == 0, f"{spec}: corner not cut"
            assert close(im.getpixel((10, 10)), colour), f"{spec}: centre {im.getpixel((10, 10))} != {colour}"


def test_interlaced_gif_rows_land_in_place(stack, gifs):
    _, im = stack.client().image("/f:png/anim/interlaced.gif")
    ref = Image.open(gifs["interlaced_reference"]).convert("RGB")
    assert im.convert("RGB").tobytes() == ref.tobytes()


def test_frame_option_picks_a_still_frame(stack, gifs):
    c = stack.client()
    for n, colour in enumerate(SOLIDS):
        r, im = c.image(f"/frame:{n}/f:png/anim/solid.gif")
        assert r.content_type == "image/png"
        assert close(im.convert("RGB").getpixel((3, 3)), colour)
    # Default: the first frame for still outputs.
    _, im = c.image("/f:png/anim/solid.gif")
    assert close(im.convert("RGB").getpixel((3, 3)), RED)
    r = c.get("/frame:4/f:png/anim/solid.gif")
    assert r.status == 400, r.describe()
    assert_plain_error(r)
    assert "4 frames" in r.body.decode()
    # f:webp with frame: is one still frame.
    r, im = c.image("/frame:2/f:webp/ll:1/anim/solid.gif")
    assert getattr(im, "n_frames", 1) == 1 and close(im.convert("RGB").getpixel((1, 1)), BLUE)


def test_gif_without_format_is_animated_webp_and_gif_output_is_refused(stack, gifs):
    c = stack.client()
    r = c.get("/anim/solid.gif")
    assert r.status == 200 and r.content_type == "image/webp", r.describe()
    assert len(frames_of(r.body)) == 4
    # f:auto: WebP when accepted (animated), else a PNG of the first frame.
    r = c.get("/f:auto/anim/solid.gif", headers={"Accept": "image/avif,image/webp,*/*"})
    assert r.status == 200 and r.content_type == "image/webp" and len(frames_of(r.body)) == 4
    r = c.get("/f:auto/anim/solid.gif", headers={"Accept": "image/png,*/*;q=0.5"})
    assert r.status == 200 and r.content_type == "image/png", r.describe()
    # f:gif (issue 38): an animated GIF, all frames, when asked for.
    r = c.get("/f:gif/anim/solid.gif")
    assert r.status == 200 and r.content_type == "image/gif", r.describe()
    im = Image.open(__import__("io").BytesIO(r.body))
    assert im.n_frames == 4 and im.info.get("loop") == 3   # NETSCAPE2.0 count 3, as the source
    r = c.get("/f:svg/anim/solid.gif")
    assert r.status == 400, r.describe()
    assert_plain_error(r)
    assert "svg" in r.body.decode().lower()


def test_gif_delays_zero_and_one_centisecond_are_kept(stack, gifs):
    r = stack.client().get("/f:webp/ll:1/anim/fast.gif")
    assert r.status == 200, r.describe()
    durations = [d for _, d in frames_of(r.body)]
    assert durations == [0, 10, 0], durations  # stored as given; browsers show them for ~100 ms
    assert Image.open(__import__("io").BytesIO(r.body)).info.get("loop") == 0


def test_animated_webp_source_keeps_frames_and_timing(stack, tmp_path):
    source = frames_of((CORPUS / "imagewebp_random_lossy_anim.webp").read_bytes())
    want = [d for _, d in source]
    assert len(want) == 4 and all(d > 0 for d in want)
    r = stack.client().get("/w:50/flip:v/imagewebp_random_lossy_anim.webp")
    assert r.status == 200 and r.content_type == "image/webp", r.describe()
    frames = frames_of(r.body)
    assert [d for _, d in frames] == want
    assert frames[0][0].size == (50, 44)
    info = webpmux_info(r.body, tmp_path)
    assert re.search(r"Number of frames:\s*4", info), info
    assert re.search(r"Loop Count\s*:\s*0", info), info
    # The flip applies per frame: the output's top row is the source's bottom row, scaled.
    for (got, _), (src, _) in zip(frames, source):
        expected = src.convert("RGB").resize((50, 44), Image.LANCZOS).transpose(Image.FLIP_TOP_BOTTOM)
        a, b = got.convert("RGB").tobytes(), expected.tobytes()
        mean = sum(abs(x - y) for x, y in zip(a, b)) / len(a)
        assert mean < 30, f"frame differs from the flipped source by {mean:.1f} on average"


def test_truncated_and_bombs_are_refused_and_the_worker_survives(stack, gifs):
    c = stack.client()
    pids = stack.wait_workers()
    for path, status, needle in [
        ("/w:20/anim/truncated.gif", 422, "truncated"),
        ("/f:png/anim/truncated.gif", 422, "truncated"),
        ("/w:20/anim/bomb_canvas.gif", 413, "pixels"),
        ("/f:png/anim/bomb_canvas.gif", 413, "pixels"),
        ("/w:20/anim/many_frames.gif", 413, "limits.max_animation_frames"),
        ("/w:20/anim/bomb_pixels.gif", 413, "limits.max_animation_pixels"),
        ("/w:20/webp_anim_bomb_4000x4000_500frames.webp", 413, "limits.max_animation_frames"),
        ("/w:20/random_lossy_anim_truncated.webp", 422, ""),
    ]:
        r = c.get(path)
        assert r.status == status, f"{path}: {r.describe()}"
        assert_plain_error(r, path)
        assert needle in r.body.decode(), f"{path}: {r.body!r}"
        _, im = c.image("/w:10/f:png/anim/solid.gif")
        assert im.size == (10, 8)
    assert stack.worker_pids() == pids, "a worker died on a bad animation"


def test_first_frame_mode_answers_one_frame(make_stack, gifs, disk):
    s = make_stack(workers=1, extra_args=["--set", "limits.animation_over_limit=first_frame",
                                          "--set", f"cache.disk_path={disk}"])
    c = s.client()
    r, im = c.image("/w:10/f:webp/anim/many_frames.gif")
    assert r.content_type == "image/webp"
    assert getattr(im, "n_frames", 1) == 1 and close(im.convert("RGB").getpixel((5, 5)), RED, 8)
    # Within the limits the animation stays whole.
    r = c.get("/w:10/f:webp/anim/solid.gif")
    assert r.status == 200 and len(frames_of(r.body)) == 4
    # Refusals leave no entry file or temporary behind in the disk cache.
    r = c.get("/w:20/anim/truncated.gif")
    assert r.status == 422
    leftovers = [p for p in disk.rglob("*") if p.is_file() and p.relative_to(disk).parts[0] == "tmp"]
    assert leftovers == []


def test_animated_avif_out_and_in(stack, gifs):
    """Issue 38: f:avif of an animated GIF is an AV1 sequence with every frame and its delay
    (read back by Pillow's AVIF plugin, libavif), and an animated AVIF source is read frame by
    frame (here written back as animated WebP). f:auto still gives animations WebP."""
    c = stack.client()
    r = c.get("/f:avif/q:90/anim/solid.gif")
    assert r.status == 200 and r.content_type == "image/avif", r.describe()
    im = Image.open(__import__("io").BytesIO(r.body))
    assert im.n_frames == 4
    durations, colours = [], []
    for i in range(im.n_frames):
        im.seek(i)
        colours.append(im.convert("RGB").getpixel((20, 15)))   # loads the frame (and its duration)
        durations.append(im.info.get("duration"))
    assert durations == [100, 200, 300, 400], durations
    for got, want in zip(colours, SOLIDS):
        assert max(abs(a - b) for a, b in zip(got, want)) <= 10, (got, want)
    sequence = stack.root / "anim" / "solid-sequence.avif"
    sequence.write_bytes(r.body)
    os.chmod(sequence, 0o644)
    back = c.get("/f:webp/ll:1/anim/solid-sequence.avif")
    assert back.status == 200 and back.content_type == "image/webp", back.describe()
    assert [d for _, d in frames_of(back.body)] == [100, 200, 300, 400]
    auto = c.get("/f:auto/anim/solid.gif", headers={"Accept": "image/avif,image/webp,*/*"})
    assert auto.content_type == "image/webp" and len(frames_of(auto.body)) == 4
