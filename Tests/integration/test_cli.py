"""`kiln version` and `kiln process <input> <spec> <output>` (no server)."""
from __future__ import annotations

import subprocess

from PIL import Image

from helpers import BENCH, CORPUS, KILN_BIN


def run(*args, timeout=60):
    return subprocess.run([str(KILN_BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_version(environment_ok):
    p = run("version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip(), "kiln version printed nothing"


def test_process_renders_one_file(environment_ok, tmp_path):
    out = tmp_path / "hopper.png"
    p = run("process", CORPUS / "pillow_hopper.jpg", "w:64/f:png", out)
    assert p.returncode == 0, p.stderr
    im = Image.open(out)
    assert im.format == "PNG" and im.size == (64, 64)


def test_process_fill_webp(environment_ok, tmp_path):
    out = tmp_path / "photo.webp"
    p = run("process", BENCH / "photo_1920x1080.jpg", "rs:300:200:fill/q:80/f:webp", out)
    assert p.returncode == 0, p.stderr
    im = Image.open(out)
    assert im.format == "WEBP" and im.size == (300, 200)


def test_process_refuses_bad_input(environment_ok, tmp_path):
    out = tmp_path / "x.png"
    p = run("process", CORPUS / "plain_text_named.png", "w:64/f:png", out)
    assert p.returncode != 0, "text named .png must not render"
    assert p.stderr.strip(), "say why on stderr"


def test_process_refuses_bad_spec(environment_ok, tmp_path):
    p = run("process", CORPUS / "pillow_hopper.jpg", "foo:1", tmp_path / "x.png")
    assert p.returncode != 0
    assert "foo:1" in p.stderr
