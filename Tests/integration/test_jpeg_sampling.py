"""JPEGs that TurboJPEG's v2 API refuses but libjpeg decodes (issue 12): colour files with
sampling factors TurboJPEG cannot classify ("Could not determine subsampling type") go through
libjpeg's own API with the same strict policy, and arithmetic-coded files decode too. The files are
made here by Debian's `cjpeg -sample`; the reference pixels are `djpeg`'s decode of the same file."""
from __future__ import annotations

import io
import os
import shutil
import subprocess

import pytest
from PIL import Image

from helpers import CORPUS, PHOTO_HD, assert_plain_error

# (cjpeg -sample argument, extra cjpeg arguments). The first ones TurboJPEG can classify; the
# others it cannot (every one of those was a 422 before the libjpeg path).
LAYOUTS = [("2x1", []), ("1x2", []), ("4x1", []), ("2x2", ["-arithmetic"]), ("1x4", []), ("3x2", []),
           ("4x2", []), ("3x1", []), ("2x2,1x2,1x1", []), ("1x1,2x1,1x1", []), ("2x2,2x1,1x2", []),
           ("3x2", ["-progressive"])]


def name(sample: str, extra: list[str]) -> str:
    return "s_" + sample.replace(",", "_") + "".join(e.replace("-", "_") for e in extra) + ".jpg"


@pytest.fixture(scope="module")
def sampled(root, tmp_path_factory):
    cjpeg, djpeg = shutil.which("cjpeg"), shutil.which("djpeg")
    assert cjpeg and djpeg, "libjpeg-turbo-progs (cjpeg, djpeg) is installed by scripts/test"
    work = tmp_path_factory.mktemp("sampling")
    folder = root / "sampling"
    folder.mkdir(exist_ok=True)
    os.chmod(folder, 0o755)
    ppm = work / "photo.ppm"
    Image.open(root / PHOTO_HD).convert("RGB").crop((0, 0, 963, 541)).save(ppm)  # odd sizes on purpose
    made = {}
    for sample, extra in LAYOUTS:
        out = folder / name(sample, extra)
        subprocess.run([cjpeg, "-quality", "90", "-sample", sample, *extra, "-outfile", str(out), str(ppm)],
                       check=True, capture_output=True, timeout=60)
        os.chmod(out, 0o644)
        reference = subprocess.run([djpeg, "-ppm", str(out)], check=True, capture_output=True, timeout=60).stdout
        made[(sample, tuple(extra))] = (out, Image.open(io.BytesIO(reference)).convert("RGB"))
    return made


@pytest.mark.parametrize("sample,extra", LAYOUTS, ids=[name(s, e) for s, e in LAYOUTS])
def test_every_sampling_layout_decodes_like_djpeg(stack, sampled, sample, extra):
    path, reference = sampled[(sample, tuple(extra))]
    c = stack.client()
    r, im = c.image(f"/f:png/sampling/{path.name}")
    assert im.size == reference.size == (963, 541)
    got = im.convert("RGB").tobytes()
    want = reference.tobytes()
    worst = max(abs(a - b) for a, b in zip(got, want))
    assert worst <= 1, f"{path.name}: pixels differ from djpeg's by up to {worst}"
    # Shrink-on-load (DCT scaling) on the same files: the size asked for, close to the reference.
    r, small = c.image(f"/w:120/f:png/sampling/{path.name}")
    assert small.size == (120, 67)
    expected = reference.resize((120, 67), Image.LANCZOS).tobytes()
    mean = sum(abs(a - b) for a, b in zip(small.convert("RGB").tobytes(), expected)) / len(expected)
    assert mean < 4, f"{path.name}: the 120 px render differs from the reference by {mean:.2f} on average"


def test_truncated_and_corrupt_unusual_sampling_is_a_422(stack, sampled, root):
    path, _ = sampled[("3x2", ())]
    data = path.read_bytes()
    cut = root / "sampling" / "cut_3x2.jpg"
    cut.write_bytes(data[: len(data) * 2 // 3])
    os.chmod(cut, 0o644)
    flipped = bytearray(data)
    start = data.index(b"\xff\xda") + 20  # inside the entropy-coded data of the first scan
    for i in range(start, start + 400, 7):
        flipped[i] ^= 0x5A
    bad = root / "sampling" / "bad_3x2.jpg"
    bad.write_bytes(bytes(flipped))
    os.chmod(bad, 0o644)
    c = stack.client()
    for f, reason in ((cut, "Premature end of JPEG file"), (bad, "")):
        r = c.get(f"/w:100/f:png/sampling/{f.name}")
        assert r.status == 422, f"{f.name}: {r.describe()}"
        assert_plain_error(r, f.name)
        assert reason in r.body.decode(), r.body
    # The worker survived: the next request renders.
    r, im = c.image(f"/w:50/f:png/sampling/{path.name}")
    assert im.size[0] == 50
