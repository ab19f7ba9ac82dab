"""The optional nginx front cache (nginx/kiln-front-cache.conf): repeats answered by nginx,
changed sources seen after the validity, errors never kept, one entry per Accept for f:auto."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from cachefiles import kiln
from helpers import CORPUS, PHOTO_HD

VALID = 1  # seconds: KILN_NGINX_FRONT_CACHE


@pytest.fixture
def front(make_stack, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(root, 0o755)
    shutil.copy2(CORPUS / "pillow_hopper.jpg", root / "a.jpg")
    os.chmod(root / "a.jpg", 0o644)
    s = make_stack(root=root, nginx_env={"KILN_NGINX_FRONT_CACHE": str(VALID)})
    return s, root


def test_repeats_are_answered_by_nginx(front):
    s, _ = front
    c = s.client()
    first = c.get("/w:64/f:png/a.jpg")
    assert first.status == 200
    assert first.header("x-cache-front") == "MISS" and first.header("x-cache") == "MISS"
    second = c.get("/w:64/f:png/a.jpg")
    assert second.status == 200 and second.header("x-cache-front") == "HIT"
    assert second.body == first.body and second.header("etag") == first.header("etag")


def test_a_changed_source_shows_after_the_validity(front):
    s, root = front
    c = s.client()
    before = c.get("/w:64/f:png/a.jpg")
    assert before.status == 200
    shutil.copy2(CORPUS / "skimage_rocket.jpg", root / "a.jpg")  # other pixels, new mtime and size
    os.chmod(root / "a.jpg", 0o644)
    assert c.get("/w:64/f:png/a.jpg").header("x-cache-front") == "HIT"  # still fresh for nginx
    time.sleep(VALID + 1.2)  # nginx keeps time in whole seconds: 1 s may last almost 2
    deadline = time.monotonic() + 5
    while True:
        after = c.get("/w:64/f:png/a.jpg")
        if after.header("etag") != before.header("etag") or time.monotonic() > deadline:
            break
        time.sleep(0.2)  # use_stale updating: the first expired request may still get the old copy
    assert after.status == 200
    assert after.header("etag") != before.header("etag")
    assert after.image().size != before.image().size  # rocket is 640x427, hopper 128x128 -> 64 wide, other height


def test_unchanged_source_is_revalidated_without_a_render(front):
    s, _ = front
    c = s.client()
    first = c.get("/w:64/f:png/a.jpg")
    time.sleep(VALID + 1.2)  # nginx keeps time in whole seconds: 1 s may last almost 2
    states = [c.get("/w:64/f:png/a.jpg").header("x-cache-front")]
    assert states[0] in ("REVALIDATED", "UPDATING", "STALE", "EXPIRED"), states
    # The background revalidation (kiln: 304 from its cache, no render) makes the entry fresh again.
    deadline = time.monotonic() + 5
    while states[-1] not in ("HIT", "REVALIDATED") and time.monotonic() < deadline:
        time.sleep(0.1)
        states.append(c.get("/w:64/f:png/a.jpg").header("x-cache-front"))
    assert states[-1] in ("HIT", "REVALIDATED"), states
    assert c.get("/w:64/f:png/a.jpg").body == first.body


def test_errors_are_not_kept(front):
    s, root = front
    c = s.client()
    assert c.get("/w:64/f:png/missing.jpg").status == 404
    shutil.copy2(CORPUS / "pillow_hopper.jpg", root / "missing.jpg")
    os.chmod(root / "missing.jpg", 0o644)
    r = c.get("/w:64/f:png/missing.jpg")
    assert r.status == 200


def test_auto_format_keeps_one_entry_per_accept(front):
    s, _ = front
    c = s.client()
    webp = c.get("/w:64/f:auto/a.jpg", {"Accept": "image/webp,*/*"})
    jpeg = c.get("/w:64/f:auto/a.jpg", {"Accept": "image/jpeg"})
    assert webp.content_type == "image/webp" and jpeg.content_type == "image/jpeg"
    again_webp = c.get("/w:64/f:auto/a.jpg", {"Accept": "image/webp,*/*"})
    again_jpeg = c.get("/w:64/f:auto/a.jpg", {"Accept": "image/jpeg"})
    assert again_webp.content_type == "image/webp" and again_jpeg.content_type == "image/jpeg"
    assert again_webp.header("x-cache-front") == "HIT" and again_jpeg.header("x-cache-front") == "HIT"


def test_an_answer_from_the_front_cache_says_so(front):
    s, _ = front
    c = s.client()
    first = c.get("/w:65/f:png/a.jpg")
    assert first.header("x-cache") == "MISS" and "total;dur=" in first.header("server-timing")
    again = c.get("/w:65/f:png/a.jpg")
    assert again.header("x-cache-front") == "HIT" and again.header("x-cache") == "HIT-FRONT"
    assert 'front;desc="nginx front cache"' in again.header("server-timing")
    # kiln's stored headers stay: ETag and 304, the surrogate keys.
    assert again.header("etag") == first.header("etag") and again.header("xkey") == first.header("xkey")
    assert c.get("/w:65/f:png/a.jpg", {"If-None-Match": first.header("etag")}).status == 304


@pytest.fixture
def purged_front(make_stack, tmp_path):
    """A front cache kept for an hour, which kiln's purges reach (`purge.nginx_cache`)."""
    root = tmp_path / "root"
    root.mkdir()
    for d in (tmp_path, root):
        os.chmod(d, 0o755)
    for name in ("a.jpg", "b.jpg"):
        shutil.copy2(CORPUS / "pillow_hopper.jpg", root / name)
        os.chmod(root / name, 0o644)
    # Where nginx's workers (nobody) reach it: not under pytest's 0700 folder.
    parent = Path(tempfile.mkdtemp(prefix="kiln-front-", dir=os.environ.get("TMPDIR", "/tmp")))
    os.chmod(parent, 0o755)
    front_dir = parent / "front"
    disk = tmp_path / "disk"
    s = make_stack(root=root, extra_args=["--set", f"purge.nginx_cache={front_dir}", "--set", f"cache.disk_path={disk}"],
                   nginx_env={"KILN_NGINX_FRONT_CACHE": "3600", "KILN_NGINX_FRONT_CACHE_DIR": str(front_dir)})
    yield s, front_dir, disk
    shutil.rmtree(parent, ignore_errors=True)


def front_files(front_dir) -> int:
    return sum(1 for p in front_dir.rglob("*") if p.is_file())


def wait_front_files(front_dir, count: int, timeout: float = 10) -> None:
    """nginx moves an answer into its cache as the upstream answer ends, which may be just after
    the client has it: poll for the count."""
    deadline = time.monotonic() + timeout
    while front_files(front_dir) != count:
        assert time.monotonic() < deadline, f"{front_files(front_dir)} files in {front_dir}, expected {count}"
        time.sleep(0.02)


def test_a_purge_of_a_source_reaches_the_front_cache_at_once(purged_front):
    s, front_dir, disk = purged_front
    c = s.client()
    urls_a = ["/w:66/f:png/a.jpg", "/w:67/f:jpeg/a.jpg"]
    for u in [*urls_a, "/w:66/f:png/b.jpg"]:
        assert c.get(u).status == 200
        assert c.get(u).header("x-cache") == "HIT-FRONT"
    wait_front_files(front_dir, 3)
    out = kiln("cache", "purge", "--source", "a.jpg", "--root", str(s.root), "--set", f"purge.nginx_cache={front_dir}",
               "--set", f"cache.disk_path={disk}", "--listen", f"unix:{s.sock}")
    assert out.returncode == 0, out.stderr
    assert "2 answers" in out.stdout and f"nginx's front cache {front_dir}" in out.stdout, out.stdout
    # a.jpg's answers are asked of kiln again (rendered: its disk entries went too); b.jpg's stay.
    for u in urls_a:
        r = c.get(u)
        assert (r.header("x-cache-front"), r.header("x-cache")) == ("MISS", "MISS"), u
    b = c.get("/w:66/f:png/b.jpg")
    assert b.header("x-cache") == "HIT-FRONT"
    wait_front_files(front_dir, 3)


def test_a_purge_of_everything_empties_the_front_cache(purged_front):
    s, front_dir, disk = purged_front
    c = s.client()
    for u in ("/w:68/f:png/a.jpg", "/w:68/f:png/b.jpg"):
        assert c.get(u).status == 200
    wait_front_files(front_dir, 2)
    out = kiln("cache", "purge", "--root", str(s.root), "--set", f"purge.nginx_cache={front_dir}",
               "--set", f"cache.disk_path={disk}", "--listen", f"unix:{s.sock}")
    assert out.returncode == 0, out.stderr
    assert "2 answers" in out.stdout, out.stdout
    assert front_files(front_dir) == 0
    assert c.get("/w:68/f:png/b.jpg").header("x-cache-front") == "MISS"
