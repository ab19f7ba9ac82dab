"""Bad input, once more (issue 9): files built to cost a decoder time or memory, and URLs of
64 KB or of thousands of options. Each answer is a 4xx with a one-line reason, costs the workers
well under a second of CPU, leaves every worker alive (the next normal request is served by the
same processes) and leaves nothing partial in the disk cache.

The files are generated here (hostilefiles.py) into the shared test root under bad_more/.
Two EXIF cases are no 4xx by design: EXIF is metadata, and Kiln reads one tag (orientation) of
IFD0 without following any offset, so an IFD that points at itself or claims 2^32 values costs
nothing; the image is served (see test_exif_loops_and_huge_counts_are_harmless).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import hostilefiles as hf
from cachefiles import all_files, check_entry, entry_files
from fcgiclient import fcgi_params, fcgi_request
from helpers import PHOTO_HD, assert_plain_error
from stack import KilnStack

CPU_BUDGET = 1.0    # seconds of worker CPU for one bad request
WALL_BUDGET = 2.0   # seconds until the answer, through nginx


def _cpu_seconds(pids: list[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / ticks


@pytest.fixture(scope="module")
def bad_root(root) -> Path:
    d = root / "bad_more"
    d.mkdir(exist_ok=True)
    files = {
        "text_chunks_50000.png": hf.png_many_text_chunks(50_000),
        "iccp_50mb.png": hf.png_huge_iccp(50 << 20),
        "ztxt_50mb.png": hf.png_ztxt_bomb(50 << 20),
        "ztxt_8mb_x900.png": hf.png_ztxt_bomb(8 << 20, count=900),
        "app_segments_1000.jpg": hf.jpeg_many_app_segments(1000),
        "scans_65535.jpg": hf.jpeg_many_scans(65_535),
        "exif_loop.jpg": hf.jpeg_with_exif(hf.exif_self_loop()),
        "exif_huge_counts.jpg": hf.jpeg_with_exif(hf.exif_huge_counts()),
    }
    for name, data in hf.webp_lying_sizes().items():
        files[f"webp_{name}.webp"] = data
    for name, data in files.items():
        (d / name).write_bytes(data)
    return d


@pytest.fixture(scope="module")
def cached_stack(root, bad_root, tmp_path_factory):
    """Two workers with a disk cache (memory cache off, so every answer goes through the disk)."""
    base = tmp_path_factory.mktemp("bad-more")
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


def _check_refused(stack: KilnStack, path: str, statuses: set[int], reason: str | None = None) -> str:
    """GET `path`: status in `statuses`, a one-line reason, within the CPU and wall budgets; the
    same workers then serve a normal request; the cache holds only whole entries."""
    workers = sorted(stack.worker_pids())
    assert len(workers) == stack.workers
    cpu_before = _cpu_seconds(workers)
    r = stack.client().get(path, timeout=30)
    cpu = _cpu_seconds(workers) - cpu_before
    assert r.status in statuses, f"{path}: {r.describe()}"
    assert_plain_error(r, path)
    text = r.body.decode().strip()
    if reason is not None:
        assert reason in text, f"{path}: {text!r}"
    assert r.elapsed < WALL_BUDGET, f"{path}: answered after {r.elapsed:.2f}s"
    assert cpu < CPU_BUDGET, f"{path}: the workers spent {cpu:.2f}s of CPU"
    ok = stack.client().get(f"/w:64/{PHOTO_HD}", timeout=20)
    assert ok.status == 200, ok.describe()
    assert sorted(stack.worker_pids()) == workers, "a worker died or was replaced"
    leftovers = [p for p in all_files(stack.disk) if p.parent.name == "tmp"]
    assert leftovers == [], f"partial files left in the cache: {leftovers}"
    for entry in entry_files(stack.disk):
        assert check_entry(entry) is None, f"{entry}: {check_entry(entry)}"
    return text


@pytest.mark.parametrize("name,reason", [
    ("text_chunks_50000.png", "more than 1000 chunks"),
])
def test_png_with_thousands_of_chunks(cached_stack, name, reason):
    _check_refused(cached_stack, f"/w:50/f:png/bad_more/{name}", {422}, reason)


@pytest.mark.parametrize("name", ["iccp_50mb.png", "ztxt_50mb.png", "ztxt_8mb_x900.png"])
def test_png_compression_bombs_in_metadata_cost_nothing(cached_stack, name):
    """An iCCP that inflates to 50 MB is dropped by libpng at its declared length (the image keeps
    no profile), and text chunks never reach libpng (so 900 zTXt bombs, a minute of CPU before,
    cost nothing). The image itself is whole, so it is served."""
    stack = cached_stack
    workers = sorted(stack.worker_pids())
    cpu_before = _cpu_seconds(workers)
    r = stack.client().get(f"/w:16/f:png/bad_more/{name}", timeout=30)
    cpu = _cpu_seconds(workers) - cpu_before
    assert r.status == 200, r.describe()
    assert r.image().size == (16, 12)
    assert r.elapsed < WALL_BUDGET, f"answered after {r.elapsed:.2f}s"
    assert cpu < CPU_BUDGET, f"the workers spent {cpu:.2f}s of CPU"
    assert sorted(stack.worker_pids()) == workers


def test_jpeg_with_a_thousand_app_segments(cached_stack):
    _check_refused(cached_stack, "/w:50/bad_more/app_segments_1000.jpg", {422}, "marker segments")


def test_progressive_jpeg_with_65535_scans(cached_stack):
    text = _check_refused(cached_stack, "/w:50/bad_more/scans_65535.jpg", {422})
    assert "corrupt image" in text


@pytest.mark.parametrize("name", sorted(hf.webp_lying_sizes()))
def test_webp_whose_sizes_lie(cached_stack, name):
    _check_refused(cached_stack, f"/w:50/bad_more/webp_{name}.webp", {422}, "corrupt image")


@pytest.mark.parametrize("name,orientation_applied", [("exif_loop.jpg", True), ("exif_huge_counts.jpg", True)])
def test_exif_loops_and_huge_counts_are_harmless(cached_stack, name, orientation_applied):
    """IFD0 is read once, entry by entry within the payload: a self-pointing IFD and counts of
    2^32 - 1 cost nothing. Both files carry orientation 6 (rotate 90°) in IFD0, which is applied."""
    stack = cached_stack
    workers = sorted(stack.worker_pids())
    cpu_before = _cpu_seconds(workers)
    r = stack.client().get(f"/w:24/f:png/bad_more/{name}", timeout=30)
    cpu = _cpu_seconds(workers) - cpu_before
    assert r.status == 200, r.describe()
    # 32x24 stored, orientation 6: displayed 24x32.
    assert r.image().size == ((24, 32) if orientation_applied else (24, 18))
    assert cpu < CPU_BUDGET, f"the workers spent {cpu:.2f}s of CPU"
    assert sorted(stack.worker_pids()) == workers


def test_url_of_64_kb(cached_stack):
    long_name = "a" * 65_536 + ".jpg"
    # Through nginx: its request-line buffer (8 KB by default) answers 414 before kiln.
    r = cached_stack.client().get(f"/w:50/{long_name}", timeout=10)
    assert r.status == 414, r.describe()
    # Straight to kiln (another front server, a larger nginx buffer): limits.max_path_bytes.
    workers = sorted(cached_stack.worker_pids())
    cpu_before = _cpu_seconds(workers)
    start = time.monotonic()
    f = fcgi_request(cached_stack.sock, fcgi_params("GET", f"/w:50/{long_name}"), timeout=10)
    elapsed = time.monotonic() - start
    assert f.status == 400, f"{f.status} {f.body[:200]!r}"
    text = f.body.decode().strip()
    assert "\n" not in text and "path too long" in text and "at most 8192" in text, text
    assert elapsed < WALL_BUDGET
    assert _cpu_seconds(workers) - cpu_before < CPU_BUDGET
    # Just under the limit (and under nginx's buffer) the path is parsed: a 404 for the missing file.
    short = "/w:50/" + "b" * (8_000 - len("/w:50/") - 4) + ".jpg"
    r = cached_stack.client().get(short, timeout=10)
    assert r.status == 404, r.describe()
    assert sorted(cached_stack.worker_pids()) == workers


def test_url_with_thousands_of_options(cached_stack):
    options = "/".join(["q:80"] * 1500)  # 7.5 KB: under nginx's buffer
    text = _check_refused(cached_stack, f"/{options}/{PHOTO_HD}", {400}, "at most 64 options per URL")
    assert text.startswith("bad option"), text
    # Flags and sizes mixed, through the friendly aliases: the same limit.
    mixed = "/".join(["gs", "w:10", "sepia", "f:png"] * 300)
    _check_refused(cached_stack, f"/{mixed}/{PHOTO_HD}", {400}, "at most 64 options per URL")


def test_options_limit_is_configurable(make_stack):
    stack = make_stack(workers=1, extra_args=["--set", "limits.max_options=3"])
    c = stack.client()
    assert c.get(f"/w:40/q:70/f:png/{PHOTO_HD}", timeout=20).status == 200
    r = c.get(f"/w:40/q:70/f:png/gs/{PHOTO_HD}", timeout=20)
    assert r.status == 400, r.describe()
    assert "at most 3 options per URL" in r.body.decode(), r.describe()
