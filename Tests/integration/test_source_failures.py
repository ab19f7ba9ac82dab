"""A source that fails for a reason of its own is remembered per source (issue 25, item 3), and
two disk-cache holes (item 6): a cache folder replaced by a symbolic link, a file system smaller
than cache.disk_size_limit.

Per source: a corrupt PNG, a WebP whose decode alone is over limits.max_request_memory, and a PNG
whose (test-only, debug.sleep_decode) decode outlasts limits.render_timeout, each asked for at
many sizes: one attempt (one `X-Cache: MISS`), every other size answered from the memory with the
same status and one-line reason. The decode attempts are counted by X-Cache, not by timing."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin

SLOW_DECODE_MS = 6_000
RENDER_TIMEOUT = 2.0


def _png(path: Path, size=(64, 64), text: dict[str, str] | None = None) -> bytes:
    info = PngImagePlugin.PngInfo()
    for k, v in (text or {}).items():
        info.add_text(k, v)
    img = Image.new("RGB", size)
    img.putdata([((x * 7) % 256, (y * 5) % 256, (x * y) % 256) for y in range(size[1]) for x in range(size[0])])
    img.save(path, pnginfo=info)
    return path.read_bytes()


@pytest.fixture
def bad_root(tmp_path) -> Path:
    root = tmp_path / "images"
    root.mkdir()
    whole = _png(root / "whole.png", (256, 256))
    (root / "corrupt.png").write_bytes(whole[: len(whole) // 2])  # IDAT cut: a 422 at decode
    # 3000x3000 RGBA lossless WebP: no shrink-on-load for alpha, so every size plans the full
    # decode (about 70 MiB), over a 32 MiB budget.
    Image.new("RGBA", (3000, 3000), (10, 20, 30, 128)).save(root / "over_budget.webp", lossless=True)
    _png(root / "slow_decode.png", (64, 64), {"Comment": f"kiln-sleep-decode={SLOW_DECODE_MS}"})
    frames = [Image.new("RGB", (64, 64), (i * 40, 0, 0)) for i in range(3)]
    frames[0].save(root / "slow_decode.gif", save_all=True, append_images=frames[1:], duration=100,
                   comment=f"kiln-sleep-decode={SLOW_DECODE_MS}".encode())
    _png(root / "good.png", (64, 64))
    os.chmod(tmp_path, 0o755)
    return root


def _outcomes(client, paths):
    answers = [client.get(p) for p in paths]
    return answers, [a.header("x-cache") for a in answers]


@pytest.mark.parametrize("source,status", [("corrupt.png", 422), ("over_budget.webp", 413)])
def test_a_bad_source_at_100_sizes_costs_one_decode(make_stack, bad_root, disk, source, status):
    s = make_stack(root=bad_root, workers=2,
                   extra_args=["--set", f"cache.disk_path={disk}", "--set", "cache.negative_ttl=60s",
                               "--set", "limits.max_request_memory=32MiB"])
    c = s.client()
    answers, cache = _outcomes(c, [f"/w:{w}/f:png/{source}" for w in range(1, 101)])
    assert [a.status for a in answers] == [status] * 100, [a.describe() for a in answers[:3]]
    assert cache.count("MISS") == 1, cache            # one decode attempt for 100 sizes on two workers
    assert set(cache) <= {"MISS", "HIT-MEMORY", "HIT-DISK"}, cache
    assert len({a.body for a in answers}) == 1        # the same one-line reason every time
    # A good file beside it is not affected.
    assert c.get("/w:20/f:png/good.png").status == 200


def test_a_variant_failure_stays_per_variant(make_stack, bad_root, disk):
    s = make_stack(root=bad_root, workers=1, extra_args=["--set", f"cache.disk_path={disk}"])
    c = s.client()
    bad = c.get("/crop:2:2:500:500/good.png")
    assert bad.status == 400, bad.describe()
    ok = c.get("/w:30/f:png/good.png")
    assert ok.status == 200 and ok.header("x-cache") == "MISS", ok.describe()


@pytest.mark.parametrize("source", ["slow_decode.png", "slow_decode.gif"])
def test_a_decode_killed_at_the_deadline_is_remembered_for_every_size(make_stack, bad_root, disk, source):
    s = make_stack(root=bad_root, workers=2,
                   extra_args=["--set", f"cache.disk_path={disk}", "--set", f"limits.render_timeout={RENDER_TIMEOUT}s",
                               "--set", "cache.negative_ttl=60s", "--set", "debug.sleep_decode=true",
                               "--set", "server.queue_timeout=0"])
    c = s.client()
    t0 = time.monotonic()
    first = c.get(f"/w:10/f:png/{source}", timeout=30)
    took = time.monotonic() - t0
    assert first.status == 502, first.describe()      # killed by the master at the deadline
    assert RENDER_TIMEOUT - 0.1 <= took < SLOW_DECODE_MS / 1000, took
    answers = []
    for w in (20, 30, 40, 50):
        t0 = time.monotonic()
        r = c.get(f"/w:{w}/f:png/{source}", timeout=30)
        answers.append((r, time.monotonic() - t0))
    for r, dt in answers:
        assert r.status == 413, r.describe()
        assert "limits.render_timeout" in r.body.decode(), r.body
        # Answered at once instead of decoding (and being killed) again: well under the deadline.
        assert dt < RENDER_TIMEOUT / 2, (dt, r.describe())
    assert answers[0][0].header("x-cache") == "MISS"  # the marker was found: no decode
    assert all(r.header("x-cache") in ("HIT-MEMORY", "HIT-DISK") for r, _ in answers[1:]), [r.describe() for r, _ in answers]
    assert len({r.body for r, _ in answers}) == 1
    assert "killed at limits.render_timeout" in s.kiln_log.read_text(errors="replace")
    assert c.get("/w:20/f:png/good.png").status == 200


# -- a file system smaller than cache.disk_size_limit -------------------------------------------

@pytest.fixture
def small_fs(tmp_path):
    """A 2 MiB tmpfs (needs root and mount); a failure to mount fails the test, never skips it."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    os.chmod(tmp_path, 0o755)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"cannot mount a 2 MiB tmpfs for the disk-full test (needs root): {r.stderr.strip()}", pytrace=False)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_disk_triggers_a_sweep_and_caching_goes_on(make_stack, bad_root, small_fs):
    noise = Image.effect_noise((300, 300), 90).convert("RGB")
    noise.save(bad_root / "noise.png")
    cache = small_fs / "cache"
    s = make_stack(root=bad_root, workers=1,
                   extra_args=["--set", f"cache.disk_path={cache}", "--set", "cache.disk_size_limit=1GiB",
                               "--set", "cache.memory_cost_limit=0", "--set", "cache.disk_low_water=0.5"])
    c = s.client()

    def free() -> int:
        st = os.statvfs(small_fs)
        return st.f_bavail * st.f_frsize

    # About 60-90 KB a variant: the 2 MiB file system is full after some 25, long before the 1 GiB limit.
    full_at = None
    for i in range(60):
        path = f"/w:{200 + i}/f:png/noise.png"
        assert c.get(path).status == 200
        if "no space left" in s.kiln_log.read_text(errors="replace").lower():
            full_at = i
            break
    assert full_at is not None, f"the disk never filled: {free()} bytes free"
    # The write that found the disk full started a sweep to half of what the disk holds (poll for it).
    deadline = time.monotonic() + 20
    while free() < 600_000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert free() >= 600_000, f"no sweep made room after the disk filled: {free()} bytes free\n{s.kiln_log.read_text()[-2000:]}"
    log = s.kiln_log.read_text(errors="replace")
    assert "sweeping to the low-water mark of what the disk holds" in log, log[-2000:]
    # Caching goes on: the next variants are stored and served from the disk.
    for i in range(full_at + 1, full_at + 6):
        path = f"/w:{200 + i}/f:png/noise.png"
        assert c.get(path).status == 200
        again = c.get(path)
        assert again.status == 200 and again.header("x-cache") == "HIT-DISK", again.describe()
    # No partial file left behind.
    assert [p.name for p in (cache / "tmp").iterdir()] == []


# -- a cache folder replaced by a symbolic link --------------------------------------------------

def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_cache_folder_replaced_by_a_symlink_is_not_written_through(make_stack, bad_root, tmp_path):
    cache = tmp_path / "cache"
    s = make_stack(root=bad_root, workers=2, extra_args=["--set", f"cache.disk_path={cache}"])
    c = s.client()
    assert c.get("/w:10/f:png/good.png").status == 200
    assert any(cache.glob("??/*")), "nothing was cached before the swap"
    images = _tree(bad_root)
    shutil.rmtree(cache)
    os.symlink(bad_root, cache)  # rm -rf cache; ln -s <image root> cache
    for w in range(11, 31):
        r = c.get(f"/w:{w}/f:png/good.png")
        assert r.status == 200 and r.header("x-cache") == "MISS", r.describe()
    assert c.get("/w:11/f:png/corrupt.png").status == 422
    assert _tree(bad_root) == images  # no entry, locks/ or tmp/ in the image root
    log = s.kiln_log.read_text(errors="replace")
    assert "is a symbolic link" in log, log[-2000:]
