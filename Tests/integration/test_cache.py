"""Caches and deduplication (issue 4) with real processes: X-Cache values, one render for many
concurrent identical requests across workers, negative entries, source changes, a renderer
killed mid-render."""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HITS = {"HIT-MEMORY", "HIT-DISK", "COALESCED"}


@pytest.fixture
def disk(tmp_path) -> Path:
    d = tmp_path / "cache"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    return d


def disk_stack(make_stack, disk: Path, workers: int, **kw):
    return make_stack(workers=workers, extra_args=["--set", f"cache.disk_path={disk}"], **kw)


def entry_files(disk: Path) -> list[Path]:
    """Entry files (fan-out folder xx/<64 hex>); temporaries live in tmp/, locks in locks/."""
    return [p for p in disk.glob("??/*") if p.is_file() and len(p.name) == 64]


def test_memory_cache_hit_on_repeat(make_stack):
    stack = make_stack(workers=1)
    c = stack.client()
    first = c.get("/rs:120:80:fill/f:png/skimage_rocket.jpg")
    second = c.get("/rs:120:80:fill/f:png/skimage_rocket.jpg")
    assert first.status == second.status == 200
    assert first.header("x-cache") == "MISS"
    assert second.header("x-cache") == "HIT-MEMORY"
    assert first.body == second.body and first.header("etag") == second.header("etag")
    assert "cache;dur=" in second.header("server-timing") and "decode" not in second.header("server-timing")
    assert "decode;dur=" in first.header("server-timing")


def test_disk_cache_serves_every_worker(make_stack, disk):
    stack = disk_stack(make_stack, disk, workers=2)
    c = stack.client()
    before = len(entry_files(disk))  # the harness's readiness probe may have stored one
    outcomes = [c.get("/rs:100:100/f:webp/skimage_coffee.png").header("x-cache") for _ in range(12)]
    assert outcomes[0] == "MISS"
    assert outcomes.count("MISS") == 1, outcomes
    assert set(outcomes[1:]) <= {"HIT-MEMORY", "HIT-DISK"}, outcomes
    assert len(entry_files(disk)) == before + 1


def test_64_concurrent_identical_cold_requests_render_once(make_stack, disk):
    """64 at once through nginx to 4 workers: one MISS, every body identical."""
    stack = disk_stack(make_stack, disk, workers=4, nginx_env={"KILN_NGINX_CONN_LIMIT": "80"})
    c = stack.client()
    path = "/rs:333:222:fill/q:81/photo_4000x3000.jpg"
    barrier = threading.Barrier(64)

    def one(_):
        barrier.wait(timeout=30)
        return c.get(path, timeout=60)

    with ThreadPoolExecutor(max_workers=64) as pool:
        results = list(pool.map(one, range(64)))
    statuses = [r.status for r in results]
    assert statuses == [200] * 64, statuses
    caches = [r.header("x-cache") for r in results]
    assert caches.count("MISS") == 1, caches
    assert set(caches) - {"MISS"} <= HITS, caches
    assert len({r.body for r in results}) == 1
    assert results[0].image().size == (333, 222)


def test_failed_render_is_remembered(make_stack, disk):
    stack = disk_stack(make_stack, disk, workers=2)
    c = stack.client()
    first = c.get("/w:100/rocket_truncated_50pct.jpg")
    second = c.get("/w:100/rocket_truncated_50pct.jpg")
    assert first.status == second.status == 422
    assert first.header("x-cache") == "MISS"
    assert second.header("x-cache") in HITS
    assert first.body == second.body


def test_changed_source_gets_a_new_etag(stack, root):
    c = stack.client()
    name = f"touch-{os.getpid()}-{time.time_ns()}.jpg"
    src = root / name
    shutil.copyfile(root / "pillow_hopper.jpg", src)
    try:
        first = c.get(f"/w:64/{name}")
        assert first.status == 200
        st = src.stat()
        os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # touch, same bytes
        second = c.get(f"/w:64/{name}")
        assert second.status == 200
        assert second.header("etag") != first.header("etag")
        assert second.header("x-cache") == "MISS"
        assert second.header("last-modified") != first.header("last-modified")
    finally:
        src.unlink()


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_renderer_killed_mid_render_leaves_no_entry_and_waiter_renders(make_stack, disk):
    stack = disk_stack(make_stack, disk, workers=2)
    c = stack.client()
    path = "/f:png/photo_4000x3000.jpg"  # 12 MP of grainy photo to PNG: seconds of CPU
    results: dict[str, object] = {}
    before_entries = len(entry_files(disk))

    def get(tag):
        results[tag] = c.get(path, timeout=120)

    first = threading.Thread(target=get, args=("first",))
    first.start()
    time.sleep(0.3)
    waiter = threading.Thread(target=get, args=("waiter",))
    waiter.start()
    time.sleep(0.3)
    # The renderer is the worker burning CPU; the waiter polls its lock and uses almost none.
    pids = stack.worker_pids()
    before = {p: _cpu_ticks(p) for p in pids}
    time.sleep(0.3)
    busy = max(pids, key=lambda p: _cpu_ticks(p) - before[p])
    assert first.is_alive(), "the render finished before it could be killed; pick a slower one"
    os.kill(busy, signal.SIGKILL)
    first.join(120)
    waiter.join(120)
    assert results["first"].status == 502  # its worker died: nginx answers for it
    w = results["waiter"]
    assert w.status == 200, w.describe()
    assert w.header("x-cache") == "MISS"  # the lock was freed by the kernel; the waiter rendered
    assert w.image().size == (4000, 3000)
    again = c.get(path, timeout=120)
    assert again.status == 200 and again.header("x-cache") in HITS and again.body == w.body
    assert len(entry_files(disk)) == before_entries + 1
    stack.wait_workers(timeout=2.0, exclude={busy})
