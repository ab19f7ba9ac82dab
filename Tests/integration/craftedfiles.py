"""Generators of crafted decoder inputs for test_crafted_sweep.py (issue 25): HEIC and AVIF whose
`ispe` (or grid descriptor) lies about the coded size, grids, GIF frames far larger than their
canvas (with real LZW data, so a decoder that reads them spends the time), and truncations.

HEIC and AVIF come from Debian's `heif-enc` and `avifenc` with their boxes patched afterwards;
GIF is written byte by byte here.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

from PIL import Image


def tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is installed by scripts/test (libavif-bin, libheif-examples)"
    return path


def gradient(size: int) -> Image.Image:
    """A size × size RGB gradient (cheap to make, compresses to a few KB)."""
    g = Image.linear_gradient("L").resize((size, size), Image.Resampling.NEAREST)
    return Image.merge("RGB", (g, g.transpose(Image.Transpose.ROTATE_90), Image.new("L", (size, size), 80)))


def boxes_named(data: bytes, kind: bytes) -> list[int]:
    """Offsets of every `kind` box header (the 4CC's position - 4)."""
    out, pos = [], data.find(kind)
    while pos > 0:
        out.append(pos - 4)
        pos = data.find(kind, pos + 4)
    return out


def patch_ispe(data: bytes, width: int, height: int, only: tuple[int, int] | None = None) -> bytes:
    """Every `ispe` box (or those saying `only`) made to announce width × height."""
    out = bytearray(data)
    found = boxes_named(data, b"ispe")
    assert found, "no ispe box"
    patched = 0
    for start in found:
        if only is None or struct.unpack(">II", data[start + 12:start + 20]) == only:
            out[start + 12:start + 20] = struct.pack(">II", width, height)
            patched += 1
    assert patched, f"no ispe box says {only}"
    return bytes(out)


def heic(work: Path, size: int, name: str) -> bytes:
    png, out = work / f"{name}.png", work / f"{name}.heic"
    gradient(size).save(png, compress_level=1)
    subprocess.run([tool("heif-enc"), "-q", "5", "-p", "preset=ultrafast", "-o", str(out), str(png)],
                   check=True, capture_output=True, timeout=120)
    return out.read_bytes()


def avif(work: Path, size: int, name: str, grid: str | None = None) -> bytes:
    png, out = work / f"{name}.png", work / f"{name}.avif"
    gradient(size).save(png, compress_level=1)
    extra = ["--grid", grid] if grid else []
    subprocess.run([tool("avifenc"), "-s", "10", "--min", "50", "--max", "63", *extra, str(png), str(out)],
                   check=True, capture_output=True, timeout=120)
    return out.read_bytes()


# ---- GIF -----------------------------------------------------------------------------------

def _lzw_zeros(pixels: int, min_code_size: int = 2) -> bytes:
    """LZW data (GIF variant, LSB first) for `pixels` pixels of index 0, as compact as LZW gets:
    each code is a run of zeros one longer than the last until the table is full (4095), then
    the longest run again and again (about 4090 pixels per 12-bit code), never a clear code."""
    clear = 1 << min_code_size
    eoi = clear + 1
    out = bytearray()
    acc = nbits = 0
    width = min_code_size + 1

    def put(code: int) -> None:
        nonlocal acc, nbits
        acc |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(acc & 255)
            acc >>= 8
            nbits -= 8

    put(clear)
    free, longest, left = eoi + 1, 1, pixels
    while left > 0:
        if free == 4096 and left >= 2 * longest:
            # Table full: the longest run is code 4095, twelve one bits; pairs of it are 24 ones
            # whatever the bit position, so they go in as bytes.
            pairs = left // (2 * longest)
            out.append((acc | (0xFF << nbits)) & 0xFF)
            out.extend(b"\xff" * (3 * pairs - 1))
            acc = (1 << nbits) - 1
            left -= 2 * pairs * longest
            continue
        n = min(longest, left)
        put(0 if n == 1 else eoi - 1 + n)
        left -= n
        if free < 4096:
            # As giflib's encoder: the width grows once the code just assigned needs another bit.
            if free >= 1 << width and width < 12:
                width += 1
            free += 1
            longest += n == longest
    put(eoi)
    if nbits:
        out.append(acc & 255)
    return bytes(out)


def _sub_blocks(data: bytes) -> bytes:
    return b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255] for i in range(0, len(data), 255)) + b"\x00"


def gif(canvas: tuple[int, int], frames: list[tuple[int, int]], interlaced: bool = False, lzw: bool = True) -> bytes:
    """A GIF of `canvas` whose frames (width, height) at 0,0 are all index 0 (black), with real
    LZW data for every pixel unless `lzw` is False (then the data ends after a few codes)."""
    head = b"GIF89a" + struct.pack("<HHBBB", canvas[0], canvas[1], 0x81, 0, 0) + b"\x00\x00\x00\xff\xff\xff\x00\x00\x00\x00\x00\x00"
    body = b""
    for w, h in frames:
        body += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0x40 if interlaced else 0)
        body += b"\x02" + _sub_blocks(_lzw_zeros(w * h if lzw else 1))
    return head + body + b"\x3b"
