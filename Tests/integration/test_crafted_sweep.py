"""A crafted-input sweep over every decoder (issue 25, "Done when"), through `kiln process`.

Each file lies about its size (HEIC/AVIF `ispe`, grid descriptors, WebP RIFF/chunk sizes, a JPEG
or PNG header far over the limits), is a grid, has GIF frames far larger than their canvas, or is
cut short. For each: the answer is 200, 413 or 422 (never 500); the process's peak RSS stays
within `limits.max_request_memory` (lowered here to 48 MiB, so that a decoder which trusts a
lying header overshoots it clearly) plus MARGIN for the process itself (libraries, allocator);
and no file takes anywhere near a render deadline (TIME_BOUND, over 10x what any takes now).

Before the fix (commit 64d7144): the HEIC with 100x100 `ispe` over a 4000x4000 image peaked at
110 MiB (109 MiB in a worker through nginx), the AVIF one was served as a 200 at the fake size,
and the GIFs with a 65535x65535 frame or five 16000x16000 frames on a 100x100 canvas ran into the
20 s kill (37 s and 19.6 s alone).
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

import craftedfiles as cf
import hostilefiles as hf
from helpers import KILN_BIN

BUDGET_MIB = 48
MARGIN_MIB = 40       # kiln process with libheif/libavif mapped: about 25 MiB on a tiny file
TIME_BOUND = 5.0      # seconds; every case takes well under 0.5 s now
OK = {200, 413, 415, 422}   # 415: bytes libmagic does not call an image (a crafted ICO)


def run(src: Path, spec: str, out: Path) -> tuple[int, int, float, str]:
    """(HTTP status, peak RSS in KiB, seconds, stderr) of `kiln process src spec out`."""
    started = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "maxrss=%M", str(KILN_BIN), "process",
                            "--set", f"limits.max_request_memory={BUDGET_MIB}MiB", str(src), spec, str(out)],
                           capture_output=True, text=True, timeout=4 * TIME_BOUND, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 0, 0, time.monotonic() - started, "killed at 4 x TIME_BOUND"
    elapsed = time.monotonic() - started
    rss = int(re.search(r"maxrss=(\d+)", p.stderr).group(1))
    if p.returncode == 0:
        return 200, rss, elapsed, p.stderr
    m = re.search(r"\(HTTP (\d{3})\)", p.stderr)
    return (int(m.group(1)) if m else 500), rss, elapsed, p.stderr


@pytest.fixture(scope="module")
def crafted(tmp_path_factory) -> dict[str, tuple[bytes, set[int]]]:
    """name -> (file, the statuses allowed for it)."""
    work = tmp_path_factory.mktemp("crafted")
    files: dict[str, tuple[bytes, set[int]]] = {}

    big_heic = cf.heic(work, 4000, "big")
    files["heic_ispe_100_over_4000"] = (cf.patch_ispe(big_heic, 100, 100), {422})
    files["heic_truncated"] = (big_heic[:len(big_heic) // 2], {422})
    small_heic = cf.heic(work, 256, "small")
    files["heic_honest"] = (small_heic, {200})
    files["heic_ispe_bigger_than_coded"] = (cf.patch_ispe(small_heic, 4000, 4000), {413, 422})

    big_avif = cf.avif(work, 4000, "big")
    files["avif_ispe_100_over_4000"] = (cf.patch_ispe(big_avif, 100, 100), {422})
    files["avif_truncated"] = (big_avif[:len(big_avif) // 2], {422})
    grid = cf.avif(work, 1024, "grid", grid="2x2")
    files["avif_grid_honest"] = (grid, {200})
    # The tiles' ispe (one property shared by the four 512x512 tiles) says 64x64: dav1d refuses
    # the frames (its frame size limit is the largest tile's ispe).
    files["avif_grid_tiles_lie"] = (cf.patch_ispe(grid, 64, 64, only=(512, 512)), {422})
    files["avif_grid_all_lie"] = (cf.patch_ispe(grid, 128, 128), {422})

    files["gif_frame_65535_on_100"] = (cf.gif((100, 100), [(65535, 65535)]), {200})
    files["gif_frame_65535_interlaced"] = (cf.gif((100, 100), [(65535, 65535)], interlaced=True), {413})
    files["gif_5_frames_16000"] = (cf.gif((100, 100), [(16000, 16000)] * 5), {200})
    files["gif_frame_lzw_cut_short"] = (cf.gif((100, 100), [(4000, 4000)], lzw=False), {422})
    one = cf.gif((64, 64), [(64, 64)])
    files["gif_truncated"] = (one[:len(one) - 8], {422})

    for name, data in hf.webp_lying_sizes().items():
        files[f"webp_{name}"] = (data, OK)
    files["webp_truncated"] = (hf.small_webp()[:60], {422})
    jpeg = hf.small_jpeg()
    sof = jpeg.find(b"\xff\xc0")
    files["jpeg_sof_60000"] = (jpeg[:sof + 5] + (60000).to_bytes(2, "big") + (60000).to_bytes(2, "big") + jpeg[sof + 9:], {413, 422})
    files["jpeg_truncated"] = (jpeg[:len(jpeg) // 2], {200, 422})
    png = hf.small_png()
    import struct
    import zlib
    ihdr = png[16:29]
    huge = struct.pack(">II", 50000, 50000) + ihdr[8:]
    files["png_ihdr_50000"] = (png[:16] + huge + struct.pack(">I", zlib.crc32(b"IHDR" + huge)) + png[33:], {413})
    files["png_truncated"] = (png[:len(png) // 2], {422})

    # Issue 38's inputs: sizes that lie, bombs, truncations.
    files.update(new_inputs(work))

    for name, (data, _) in files.items():
        (work / name).write_bytes(data)
    files["_dir"] = (str(work).encode(), set())
    return files


def tiff(width: int, height: int, pixels: bytes = b"\x80" * 64, pages: int = 1) -> bytes:
    """A little-endian grey TIFF whose tags say width x height over `pixels` (one strip), `pages`
    directories chained (each the same)."""
    import struct
    entries = lambda offset: [(256, 4, 1, width), (257, 4, 1, height), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
                              (273, 4, 1, offset), (278, 4, 1, height), (279, 4, 1, len(pixels))]
    data_at = 8
    out = bytearray(b"II*\x00" + struct.pack("<I", data_at + len(pixels)) + pixels)
    for page in range(pages):
        ifd = len(out)
        items = entries(data_at)
        nxt = ifd + 2 + 12 * len(items) + 4 if page + 1 < pages else 0
        out += struct.pack("<H", len(items))
        for tag, kind, count, value in items:
            out += struct.pack("<HHII", tag, kind, count, value) if kind == 4 else struct.pack("<HHIHH", tag, kind, count, value, 0)
        out += struct.pack("<I", nxt)
    return bytes(out)


def new_inputs(work: Path) -> dict[str, tuple[bytes, set[int]]]:
    import struct
    import subprocess as sp
    from PIL import Image
    files: dict[str, tuple[bytes, set[int]]] = {}
    files["tiff_honest_8x8"] = (tiff(8, 8), {200})
    files["tiff_100000_square"] = (tiff(100_000, 100_000), {413})
    files["tiff_2000_pages"] = (tiff(8, 8, pages=2000), {422})
    files["tiff_strip_cut_short"] = (tiff(64, 64), {200, 422})   # 64 bytes of a 4096-byte strip
    bmp = __import__("io").BytesIO()
    Image.new("RGB", (64, 64), (200, 30, 40)).save(bmp, "BMP")
    bmp = bmp.getvalue()
    files["bmp_100000_square"] = (bmp[:18] + struct.pack("<ii", 100_000, 100_000) + bmp[26:], {413})
    files["bmp_truncated"] = (bmp[:len(bmp) // 2], {422})
    # Entries that look like an icon's (libmagic needs a plausible first entry to say ICO).
    entry = struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, 1128, 6 + 16 * 65535)
    files["ico_65535_entries"] = (struct.pack("<HHH", 0, 1, 65535) + entry * 64, {415, 422})
    files["ico_entry_beyond_the_file"] = (struct.pack("<HHH", 0, 1, 1) + struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, 1 << 30, 22)
                                          + b"\x00" * 64, {415, 422})
    solid = work / "solid2000.png"
    Image.new("RGB", (2000, 2000), (30, 60, 90)).save(solid)
    jxl = work / "solid2000.jxl"
    sp.run(["cjxl", "-d", "0", "-e", "1", str(solid), str(jxl)], check=True, capture_output=True, timeout=120)
    big = jxl.read_bytes()
    files["jxl_2000_square_in_a_few_bytes"] = (big, {200, 413})   # 4 MP in a few hundred bytes: priced, not trusted
    files["jxl_truncated"] = (big[:len(big) // 2], {413, 422})   # its header still prices it
    files["svg_100000_square"] = (b'<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"/>', {200, 413})
    files["svg_use_bomb"] = (b'<svg xmlns="http://www.w3.org/2000/svg"><defs><g id="a"><rect/></g>'
                             + b"".join(b'<g id="%s">' % (b"b%d" % n) + (b'<use href="#%s"/>' % (b"a" if n == 0 else b"b%d" % (n - 1))) * 10
                                        + b"</g>" for n in range(9)) + b'</defs><use href="#b8"/></svg>', {413})
    return files


SPECS = {"gif_5_frames_16000": ["frame:4/f:png"]}


def test_crafted_inputs_stay_within_their_plan(environment_ok, crafted):
    work = Path(crafted["_dir"][0].decode())
    failures = []
    report = []
    for name, (_, allowed) in crafted.items():
        if name == "_dir":
            continue
        for spec in SPECS.get(name, []) + ["w:50/f:png", "w:10/f:png"]:
            status, rss, elapsed, stderr = run(work / name, spec, work / f"{name}.out.png")
            report.append(f"{name} {spec}: {status}, {rss // 1024} MiB, {elapsed:.2f} s")
            if status not in OK or status not in allowed:
                failures.append(f"{name} {spec}: HTTP {status}, expected {sorted(allowed)}: {stderr.strip()[-300:]}")
            if rss > (BUDGET_MIB + MARGIN_MIB) * 1024:
                failures.append(f"{name} {spec}: peak RSS {rss // 1024} MiB over {BUDGET_MIB} + {MARGIN_MIB} MiB")
            if elapsed > TIME_BOUND:
                failures.append(f"{name} {spec}: {elapsed:.1f} s (bound {TIME_BOUND} s)")
    print("\n".join(report))
    assert not failures, "\n".join(failures)


def _vm_hwm(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for {pid}")


def test_lying_files_through_nginx_keep_the_worker_within_its_plan(make_stack, root, crafted):
    """The probe's case through nginx: each new width is a new cache key, so every request reaches
    the decoder; the one worker's VmHWM stays within the budget plus MARGIN, every answer is a
    422 (or the clipped GIF's 200), none near the render deadline."""
    work = Path(crafted["_dir"][0].decode())
    names = ["heic_ispe_100_over_4000", "avif_ispe_100_over_4000", "avif_grid_tiles_lie", "gif_frame_65535_on_100",
             "tiff_100000_square", "tiff_2000_pages", "bmp_100000_square", "jxl_2000_square_in_a_few_bytes", "svg_use_bomb"]
    folder = root / "crafted"
    folder.mkdir(exist_ok=True)
    os.chmod(folder, 0o755)
    for name in names:
        (folder / name).write_bytes((work / name).read_bytes())
        os.chmod(folder / name, 0o644)
    s = make_stack(workers=1, extra_args=["--set", f"limits.max_request_memory={BUDGET_MIB}MiB"])
    c = s.client()
    [pid] = s.wait_workers(1)
    for name in names:
        allowed = crafted[name][1]
        for width in (40, 41, 42):
            r = c.get(f"/w:{width}/f:png/crafted/{name}")
            peak = _vm_hwm(pid)
            print(f"{name} w:{width}: {r.status} in {r.elapsed:.2f} s, worker VmHWM {peak >> 20} MiB")
            assert peak <= (BUDGET_MIB + MARGIN_MIB) << 20, f"{name} w:{width}: worker peak {peak >> 20} MiB"
            assert r.status in allowed, f"{name} w:{width}: {r.describe()}"
            assert r.elapsed < TIME_BOUND, f"{name} w:{width}: {r.elapsed:.1f} s"
    assert s.worker_pids() == [pid], "the worker was not replaced"
