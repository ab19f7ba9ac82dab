"""Generators of hostile image files for test_bad_input_more.py (issue 9, "Bad input, once more").

Each builds its file from a small valid image made with Pillow, then bends one structure: chunk
and segment counts, compressed sizes, container lengths, EXIF offsets, scan counts. Nothing is
read from disk, so the tests show exactly what each file contains.
"""
from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def _small_image(size: tuple[int, int] = (32, 24)) -> Image.Image:
    im = Image.new("RGB", size)
    for x in range(size[0]):
        for y in range(size[1]):
            im.putpixel((x, y), (x * 8 % 256, y * 10 % 256, (x + y) * 4 % 256))
    return im


# ---- PNG ---------------------------------------------------------------------------------

def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def small_png() -> bytes:
    buf = io.BytesIO()
    _small_image().save(buf, "PNG")
    return buf.getvalue()


def png_with_chunks_after_ihdr(chunks: bytes) -> bytes:
    """The small PNG with `chunks` (already framed) inserted right after IHDR (8 + 25 bytes)."""
    png = small_png()
    return png[:33] + chunks + png[33:]


def png_many_text_chunks(count: int = 50_000) -> bytes:
    one = png_chunk(b"tEXt", b"Comment\0x")
    return png_with_chunks_after_ihdr(one * count)


def png_huge_iccp(decompressed: int = 50 << 20) -> bytes:
    """An iCCP chunk whose profile inflates to `decompressed` bytes: a header that claims that
    length followed by zeros (a compression bomb of about 1:1000)."""
    header = bytearray(128)
    struct.pack_into(">I", header, 0, decompressed)
    header[12:16] = b"mntr"
    header[16:20] = b"RGB "
    header[20:24] = b"XYZ "
    header[36:40] = b"acsp"
    compressor = zlib.compressobj(9)
    body = compressor.compress(bytes(header))
    zeros = bytes(1 << 20)
    for _ in range(decompressed >> 20):
        body += compressor.compress(zeros)
    body += compressor.flush()
    return png_with_chunks_after_ihdr(png_chunk(b"iCCP", b"bomb\0\0" + body))


def png_ztxt_bomb(decompressed: int = 50 << 20, count: int = 1) -> bytes:
    """`count` zTXt chunks, each inflating to `decompressed` bytes of zeros."""
    compressor = zlib.compressobj(9)
    body = b""
    zeros = bytes(1 << 20)
    for _ in range(decompressed >> 20):
        body += compressor.compress(zeros)
    body += compressor.flush()
    return png_with_chunks_after_ihdr(png_chunk(b"zTXt", b"Comment\0\0" + body) * count)


# ---- JPEG --------------------------------------------------------------------------------

def small_jpeg(progressive: bool = False) -> bytes:
    buf = io.BytesIO()
    _small_image().save(buf, "JPEG", quality=90, progressive=progressive)
    return buf.getvalue()


def jpeg_many_app_segments(count: int = 1000, payload: int = 1000) -> bytes:
    """`count` APPn segments (APP3...APP13 in turn, `payload` bytes each) after SOI."""
    jpeg = small_jpeg()
    segments = bytearray()
    for index in range(count):
        marker = 0xE3 + index % 11
        segments += bytes([0xFF, marker]) + struct.pack(">H", payload + 2) + bytes([index % 251]) * payload
    return jpeg[:2] + bytes(segments) + jpeg[2:]


def jpeg_many_scans(scans: int = 10_000) -> bytes:
    """A progressive JPEG whose first DC scan is followed by `scans` copies of a refinement scan
    (the same SOS and data again and again), then EOI. libjpeg reads each as a new scan."""
    jpeg = small_jpeg(progressive=True)
    # The second SOS starts the second scan; the first scan runs from the first SOS to it.
    first = jpeg.index(b"\xff\xda")
    second = jpeg.index(b"\xff\xda", first + 2)
    third = jpeg.index(b"\xff\xda", second + 2)
    head, scan = jpeg[:second], jpeg[second:third]
    return head + scan * scans + b"\xff\xd9"


def exif_tiff(ifd_offset_patch=None, entries: list[tuple[int, int, int, bytes]] | None = None) -> bytes:
    """Little-endian TIFF bytes: header, IFD0 with `entries` (tag, type, count, 4-byte value),
    then the next-IFD offset (`ifd_offset_patch` or 0)."""
    entries = entries if entries is not None else [(0x0112, 3, 1, struct.pack("<HH", 6, 0))]
    ifd = struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        ifd += struct.pack("<HHI", tag, kind, count) + value
    ifd += struct.pack("<I", ifd_offset_patch or 0)
    return b"II*\x00" + struct.pack("<I", 8) + ifd


def jpeg_with_exif(tiff: bytes) -> bytes:
    jpeg = small_jpeg()
    payload = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + jpeg[2:]


def exif_self_loop() -> bytes:
    """IFD0 whose next-IFD pointer and EXIF sub-IFD pointer (0x8769) both point back at IFD0."""
    entries = [(0x8769, 4, 1, struct.pack("<I", 8)), (0x0112, 3, 1, struct.pack("<HH", 6, 0))]
    return exif_tiff(ifd_offset_patch=8, entries=entries)


def exif_huge_counts() -> bytes:
    """Entries that claim 2^32 - 1 values at offsets far past the end, and an IFD that claims
    65535 entries."""
    entries = [(0x010F, 2, 0xFFFFFFFF, struct.pack("<I", 0x7FFFFFF0)),
               (0x0112, 3, 0xFFFFFFFF, struct.pack("<HH", 6, 0)),
               (0x8769, 4, 0xFFFFFFFF, struct.pack("<I", 0xFFFFFFF0))]
    tiff = bytearray(exif_tiff(entries=entries))
    tiff[8:10] = struct.pack("<H", 0xFFFF)  # IFD0 entry count
    return bytes(tiff)


# ---- WebP --------------------------------------------------------------------------------

def small_webp() -> bytes:
    buf = io.BytesIO()
    _small_image().save(buf, "WEBP", quality=80)
    return buf.getvalue()


def webp_lying_sizes() -> dict[str, bytes]:
    """WebP files whose RIFF or chunk sizes lie, by name."""
    webp = small_webp()
    assert webp[:4] == b"RIFF" and webp[8:12] == b"WEBP", webp[:16]
    riff_size = struct.unpack("<I", webp[4:8])[0]
    chunk_size = struct.unpack("<I", webp[16:20])[0]
    out = {}
    out["riff_bigger_than_file"] = webp[:4] + struct.pack("<I", riff_size + 100_000) + webp[8:]
    out["riff_max"] = webp[:4] + struct.pack("<I", 0xFFFFFFFF) + webp[8:]
    out["riff_odd"] = webp[:4] + struct.pack("<I", riff_size | 1 if riff_size % 2 == 0 else riff_size) + webp[8:]
    out["chunk_bigger_than_file"] = webp[:16] + struct.pack("<I", chunk_size + 100_000) + webp[20:]
    out["chunk_overflows_32bit"] = webp[:16] + struct.pack("<I", 0xFFFFFFF8) + webp[20:]
    # An extended file (VP8X) whose EXIF chunk claims 4 GiB.
    vp8x = b"VP8X" + struct.pack("<I", 10) + bytes([0x08, 0, 0, 0]) + (31).to_bytes(3, "little") + (23).to_bytes(3, "little")
    exif = b"EXIF" + struct.pack("<I", 0xFFFFFFF0) + exif_tiff()
    body = b"WEBP" + vp8x + webp[12:] + exif
    out["vp8x_exif_overflows_32bit"] = b"RIFF" + struct.pack("<I", len(body)) + body
    return out
