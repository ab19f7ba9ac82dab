"""TIFF, BMP, ICO and JPEG XL in (issue 38), through nginx: sniffed by content, decoded, pages
picked with `page:<n>`, out of range a 400; the sources are made here by Pillow and cjxl."""
from __future__ import annotations

import os
import subprocess

import pytest
from PIL import Image

from helpers import assert_plain_error

RED, GREEN, BLUE = (220, 20, 30), (20, 200, 40), (30, 40, 210)


@pytest.fixture(scope="module")
def sources(root, tmp_path_factory):
    folder = root / "formats-in"
    folder.mkdir(exist_ok=True)
    os.chmod(folder, 0o755)
    pages = [Image.new("RGB", (40, 30), c) for c in (RED, GREEN, BLUE)]
    pages[0].save(folder / "scan.tiff", save_all=True, append_images=pages[1:], compression="tiff_lzw")
    Image.new("RGB", (33, 17), GREEN).save(folder / "plain.bmp")
    icon = Image.new("RGBA", (64, 64), BLUE + (255,))
    icon.save(folder / "app.ico", sizes=[(16, 16), (32, 32), (64, 64)])
    work = tmp_path_factory.mktemp("jxl")
    Image.new("RGB", (48, 24), RED).save(work / "red.png")
    subprocess.run(["cjxl", "-d", "0", str(work / "red.png"), str(folder / "red.jxl")], check=True, capture_output=True, timeout=60)
    for f in folder.iterdir():
        os.chmod(f, 0o644)
    return folder


def near(a, b, tolerance=6):
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def test_tiff_pages(client, sources):
    _, first = client.image("/f:png/formats-in/scan.tiff")
    assert first.size == (40, 30) and near(first.convert("RGB").getpixel((5, 5)), RED)
    for page, colour in ((1, GREEN), (2, BLUE)):
        _, im = client.image(f"/page:{page}/f:png/formats-in/scan.tiff")
        assert near(im.convert("RGB").getpixel((5, 5)), colour), (page, im.getpixel((5, 5)))
    r = client.get("/page:3/f:png/formats-in/scan.tiff")
    assert r.status == 400 and b"page:3" in r.body and b"3 pages" in r.body, r.describe()
    assert_plain_error(r)
    r = client.get("/formats-in/scan.tiff")   # read only: JPEG without f:
    assert r.status == 200 and r.content_type == "image/jpeg", r.describe()


def test_bmp_ico_and_jxl(client, sources):
    _, bmp = client.image("/f:png/formats-in/plain.bmp")
    assert bmp.size == (33, 17) and near(bmp.convert("RGB").getpixel((3, 3)), GREEN)
    _, ico = client.image("/f:png/formats-in/app.ico")
    assert ico.size == (64, 64) and near(ico.convert("RGB").getpixel((3, 3)), BLUE)   # the largest entry
    _, small = client.image("/page:0/f:png/formats-in/app.ico")
    assert small.size == (16, 16)   # Pillow writes the entries smallest first
    _, jxl = client.image("/w:24/f:png/formats-in/red.jxl")
    assert jxl.size == (24, 12) and near(jxl.convert("RGB").getpixel((3, 3)), RED)
    info = client.get("/f:json/formats-in/red.jxl")
    assert info.status == 200 and b'"jxl"' in info.body, info.describe()
