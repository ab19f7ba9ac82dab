"""Caches and deduplication (issue 4) with real processes: X-Cache values, one render for many
concurrent identical requests across workers, negative entries, source changes, a renderer
killed mid-render."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import SLEEP_ON, SLOW_SOURCE, wait_for_worker

HITS = {"HIT-MEMORY", "HIT-DISK", "COALESCED"}


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


def test_renderer_killed_mid_render_leaves_no_entry_and_waiter_renders(make_stack, disk):
    stack = make_stack(workers=2, extra_args=["--set", f"cache.disk_path={disk}", *SLEEP_ON])
    c = stack.client()
    path = f"/sleep:5000/f:png/{SLOW_SOURCE}"  # 5 s in the sleep processor, whatever the machine
    results: dict[str, object] = {}
    before_entries = len(entry_files(disk))

    def get(tag):
        results[tag] = c.get(path, timeout=120)

    first = threading.Thread(target=get, args=("first",))
    first.start()
    # The first one renders (it holds the render lock) before the waiter asks.
    assert wait_for_worker(c, path), f"the first request never reached a worker\n{stack.logs()}"
    waiter = threading.Thread(target=get, args=("waiter",))
    waiter.start()
    # The status page says which worker renders and which waits for its lock (stage `wait`);
    # polled, since a busy machine may take a while to get both requests into the workers.
    busy, workers = None, []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        workers = json.loads(c.get("/_kiln/status?json", timeout=5).body)["workers"]
        stages = {w["pid"]: w["stage"].split(" ")[0] for w in workers if w["state"] == "busy" and w["uri"] == path}
        rendering = [p for p, stage in stages.items() if stage not in ("wait", "accept", "idle", "cache")]
        if len(stages) == 2 and "wait" in stages.values() and len(rendering) == 1:
            busy = rendering[0]
            break
        time.sleep(0.05)
    assert busy, f"never saw one worker rendering and one waiting: {workers}"
    assert first.is_alive(), "the render finished before it could be killed; pick a slower one"
    os.kill(busy, signal.SIGKILL)
    first.join(120)
    waiter.join(120)
    assert results["first"].status == 502  # its worker died: nginx answers for it
    w = results["waiter"]
    assert w.status == 200, w.describe()
    assert w.header("x-cache") == "MISS"  # the lock was freed by the kernel; the waiter rendered
    assert w.image().size == (640, 427)
    again = c.get(path, timeout=120)
    assert again.status == 200 and again.header("x-cache") in HITS and again.body == w.body
    assert len(entry_files(disk)) == before_entries + 1
    stack.wait_workers(timeout=2.0, exclude={busy})


# -- cache.store, failures of the cache folder, the sweep under load ------------------------

@pytest.mark.parametrize("store", ["final", "original", "both"])
def test_store_original_renders_new_variants_from_the_cached_source(make_stack, disk, root, store):
    """The source is overwritten in place after the first request, keeping its size, inode and
    mtime (the same version to kiln, other bytes): a new variant rendered from the cached
    original still shows the picture; one rendered from the file sees zeros and is refused."""
    from cachefiles import entry_source_path
    stack = make_stack(workers=1, extra_args=["--set", f"cache.disk_path={disk}", "--set", f"cache.store={store}"])
    c = stack.client()
    name = f"store-{store}-{os.getpid()}-{time.time_ns()}.jpg"
    src = root / name
    shutil.copyfile(root / "pillow_hopper.jpg", src)
    try:
        first, _ = c.image(f"/w:64/{name}")
        st = src.stat()
        with open(src, "r+b") as f:
            f.write(b"\0" * st.st_size)
        os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
        now = src.stat()
        assert (now.st_ino, now.st_size, now.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
        second = c.get(f"/w:48/{name}")
        mine = [e for e in entry_files(disk) if entry_source_path(e) == name]
        if store == "final":
            assert second.status == 415, second.describe()       # the zeros were read
            assert len(mine) == 2                                 # the w:64 result and the failure
        else:
            assert second.status == 200, second.describe()       # rendered from the cached original
            assert second.image().size[0] == 48
            assert len(mine) == (1 if store == "original" else 3)
    finally:
        src.unlink()


def _disk_warnings(stack) -> list[str]:
    return [line for line in stack.kiln_log.read_text(errors="replace").splitlines()
            if " level=warning " in line and "disk cache" in line]


def test_read_only_cache_folder_serves_uncached_and_warns_once_per_worker(make_stack, disk):
    from cachefiles import ReadOnlyFolder, all_files
    paths = [f"/w:{w}/pillow_hopper.jpg" for w in (30, 31, 32, 33, 34, 35)]
    with ReadOnlyFolder(disk):
        stack = disk_stack(make_stack, disk, workers=2)
        c = stack.client()
        first = [c.get(p) for p in paths]
        again = [c.get(p) for p in paths]
        stack.stop(check=False)
    assert [r.status for r in first + again] == [200] * 12, [r.describe() for r in first + again]
    assert {r.header("x-cache") for r in first} == {"MISS"}
    assert {r.header("x-cache") for r in again} <= {"MISS", "HIT-MEMORY"}
    assert all(r.image().size[0] == int(p.split(":")[1].split("/")[0]) for r, p in zip(first, paths))
    assert all_files(disk) == [], "nothing may be left in a read-only cache folder"
    warnings = _disk_warnings(stack)
    assert 1 <= len(warnings) <= 2, "one warning per worker at most, not one per request:\n" + "\n".join(warnings)


@pytest.fixture
def tiny_disk(tmp_path):
    """A 256 KB tmpfs as the cache folder (needs root and mount permission)."""
    d = tmp_path / "tiny"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(d)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield d
    subprocess.run(["umount", "-l", str(d)], capture_output=True)


def test_full_disk_serves_uncached_and_leaves_nothing_partial(make_stack, tiny_disk):
    from cachefiles import check_entry
    stack = make_stack(workers=2, extra_args=["--set", f"cache.disk_path={tiny_disk}",
                                              "--set", "cache.memory_cost_limit=0"])
    c = stack.client()
    small = [f"/w:{w}/q:60/photo_1920x1080.jpg" for w in (100, 110, 120)]
    large = [f"/f:png/w:{w}/photo_1920x1080.jpg" for w in (700, 710, 720)]  # each over 256 KB
    for p in small:
        assert c.get(p).header("x-cache") == "MISS"
    results = [c.get(p, timeout=60) for p in large + large]
    assert [r.status for r in results] == [200] * 6, [r.describe() for r in results]
    assert [r.header("x-cache") for r in results] == ["MISS"] * 6      # never stored
    assert results[0].image().size[0] == 700 and results[0].body == results[3].body
    assert [c.get(p).header("x-cache") for p in small] == ["HIT-DISK"] * 3  # what fitted is intact
    stack.stop(check=False)
    assert [p for p in (tiny_disk / "tmp").iterdir()] == [], "a failed write left a temporary file"
    assert all(check_entry(e) is None for e in entry_files(tiny_disk))
    assert all(e.stat().st_size < 256 << 10 for e in entry_files(tiny_disk))
    warnings = _disk_warnings(stack)
    assert 1 <= len(warnings) <= 2, "\n".join(warnings)
    assert "No space left" in warnings[0]


def test_small_limit_with_writers_and_sweeps_stays_under_it_and_serves_whole_entries(make_stack, disk, root):
    """The issue's test: 1MB limit, writers through nginx, readers of entries written earlier,
    and `kiln cache sweep` in a loop besides the workers' own sweeps."""
    import random
    from cachefiles import check_entry, disk_usage, kiln
    limit = 1 << 20
    # server.queue_timeout=0: every request here must be served, however long the queue (the
    # master's back-pressure 503s are tested in test_backpressure.py).
    settings = ["--set", f"cache.disk_path={disk}", "--set", "cache.disk_size_limit=1MB", "--set", "server.queue_timeout=0"]
    stack = make_stack(workers=2, extra_args=settings + ["--set", "cache.memory_cost_limit=0"],
                       nginx_env={"KILN_NGINX_CONN_LIMIT": "16"})
    c = stack.client()
    paths = [f"/w:{w}/q:90/photo_1920x1080.jpg" for w in range(300, 420)]
    first: dict[str, bytes] = {}
    guard = threading.Lock()
    stop = threading.Event()
    problems: list[str] = []
    counts = {"disk_hits": 0, "sweeps": 0}

    def writer(chunk):
        for p in chunk:
            r = c.get(p, timeout=60)
            if r.status != 200:
                problems.append(f"write {p}: {r.describe()}")
                continue
            with guard:
                first.setdefault(p, r.body)

    def reader():
        rng = random.Random(7)
        while not stop.is_set():
            with guard:
                known = list(first.items())
            if not known:
                time.sleep(0.01)
                continue
            p, body = rng.choice(known)
            r = c.get(p, timeout=60)
            if r.status != 200 or r.body != body:
                problems.append(f"read {p}: {r.describe()} ({r.header('x-cache')}), differs from the first answer")
            elif r.header("x-cache") == "HIT-DISK":
                with guard:
                    counts["disk_hits"] += 1

    def sweeper():
        while not stop.is_set():
            s = kiln("cache", "sweep", "--root", root, *settings)
            if s.returncode != 0:
                problems.append(f"kiln cache sweep: {s.stderr}")
            counts["sweeps"] += 1

    writers = [threading.Thread(target=writer, args=(paths[i::3],)) for i in range(3)]
    others = [threading.Thread(target=reader), threading.Thread(target=reader), threading.Thread(target=sweeper)]
    for t in writers + others:
        t.start()
    for t in writers:
        t.join(120)
    stop.set()
    for t in others:
        t.join(120)
    assert problems == [], "\n".join(problems[:10])
    assert sum(len(b) for b in first.values()) > 2 * limit, "the writers must write more than the limit"
    assert counts["disk_hits"] > 0 and counts["sweeps"] > 0, counts
    final = kiln("cache", "sweep", "--root", root, *settings)
    assert final.returncode == 0, final.stderr
    entries = entry_files(disk)
    assert sum(disk_usage(e) for e in entries) <= limit
    assert [m for m in map(check_entry, entries) if m] == []
    assert "damaged entry" not in stack.kiln_log.read_text(errors="replace")
