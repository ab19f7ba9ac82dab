"""`kiln cache stats | sweep | purge` and `kiln warm` against a disk cache filled through nginx
by a running `kiln serve` (issue 4)."""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cachefiles import check_entry, disk_usage, entry_files, entry_source_path, kiln
from helpers import KILN_BIN, SLEEP_ON, SLOW_SOURCE

HITS = {"HIT-MEMORY", "HIT-DISK", "COALESCED"}
SLOW = f"/sleep:3000/f:png/{SLOW_SOURCE}"  # 3 s in the sleep processor (SLEEP_ON): time to look at its lock
WAIT = ["--set", "cache.lock_timeout=2m", "--set", "limits.render_timeout=2m",  # a loaded machine must not turn a wait into a second render (nor kill the slow render)
        *SLEEP_ON]


def cache_args(disk: Path, root: Path, *more: str) -> list[str]:
    return ["--root", str(root), "--set", f"cache.disk_path={disk}", *more]


def serve(make_stack, disk: Path, *more: str, workers: int = 2):
    """A stack with the disk cache and no memory cache (every repeat reads the disk). Requests
    queue behind the workers as long as they need (no 503 after server.queue_timeout)."""
    return make_stack(workers=workers, extra_args=["--set", f"cache.disk_path={disk}",
                                                   "--set", "cache.memory_cost_limit=0",
                                                   "--set", "server.queue_timeout=0", *more])


def fill(client, paths: list[str]) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        for r in pool.map(lambda p: client.get(p, timeout=60), paths):
            assert r.status == 200, r.describe()


def stats_json(disk: Path, root: Path, *more: str) -> dict:
    p = kiln("cache", "stats", "--json", *cache_args(disk, root, *more))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


# -- cache stats / sweep / purge ----------------------------------------------------------

def test_stats_counts_what_the_server_stored(make_stack, disk, root):
    stack = serve(make_stack, disk)
    fill(stack.client(), [f"/w:{w}/pillow_hopper.jpg" for w in (20, 30, 40)])
    files = entry_files(disk)
    s = stats_json(disk, root)
    assert s["entries"] == len(files) >= 3
    assert s["bytes"] == sum(disk_usage(p) for p in files)
    assert s["size_limit"] == 1 << 30 and s["path"] == str(disk)
    assert s["temp_files"] == 0 and s["lock_files"] == 0
    assert s["free_bytes"] > 0
    text = kiln("cache", "stats", *cache_args(disk, root, "--set", "cache.disk_size_limit=2MB"))
    assert text.returncode == 0, text.stderr
    assert f"entries:    {len(files)}," in text.stdout and "of 2.0 MB" in text.stdout, text.stdout
    assert "free space:" in text.stdout


@pytest.mark.parametrize("command", [["stats"], ["stats", "--json"], ["sweep"], ["purge"],
                                     ["purge", "--source", "a.jpg"]])
def test_cache_commands_need_a_disk_cache(root, command):
    p = kiln("cache", *command, "--root", root)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cache.disk_path" in lines[0], p.stderr


def test_cache_commands_read_the_configuration_file_and_environment(make_stack, disk, root, tmp_path):
    stack = serve(make_stack, disk)
    fill(stack.client(), ["/w:22/pillow_hopper.jpg"])
    conf = tmp_path / "kiln.toml"
    conf.write_text(f'[cache]\ndisk_path = "{disk}"\ndisk_size_limit = "3MiB"\n')
    by_file = kiln("cache", "stats", "--json", "--root", root, "--config", conf)
    assert by_file.returncode == 0, by_file.stderr
    assert json.loads(by_file.stdout)["size_limit"] == 3 << 20
    env = {**os.environ, "KILN_CACHE_DISK_PATH": str(disk)}
    by_env = subprocess.run([str(KILN_BIN), "cache", "stats", "--json", "--root", str(root)], env=env,
                            capture_output=True, text=True, timeout=60)
    assert by_env.returncode == 0, by_env.stderr
    assert json.loads(by_env.stdout)["entries"] == len(entry_files(disk)) >= 1


def test_purge_one_source_then_everything(make_stack, disk, root):
    stack = serve(make_stack, disk)
    c = stack.client()
    a = [f"/w:{w}/pillow_hopper.jpg" for w in (24, 32)]
    b = [f"/w:{w}/skimage_coffee.png" for w in (24, 32)]
    fill(c, a + b)
    before = len(entry_files(disk))
    p = kiln("cache", "purge", "--source", "/skimage_coffee.png", *cache_args(disk, root))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("purged 2 entries"), p.stdout
    assert len(entry_files(disk)) == before - 2
    assert "skimage_coffee.png" not in {entry_source_path(f) for f in entry_files(disk)}
    assert [c.get(x).header("x-cache") for x in b] == ["MISS", "MISS"]       # rendered again
    assert [c.get(x).header("x-cache") for x in a] == ["HIT-DISK", "HIT-DISK"]  # untouched
    p = kiln("cache", "purge", *cache_args(disk, root))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"purged {before} entries"), p.stdout
    assert entry_files(disk) == []
    assert stats_json(disk, root)["entries"] == 0


def test_sweep_evicts_least_recently_used_down_to_low_water(make_stack, disk, root):
    stack = serve(make_stack, disk)  # 1GB limit: the server never sweeps these
    fill(stack.client(), [f"/w:{w}/q:95/photo_1920x1080.jpg" for w in range(600, 630)])
    files = entry_files(disk)
    total = sum(disk_usage(p) for p in files)
    assert total > 1 << 20, f"only {total} bytes stored; need more than the 1MB limit below"
    # Access order: the i-th file used i minutes ago.
    now = time.time()
    for i, f in enumerate(files):
        os.utime(f, (now - 60 * i, now - 60 * i))
    p = kiln("cache", "sweep", *cache_args(disk, root, "--set", "cache.disk_size_limit=1MB",
                                           "--set", "cache.disk_low_water=0.5"))
    assert p.returncode == 0, p.stderr
    left = entry_files(disk)
    used = sum(disk_usage(f) for f in left)
    assert used <= (1 << 20) // 2
    assert f"left {len(left)} entries" in p.stdout and "removed" in p.stdout, p.stdout
    # The most recently used survived, the oldest went.
    kept = set(left)
    assert files[0] in kept and files[-1] not in kept
    ranks = sorted(files.index(f) for f in left)
    assert ranks == list(range(len(left))), "evicted out of LRU order"
    assert all(check_entry(f) is None for f in left)


def test_fill_writes_whole_entries_that_stats_and_sweep_see_in_age_order(disk, root):
    """`kiln cache fill` (synthetic entries for the cache-scale benchmark): whole entries, access
    times spread oldest first, counted by stats, evicted oldest first by the one-pass sweep."""
    p = kiln("cache", "fill", "--entries", "300", "--size", "5000", "--spread", "1h", *cache_args(disk, root))
    assert p.returncode == 0, p.stderr
    assert "wrote 300 synthetic entries" in p.stdout, p.stdout
    files = entry_files(disk)
    assert len(files) == 300
    assert all(check_entry(f) is None for f in files)
    number = {f: int(entry_source_path(f).removeprefix("synthetic/").removesuffix(".jpg")) for f in files}
    assert sorted(number.values()) == list(range(300))
    mtimes = {f: f.stat().st_mtime for f in files}
    assert 3500 < max(mtimes.values()) - min(mtimes.values()) <= 3600
    # Higher numbers were used more recently.
    by_number = sorted(files, key=lambda f: number[f])
    assert all(mtimes[a] < mtimes[b] for a, b in zip(by_number, by_number[1:]))
    assert stats_json(disk, root)["entries"] == 300
    bad = kiln("cache", "fill", "--entries", "many", *cache_args(disk, root))
    assert bad.returncode != 0 and "--entries needs a count" in bad.stderr

    sweep = kiln("cache", "sweep", *cache_args(disk, root, "--set", "cache.disk_size_limit=1MB"))
    assert sweep.returncode == 0, sweep.stderr
    left = entry_files(disk)
    assert 0 < len(left) < 300
    assert sum(disk_usage(f) for f in left) <= int(0.9 * (1 << 20))
    # Exactly the newest survived.
    assert sorted(number[f] for f in left) == list(range(300 - len(left), 300))


# -- kiln warm ----------------------------------------------------------------------------

def test_warm_fills_the_disk_cache_for_the_workers(make_stack, disk, root, tmp_path):
    paths = ["/rs:120:80:fill/f:webp/pillow_hopper.jpg", "/w:50/skimage_coffee.png", "/f:auto/w:40/pillow_hopper.jpg"]
    listing = tmp_path / "paths.txt"
    listing.write_text("# warm these\n\n" + "\n".join(f"  {p}  " for p in paths) + "\n/w:10/no-such-file.jpg\n"
                       + "/foo:1/pillow_hopper.jpg\n" + paths[0] + "\n")
    p = kiln("warm", listing, "--jobs", "2", *cache_args(disk, root))
    assert p.returncode == 1, (p.stdout, p.stderr)
    lines = p.stdout.strip().splitlines()
    assert "6 paths" in lines[0] and "3 rendered, 1 skipped (already cached), 2 failed" in lines[0], p.stdout
    assert lines[1].startswith("  failed /w:10/no-such-file.jpg: HTTP 404"), p.stdout
    assert lines[2].startswith("  failed /foo:1/pillow_hopper.jpg: HTTP 400") and "foo:1" in lines[2], p.stdout
    assert "\r" not in p.stderr, "no progress bar when stderr is not a terminal"
    assert len(entry_files(disk)) == 3  # a missing source or a bad URL fails before the cache
    stack = serve(make_stack, disk)
    c = stack.client()
    for path in paths:
        r, _ = c.image(path)
        assert r.header("x-cache") == "HIT-DISK", (path, r.header("x-cache"))
    # f:auto was warmed for clients without WebP; a WebP client is another variant.
    assert c.get(paths[2], {"Accept": "image/webp"}).header("x-cache") == "MISS"
    listing.write_text("\n".join(paths) + "\n")
    again = kiln("warm", listing, *cache_args(disk, root))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 rendered, 3 skipped (already cached), 0 failed" in again.stdout


def test_warm_refuses_without_a_disk_cache_or_list(root, tmp_path, disk):
    listing = tmp_path / "paths.txt"
    listing.write_text("/w:10/pillow_hopper.jpg\n")
    p = kiln("warm", listing, "--root", root)
    assert p.returncode == 2 and "cache.disk_path" in p.stderr and p.stdout == ""
    p = kiln("warm", tmp_path / "missing.txt", *cache_args(disk, root))
    assert p.returncode == 2 and "missing.txt" in p.stderr
    p = kiln("warm", "-", *cache_args(disk, root), input="/w:12/pillow_hopper.jpg\n")
    assert p.returncode == 0 and "1 rendered" in p.stdout, p.stdout + p.stderr


def _wait_for_lock(disk: Path, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if list((disk / "locks").glob("*/*.lock")) if (disk / "locks").exists() else []:
            return True
        time.sleep(0.01)
    return False


def test_a_worker_waits_for_warm_rendering_the_same_variant(make_stack, disk, root, tmp_path):
    stack = serve(make_stack, disk, *WAIT)
    listing = tmp_path / "paths.txt"
    listing.write_text(SLOW + "\n")
    # --nice 0: at warm's default niceness, a machine busy with other work (a build) can starve
    # the render past nginx's 30 s read timeout, and the waiting worker's client gets a 504.
    warm = subprocess.Popen([str(KILN_BIN), "warm", "--nice", "0", str(listing), *cache_args(disk, root, *SLEEP_ON)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for_lock(disk), "kiln warm never took a render lock"
        r = stack.client().get(SLOW, timeout=120)
        out, err = warm.communicate(timeout=120)
    finally:
        if warm.poll() is None:
            warm.kill()
    assert warm.returncode == 0, out + err
    assert "1 rendered" in out
    assert r.status == 200 and r.header("x-cache") == "COALESCED", r.header("x-cache")


def test_warm_waits_for_a_worker_rendering_the_same_variant(make_stack, disk, root, tmp_path):
    stack = serve(make_stack, disk, *WAIT)
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("r", stack.client().get(SLOW, timeout=120)))
    t.start()
    try:
        assert _wait_for_lock(disk), "the worker never took a render lock"
        listing = tmp_path / "paths.txt"
        listing.write_text(SLOW + "\n")
        p = kiln("warm", listing, *cache_args(disk, root, *WAIT))
    finally:
        t.join(120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 rendered, 1 skipped" in p.stdout, p.stdout
    assert result["r"].status == 200 and result["r"].header("x-cache") == "MISS"


def _nice_values(pid: int) -> set[int]:
    out = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        out.add(int(fields[16]))  # field 19 of proc(5): nice
    return out


def test_warm_renders_at_low_priority(disk, root, tmp_path):
    listing = tmp_path / "paths.txt"
    listing.write_text(SLOW + "\n")
    warm = subprocess.Popen([str(KILN_BIN), "warm", str(listing), "--nice", "13", *cache_args(disk, root, *SLEEP_ON)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    try:
        assert _wait_for_lock(disk), "kiln warm never took a render lock"
        seen = _nice_values(warm.pid)
        out, err = warm.communicate(timeout=120)
    finally:
        if warm.poll() is None:
            warm.kill()
    assert warm.returncode == 0, out + err
    assert seen == {13}, f"niceness of kiln warm's threads while rendering: {seen}"
