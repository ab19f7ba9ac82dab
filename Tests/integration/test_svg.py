"""SVG in (issue 38): rasterised by librsvg at the size asked for, after Kiln's own sanitiser,
through nginx. The hostile SVGs (XXE, billion laughs, external images and styles, huge filters,
deep nesting, <use> bombs and loops) each get a 4xx or a safe raster quickly, and never make a
connection (a listener on loopback counts them) or open a file (a FIFO: opening it to read would
block, and the test watches for a reader while each request runs)."""
from __future__ import annotations

import errno
import io
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from helpers import assert_plain_error


class Listener:
    """A TCP listener on 127.0.0.1 that counts connections (it answers nothing)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self.running = False
        self.thread.join(2)
        self.sock.close()


@pytest.fixture(scope="module")
def traps():
    """The loopback listener and a FIFO in a folder the workers (nobody) can reach."""
    folder = Path(tempfile.mkdtemp(prefix="kiln-svg-trap-"))
    os.chmod(folder, 0o755)
    fifo = folder / "secret"
    os.mkfifo(fifo, 0o666)
    listener = Listener()
    # The traps can see what they watch for: a reader of the FIFO, a connection to the listener.
    assert not fifo_has_reader(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    assert fifo_has_reader(fifo)
    os.close(reader)
    socket.create_connection(("127.0.0.1", listener.port), timeout=2).close()
    deadline = time.monotonic() + 10
    while listener.connections == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert listener.connections == 1
    yield listener, fifo
    listener.close()
    fifo.unlink()
    folder.rmdir()


def fifo_has_reader(fifo: Path) -> bool:
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        assert e.errno == errno.ENXIO, e
        return False
    os.close(fd)
    return True


HALVES = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 20 10">'
          '<rect width="10" height="10" fill="#ff0000"/><rect x="10" width="10" height="10" fill="#0000ff"/></svg>')


def hostile_documents(port: int, fifo: Path) -> dict[str, tuple[str, int]]:
    """name → (document, expected status)."""
    http = f"http://127.0.0.1:{port}"
    levels = '<g id="l0"><rect width="1" height="1"/></g>' + "".join(
        f'<g id="l{n}">' + f'<use href="#l{n - 1}"/>' * 10 + "</g>" for n in range(1, 10))
    blur = '<feGaussianBlur stdDeviation="20"/>' * 60
    return {
        "xxe_file": (f'<!DOCTYPE svg [<!ENTITY x SYSTEM "file://{fifo}">]><svg width="10" height="10"><text>&x;</text></svg>', 415),
        "xxe_http": (f'<!DOCTYPE svg [<!ENTITY x SYSTEM "{http}/xxe">]><svg width="10" height="10"><text>&x;</text></svg>', 415),
        "xxe_parameter": (f'<!DOCTYPE svg [<!ENTITY % p SYSTEM "{http}/dtd"> %p;]><svg width="10" height="10"/>', 415),
        "billion_laughs": ('<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">' + "".join(
            f'<!ENTITY {chr(98 + n)} "' + f"&{chr(97 + n)};" * 10 + '">' for n in range(8))
            + ']><svg width="10" height="10"><text>&i;</text></svg>', 415),
        "external_dtd": (f'<!DOCTYPE svg SYSTEM "{http}/svg.dtd"><svg width="10" height="10"><rect width="5" height="5"/></svg>', 200),
        "image_http": (f'<svg width="10" height="10"><image href="{http}/a.png" width="10" height="10"/></svg>', 200),
        "image_file": (f'<svg xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">'
                       f'<image xlink:href="file://{fifo}" width="10" height="10"/></svg>', 200),
        "image_relative": ('<svg width="10" height="10"><image href="../../etc/passwd" width="10" height="10"/></svg>', 200),
        "stylesheet_pi": (f'<?xml-stylesheet type="text/css" href="{http}/s.css"?><svg width="10" height="10"/>', 200),
        "css_import": (f'<svg width="10" height="10"><style>@import url({http}/i.css); rect {{ fill: url({http}/p) }}</style>'
                       '<rect width="5" height="5"/></svg>', 200),
        "fe_image": (f'<svg width="10" height="10"><filter id="f"><feImage href="{http}/f.png"/></filter>'
                     '<rect filter="url(#f)" width="5" height="5"/></svg>', 200),
        "use_external": (f'<svg width="10" height="10"><use href="{http}/u.svg#a"/><use href="file://{fifo}#a"/></svg>', 200),
        "script_foreign": (f'<svg width="10" height="10" onload="fetch(\'{http}/onload\')"><script href="{http}/s.js"/>'
                           f'<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="{http}/frame"/></foreignObject></svg>', 200),
        "xinclude": (f'<svg xmlns:xi="http://www.w3.org/2001/XInclude" width="10" height="10"><xi:include href="{http}/x"/></svg>', 200),
        "use_bomb": (f'<svg width="10" height="10"><defs>{levels}</defs><use href="#l9"/></svg>', 413),
        "use_loop": ('<svg width="10" height="10"><g id="a"><use href="#a"/></g></svg>', 422),
        "deep_nesting": ('<svg width="10" height="10">' + "<g>" * 10000 + "</g>" * 10000 + "</svg>", 413),
        "many_filters": ('<svg width="10" height="10"><filter id="f">' + "<feFlood/>" * 101 + "</filter></svg>", 413),
        "huge_filter": (f'<svg width="4000" height="4000"><filter id="f">{blur}</filter>'
                        '<rect filter="url(#f)" width="4000" height="4000"/></svg>', 413),
        "morphology": ('<svg width="10" height="10"><filter id="f"><feMorphology radius="5000"/></filter></svg>', 413),
        "huge_canvas": ('<svg width="200000" height="200000"><rect width="10" height="10"/></svg>', 413),
    }


@pytest.fixture(scope="module")
def svgs(root, traps):
    listener, fifo = traps
    folder = root / "svg"
    folder.mkdir(exist_ok=True)
    (folder / "halves.svg").write_text(HALVES)
    for name, (document, _) in hostile_documents(listener.port, fifo).items():
        (folder / f"{name}.svg").write_text(document)
    return folder


def request_watching(client, path: str, fifo: Path):
    """GET path while watching the FIFO for a reader; returns (response, seconds, reader seen)."""
    seen = False
    result = {}

    def run():
        start = time.monotonic()
        result["r"] = client.get(path, timeout=30)
        result["t"] = time.monotonic() - start

    thread = threading.Thread(target=run)
    thread.start()
    while thread.is_alive():
        seen = seen or fifo_has_reader(fifo)
        thread.join(0.005)
    return result["r"], result["t"], seen


def test_svg_is_drawn_at_the_size_asked_for(client, svgs):
    r = client.get("/svg/halves.svg")
    assert r.status == 200 and r.content_type == "image/png", r.describe()   # SVG is read only: PNG by default
    im = Image.open(io.BytesIO(r.body))
    assert im.size == (40, 20) and im.mode == "RGBA"
    # Vectors are drawn at the output size, not drawn small and enlarged: the edge between the
    # halves stays sharp at 20x.
    _, im = client.image("/rs:800:0/svg/halves.svg")
    assert im.size == (800, 400)
    rgba = im.convert("RGBA")
    assert rgba.getpixel((398, 200)) == (255, 0, 0, 255) and rgba.getpixel((401, 200)) == (0, 0, 255, 255)
    # fill: the drawing covers the box and is cropped at the centre.
    _, im = client.image("/rs:300:300:fill/f:jpeg/svg/halves.svg")
    assert im.size == (300, 300)
    left, right = im.getpixel((10, 150)), im.getpixel((290, 150))
    assert left[0] > 240 and left[2] < 20 and right[2] > 240 and right[0] < 20


def test_svg_formats_cache_and_info(client, svgs):
    r = client.get("/rs:100:0/f:webp/svg/halves.svg")
    assert r.status == 200 and r.content_type == "image/webp", r.describe()
    again = client.get("/rs:100:0/f:webp/svg/halves.svg")
    assert again.status == 200 and again.body == r.body
    info = client.get("/f:json/svg/halves.svg")
    assert info.status == 200, info.describe()
    assert b'"format":"svg"' in info.body.replace(b" ", b"") and b'"width":40' in info.body.replace(b" ", b"")
    for bad in ("/f:svg/svg/halves.svg", "/page:1/svg/halves.svg"):
        r = client.get(bad)
        assert r.status == 400, f"{bad}: {r.describe()}"
        assert_plain_error(r, bad)


def test_hostile_svgs(client, svgs, traps, stack):
    listener, fifo = traps
    table = []
    for name, (_, expected) in hostile_documents(listener.port, fifo).items():
        path = f"/f:png/svg/{name}.svg"
        before = listener.connections
        r, seconds, reader = request_watching(client, path, fifo)
        table.append((name, r.status, round(seconds * 1000, 1), listener.connections - before, reader))
        assert r.status == expected, f"{name}: {r.describe()}"
        if expected != 200:
            assert_plain_error(r, path)
        assert seconds < 5, f"{name} took {seconds:.2f} s"
        assert listener.connections == before, f"{name} connected to the loopback listener"
        assert not reader, f"{name} opened the FIFO"
    # The safe rasters are images whose removed references drew nothing.
    im = client.image("/f:png/svg/image_http.svg")[1].convert("RGBA")
    assert im.getextrema()[3] == (0, 0)
    # The workers survived every document, and draw filters on one core (librsvg's Rayon pool).
    workers = stack.wait_workers(2)
    assert len(workers) == 2
    for pid in workers:
        assert b"RAYON_NUM_THREADS=1" in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    print("\nhostile SVG: case, status, ms, connections, FIFO opened")
    for row in table:
        print(*row, sep="\t")
