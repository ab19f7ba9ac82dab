"""The optional nginx front cache (nginx/kiln-front-cache.conf): repeats answered by nginx,
changed sources seen after the validity, errors never kept, one entry per Accept for f:auto."""
from __future__ import annotations

import os
import shutil
import time

import pytest

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
