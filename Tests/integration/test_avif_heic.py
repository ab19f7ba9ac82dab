"""AVIF and HEIC (issue 12): AVIF output read back by a second decoder (libavif's `avifdec`), AVIF
and HEIC input made here with Debian's tools (`avifenc`, `heif-enc`; HEIC with irot/imir through
a small libheif program, heif_orient.c, since heif-enc 1.15 cannot write them), orientation
checked against libheif's own `heif-convert`, 10/12-bit, alpha, ICC and nclx colour; bombs and
truncations refused; `f:auto` negotiation and `Vary: Accept` for real browsers' `Accept` strings,
and `http.auto_formats`."""
from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageCms, ImageOps

from cachefiles import all_files, check_entry, entry_files
from helpers import ALPHA_HD, CORPUS, PHOTO_HD, assert_plain_error
from imagemetrics import ssim

HERE = Path(__file__).resolve().parent

CHROMIUM = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
SAFARI_17 = ("image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,"
             "image/svg+xml,image/*;q=0.8,*/*;q=0.5")
FIREFOX = "image/avif,image/webp,*/*"
OLD_CLIENT = "*/*"
WEBP_ONLY = "image/webp,*/*"


def tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is installed by scripts/test (libavif-bin, libheif-examples)"
    return path


def run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, timeout=120, **kw)


def arr(im) -> np.ndarray:
    return np.asarray(im).astype(np.int32)


def decode_avif(data: bytes, work: Path, name: str) -> Image.Image:
    """The second decoder: libavif's avifdec (dav1d), to PNG."""
    src, out = work / f"{name}.avif", work / f"{name}.png"
    src.write_bytes(data)
    run(tool("avifdec"), src, out)
    im = Image.open(out)
    im.load()
    return im


def orientation_pattern() -> Image.Image:
    """64×32, blue with a red block in the top-left corner and a green one in the top-right:
    every orientation looks different."""
    im = Image.new("RGB", (64, 32), (0, 0, 255))
    im.paste((255, 0, 0), (0, 0, 16, 8))
    im.paste((0, 255, 0), (56, 0, 64, 20))
    return im


def exif_oriented(im: Image.Image, orientation: int) -> Image.Image:
    exif = im.getexif()
    exif[274] = orientation
    copy = im.copy()
    copy.info["exif"] = exif.tobytes()
    return ImageOps.exif_transpose(copy)


def patch_ispe(data: bytes, width: int, height: int) -> bytes:
    """Every `ispe` box made to announce width × height (the AV1/HEVC data is left as it is)."""
    out = bytearray(data)
    pos = out.find(b"ispe")
    assert pos > 0, "no ispe box"
    while pos > 0:
        out[pos + 8:pos + 16] = struct.pack(">II", width, height)
        pos = out.find(b"ispe", pos + 4)
    return bytes(out)


@pytest.fixture(scope="module")
def files(root, tmp_path_factory):
    """Makes the sources in root/avifheic and returns {name: path relative to root}."""
    avifenc, heifenc = tool("avifenc"), tool("heif-enc")
    work = tmp_path_factory.mktemp("avifheic")
    folder = root / "avifheic"
    folder.mkdir(exist_ok=True)
    os.chmod(folder, 0o755)
    made: dict[str, str] = {}

    def keep(path: Path) -> str:
        os.chmod(path, 0o644)
        made[path.name] = f"avifheic/{path.name}"
        return made[path.name]

    pattern = work / "pattern.png"
    orientation_pattern().save(pattern)
    ppm = work / "pattern.ppm"
    orientation_pattern().save(ppm)
    for angle in range(4):
        for mirror in (None, 0, 1):
            out = folder / f"rot{angle}_mir{mirror}.avif"
            extra = ["--imir", mirror] if mirror is not None else []
            run(avifenc, "-s", "10", "--lossless", "--irot", angle, *extra, pattern, out)
            keep(out)
    helper = work / "heif_orient"
    run("cc", "-O1", "-o", helper, HERE / "heif_orient.c",
        *subprocess.run(["pkg-config", "--cflags", "--libs", "libheif"], check=True, capture_output=True,
                        text=True).stdout.split())
    for orientation in range(1, 9):
        keep_path = folder / f"orient{orientation}.heic"
        run(helper, orientation, ppm, keep_path)
        keep(keep_path)
    # irot for orientation 6 plus an EXIF orientation 6 item: must be rotated once, not twice.
    run(helper, 6, ppm, folder / "irot_and_exif6.heic", 6)
    keep(folder / "irot_and_exif6.heic")

    hd = work / "photo.png"
    Image.open(root / PHOTO_HD).convert("RGB").resize((640, 360), Image.LANCZOS).save(hd)
    for depth in (10, 12):
        out = folder / f"photo_{depth}bit.avif"
        run(avifenc, "-s", "10", "-d", depth, "--min", "5", "--max", "5", hd, out)
        keep(out)
    alpha = work / "alpha.png"
    Image.open(root / ALPHA_HD).convert("RGBA").resize((480, 270), Image.LANCZOS).save(alpha)
    run(avifenc, "-s", "10", "--min", "5", "--max", "5", "--minalpha", "0", "--maxalpha", "0", alpha,
        folder / "alpha.avif")
    keep(folder / "alpha.avif")
    run(heifenc, "-q", "95", alpha, "-o", folder / "alpha.heic")
    keep(folder / "alpha.heic")
    run(heifenc, "-q", "90", hd, "-o", folder / "photo.heic")
    keep(folder / "photo.heic")
    # EXIF orientation: avifenc turns a JPEG's EXIF orientation into irot/imir and keeps the EXIF;
    # heif-enc 1.15 keeps the EXIF only (no irot): both must come out as the JPEG does.
    hopper6 = CORPUS / "pillow_hopper_orientation_6.jpg"
    run(avifenc, "-s", "10", "--min", "5", "--max", "5", hopper6, folder / "hopper_exif6.avif")
    keep(folder / "hopper_exif6.avif")
    run(heifenc, "-q", "95", hopper6, "-o", folder / "hopper_exif6.heic")
    keep(folder / "hopper_exif6.heic")
    # ICC: the Adobe RGB rocket's pixels with its profile, nearly lossless.
    rocket = Image.open(CORPUS / "skimage_rocket.jpg")
    (work / "rocket.icc").write_bytes(rocket.info["icc_profile"])
    # A fresh image: Pillow would otherwise write the JPEG's profile into the PNG too.
    Image.frombytes("RGB", rocket.size, rocket.convert("RGB").tobytes()).save(work / "rocket.png")
    run(avifenc, "-s", "10", "--min", "2", "--max", "2", "-y", "444", "--icc", work / "rocket.icc",
        work / "rocket.png", folder / "rocket_adobergb.avif")
    keep(folder / "rocket_adobergb.avif")
    # nclx Display P3 (primaries 12, sRGB transfer 13, BT.601 matrix 6) on the same pixels.
    run(avifenc, "-s", "10", "--min", "2", "--max", "2", "-y", "444", "--ignore-icc", "--cicp", "12/13/6",
        work / "rocket.png", folder / "rocket_p3_nclx.avif")
    keep(folder / "rocket_p3_nclx.avif")
    # Sniffed by content, not by name.
    shutil.copy(folder / "photo.heic", folder / "heic_named.jpg")
    keep(folder / "heic_named.jpg")
    # Broken and oversized ones.
    for name in ("photo_10bit.avif", "photo.heic"):
        data = (folder / name).read_bytes()
        stem, ext = name.rsplit(".", 1)
        (folder / f"{stem}_truncated.{ext}").write_bytes(data[: len(data) * 6 // 10])
        keep(folder / f"{stem}_truncated.{ext}")
        (folder / f"{stem}_bomb.{ext}").write_bytes(patch_ispe(data, 10000, 10000))
        keep(folder / f"{stem}_bomb.{ext}")
    made["_work"] = str(work)
    made["_pattern"] = str(pattern)
    made["_hd"] = str(hd)
    made["_alpha"] = str(alpha)
    made["_rocket"] = str(work / "rocket.png")
    return made


# ---------------------------------------------------------------------------------------------
# AVIF output

def test_avif_output_decodes_in_avifdec_close_to_the_source(client, files):
    work = Path(files["_work"])
    r = client.get(f"/w:640/f:avif/{PHOTO_HD}")
    assert r.status == 200 and r.content_type == "image/avif", r.describe()
    assert r.body[4:12] == b"ftypavif"
    decoded = decode_avif(r.body, work, "out_photo")
    assert decoded.size == (640, 360)
    _, reference = client.image(f"/w:640/f:png/{PHOTO_HD}")
    score = ssim(decoded, reference)
    # The defaults were chosen to match WebP's defaults in SSIM (docs/url-api.md, Formats).
    _, webp = client.image(f"/w:640/f:webp/{PHOTO_HD}")
    webp_score = ssim(webp, reference)
    assert score > 0.88 and score > webp_score - 0.02, f"SSIM of AVIF {score:.4f}, of WebP {webp_score:.4f}"
    # The quality setting counts: q:30 is smaller than q:90, and both decode.
    small, large = client.get(f"/w:640/q:30/f:avif/{PHOTO_HD}"), client.get(f"/w:640/q:90/f:avif/{PHOTO_HD}")
    assert small.status == large.status == 200
    assert len(small.body) < len(r.body) < len(large.body), (len(small.body), len(r.body), len(large.body))
    assert ssim(decode_avif(large.body, work, "out_q90"), reference) > score


def test_avif_output_keeps_alpha(client, files):
    work = Path(files["_work"])
    r = client.get(f"/w:480/f:avif/{ALPHA_HD}")
    assert r.status == 200 and r.content_type == "image/avif", r.describe()
    decoded = decode_avif(r.body, work, "out_alpha").convert("RGBA")
    _, reference = client.image(f"/w:480/f:png/{ALPHA_HD}")
    reference = reference.convert("RGBA")
    assert decoded.size == reference.size
    alpha_diff = np.abs(arr(decoded)[..., 3] - arr(reference)[..., 3]).mean()
    assert alpha_diff < 2, f"alpha differs by {alpha_diff:.2f} on average"
    assert arr(decoded)[..., 3].min() < 128 < arr(decoded)[..., 3].max(), "the alpha channel is not flat"


def test_avif_lossless_is_exact(client, files):
    r = client.get(f"/ll:1/f:avif/{files['rot0_mirNone.avif']}")
    assert r.status == 200 and r.content_type == "image/avif", r.describe()
    decoded = decode_avif(r.body, Path(files["_work"]), "out_lossless").convert("RGB")
    assert np.abs(arr(decoded) - arr(orientation_pattern())).max() <= 1


# ---------------------------------------------------------------------------------------------
# AVIF and HEIC input

@pytest.mark.parametrize("angle", range(4))
@pytest.mark.parametrize("mirror", [None, 0, 1])
def test_avif_irot_imir_match_libheif(client, files, root, angle, mirror):
    """Kiln maps irot/imir to an orientation itself (libavif leaves them to the caller); libheif's
    heif-convert applies them in its own code: the two must agree on all 12 combinations."""
    name = f"rot{angle}_mir{mirror}.avif"
    work = Path(files["_work"])
    ref = work / f"ref_{name}.png"
    run(tool("heif-convert"), root / files[name], ref)
    _, im = client.image(f"/f:png/{files[name]}")
    expected = Image.open(ref).convert("RGB")
    assert im.size == expected.size, (im.size, expected.size)
    assert np.abs(arr(im.convert("RGB")) - arr(expected)).max() <= 2
    # ar:0 leaves the stored pixels alone.
    _, raw = client.image(f"/ar:0/f:png/{files[name]}")
    assert np.abs(arr(raw.convert("RGB")) - arr(orientation_pattern())).max() <= 2


@pytest.mark.parametrize("orientation", range(1, 9))
def test_heic_irot_imir_are_applied_once(client, files, orientation):
    _, im = client.image(f"/f:png/{files[f'orient{orientation}.heic']}")
    expected = exif_oriented(orientation_pattern(), orientation)
    assert im.size == expected.size, (orientation, im.size, expected.size)
    assert np.abs(arr(im.convert("RGB")) - arr(expected)).mean() < 4


def test_heic_with_irot_and_exif_orientation_is_rotated_once(client, files):
    _, both = client.image(f"/f:png/{files['irot_and_exif6.heic']}")
    expected = exif_oriented(orientation_pattern(), 6)
    assert both.size == (32, 64)
    assert np.abs(arr(both.convert("RGB")) - arr(expected)).mean() < 4


@pytest.mark.parametrize("ext", ["avif", "heic"])
def test_exif_orientation_of_converted_jpeg(client, files, ext):
    _, jpeg = client.image("/f:png/pillow_hopper_orientation_6.jpg")
    _, im = client.image(f"/f:png/{files['hopper_exif6.' + ext]}")
    assert im.size == jpeg.size
    diff = np.abs(arr(im.convert("RGB")) - arr(jpeg.convert("RGB"))).mean()
    assert diff < 6, f"{ext}: differs from the JPEG's render by {diff:.2f}"


@pytest.mark.parametrize("depth", [10, 12])
def test_high_bit_depth_avif_decodes_to_8_bits(client, files, depth):
    _, im = client.image(f"/f:png/{files[f'photo_{depth}bit.avif']}")
    assert im.mode == "RGB" and im.size == (640, 360)
    score = ssim(im, Image.open(files["_hd"]))
    assert score > 0.95, f"{depth}-bit: SSIM {score:.4f}"


def test_heic_photo_and_sniffing_by_content(client, files):
    _, im = client.image(f"/f:png/{files['photo.heic']}")
    assert ssim(im, Image.open(files["_hd"])) > 0.93
    r, named = client.image(f"/w:320/{files['heic_named.jpg']}")
    # Without f: a HEIC source is written as JPEG (no alpha): HEIC is not an output.
    assert r.content_type == "image/jpeg" and named.size == (320, 180)
    bad = client.get(f"/f:heic/{files['photo.heic']}")
    assert bad.status == 400, bad.describe()
    assert_plain_error(bad)


@pytest.mark.parametrize("name", ["alpha.avif", "alpha.heic"])
def test_alpha_sources(client, files, name):
    r, im = client.image(f"/f:png/{files[name]}")
    assert im.mode == "RGBA", im.mode
    source = Image.open(files["_alpha"]).convert("RGBA")
    alpha_diff = np.abs(arr(im)[..., 3] - arr(source)[..., 3]).mean()
    assert alpha_diff < 3, f"{name}: alpha differs by {alpha_diff:.2f}"
    # Without f: a HEIC source with alpha is written as PNG.
    if name.endswith(".heic"):
        r2 = client.get(f"/w:100/{files[name]}")
        assert r2.status == 200 and r2.content_type == "image/png", r2.describe()


def test_icc_profile_of_avif_is_converted_to_srgb(client, files):
    _, im = client.image(f"/f:png/{files['rocket_adobergb.avif']}")
    source = Image.open(files["_rocket"]).convert("RGB")
    profile = ImageCms.ImageCmsProfile(io.BytesIO(Image.open(CORPUS / "skimage_rocket.jpg").info["icc_profile"]))
    expected = ImageCms.profileToProfile(source, profile, ImageCms.createProfile("sRGB"), outputMode="RGB",
                                         renderingIntent=0)
    unconverted = np.abs(arr(source) - arr(expected)).mean()
    got = np.abs(arr(im.convert("RGB")) - arr(expected)).mean()
    assert unconverted > 3, "the profile should make a visible difference"
    assert got < 2.5, f"differs from ImageCms's conversion by {got:.2f} (unconverted: {unconverted:.2f})"


def test_display_p3_nclx_is_converted_to_srgb(client, files):
    _, p3 = client.image(f"/f:png/{files['rocket_p3_nclx.avif']}")
    _, adobe = client.image(f"/f:png/{files['rocket_adobergb.avif']}")
    source = arr(Image.open(files["_rocket"]).convert("RGB"))
    got = arr(p3.convert("RGB"))
    # P3 → sRGB widens saturated colours (differs from the raw values) but keeps greys.
    assert np.abs(got - source).mean() > 1.5
    grey = (np.abs(source[..., 0] - source[..., 1]) < 2) & (np.abs(source[..., 1] - source[..., 2]) < 2)
    assert grey.sum() > 100
    assert np.abs(got[grey] - source[grey]).mean() < 3
    # Display P3's gamut is smaller than Adobe RGB's: the P3 reading is the less saturated one.
    def saturation(a):
        return (a.max(axis=2) - a.min(axis=2)).mean()
    assert saturation(source) < saturation(got) < saturation(arr(adobe.convert("RGB")))


# ---------------------------------------------------------------------------------------------
# Bad input

@pytest.fixture(scope="module")
def cached_stack(root, files, tmp_path_factory):
    from stack import KilnStack
    base = tmp_path_factory.mktemp("avifheic-cache")
    os.chmod(base, 0o755)
    disk = base / "cache"
    disk.mkdir()
    os.chmod(disk, 0o755)
    s = KilnStack(root=root, workers=2, extra_args=["--set", f"cache.disk_path={disk}",
                                                    "--set", "cache.memory_count_limit=0"])
    s.start()
    s.disk = disk
    yield s
    s.stop(check=False)
    s.cleanup()


@pytest.mark.parametrize("name,status", [
    ("photo_10bit_truncated.avif", 422), ("photo_truncated.heic", 422),
    ("photo_10bit_bomb.avif", 413), ("photo_bomb.heic", 413),
])
def test_broken_and_oversized_sources_are_refused(cached_stack, files, name, status):
    workers = sorted(cached_stack.worker_pids())
    c = cached_stack.client()
    path = f"/w:100/f:png/{files[name]}"
    r = c.get(path)
    assert r.status == status, f"{path}: {r.describe()}"
    assert_plain_error(r, path)
    if status == 413:
        assert "10000x10000" in r.body.decode(), r.body
    ok = c.get(f"/w:64/f:avif/{files['photo.heic']}")
    assert ok.status == 200 and ok.content_type == "image/avif", ok.describe()
    assert sorted(cached_stack.worker_pids()) == workers, "a worker died or was replaced"
    leftovers = [p for p in all_files(cached_stack.disk) if p.parent.name == "tmp"]
    assert leftovers == [], f"partial files left in the cache: {leftovers}"
    for entry in entry_files(cached_stack.disk):
        assert check_entry(entry) is None, f"{entry}: {check_entry(entry)}"


# ---------------------------------------------------------------------------------------------
# Negotiation

def test_negotiation_for_real_browsers(client):
    path = f"/w:200/f:auto/{PHOTO_HD}"
    answers = {}
    for name, accept, want in (("chromium", CHROMIUM, "image/avif"), ("safari17", SAFARI_17, "image/avif"),
                               ("firefox", FIREFOX, "image/avif"), ("webp-only", WEBP_ONLY, "image/webp"),
                               ("old", OLD_CLIENT, "image/jpeg"), ("none", None, "image/jpeg")):
        r = client.get(path, headers={"Accept": accept} if accept else {})
        assert r.status == 200 and r.content_type == want, f"{name}: {r.describe()}"
        assert r.header("vary") == "Accept", f"{name}: Vary {r.header('vary')}"
        if want == "image/avif":
            assert r.body[4:12] == b"ftypavif"
        answers[name] = r
    # One entry per class: the three AVIF browsers share one (same ETag, same bytes), the
    # others have their own.
    etags = {n: r.header("etag") for n, r in answers.items()}
    assert etags["chromium"] == etags["safari17"] == etags["firefox"]
    assert answers["chromium"].body == answers["firefox"].body
    assert len({etags["chromium"], etags["webp-only"], etags["old"]}) == 3
    assert etags["old"] == etags["none"]
    # Cached now: asking again in another order never hands a class another's variant.
    for name, accept, want in (("webp-only", WEBP_ONLY, "image/webp"), ("old", OLD_CLIENT, "image/jpeg"),
                               ("chromium", CHROMIUM, "image/avif")):
        r = client.get(path, headers={"Accept": accept})
        assert r.content_type == want and r.header("etag") == etags[name], f"{name}: {r.describe()}"
    # Explicit formats do not vary.
    r = client.get(f"/w:200/f:avif/{PHOTO_HD}", headers={"Accept": WEBP_ONLY})
    assert r.content_type == "image/avif" and r.header("vary") is None


def test_auto_avif_refused_by_q0_and_not_guessed_from_wildcards(client):
    path = f"/w:120/f:auto/{PHOTO_HD}"
    for accept, want in (("image/avif;q=0,image/webp", "image/webp"), ("image/*", "image/webp"),
                         ("image/avif", "image/avif"), ("image/avif;q=0.5,image/jpeg", "image/avif")):
        r = client.get(path, headers={"Accept": accept})
        assert r.status == 200 and r.content_type == want, f"{accept}: {r.describe()}"


def test_auto_formats_webp_turns_avif_off(make_stack):
    s = make_stack(extra_args=["--set", "http.auto_formats=webp"])
    c = s.client()
    for accept, want in ((CHROMIUM, "image/webp"), (SAFARI_17, "image/webp"), (OLD_CLIENT, "image/jpeg")):
        r = c.get(f"/w:100/f:auto/{PHOTO_HD}", headers={"Accept": accept})
        assert r.status == 200 and r.content_type == want, f"{accept}: {r.describe()}"
        assert r.header("vary") == "Accept"
    # f:avif itself still works.
    r = c.get(f"/w:100/f:avif/{PHOTO_HD}")
    assert r.status == 200 and r.content_type == "image/avif"


def test_auto_formats_empty_means_source_and_no_vary(make_stack):
    s = make_stack(extra_args=["--set", "http.auto_formats="])
    r = s.client().get(f"/w:100/f:auto/{PHOTO_HD}", headers={"Accept": CHROMIUM})
    assert r.status == 200 and r.content_type == "image/jpeg", r.describe()
    assert r.header("vary") is None
