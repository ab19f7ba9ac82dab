"""Hostile files and requests (issue 9): a FIFO in place of a source or of a disk-cache entry
never holds a worker, a symlinked `server.pid_file` refuses the start, a NUL in the path is a
400, and numeric option arguments have one grammar."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from cachefiles import entry_files
from fcgiclient import fcgi_params, fcgi_request
from helpers import KILN_BIN, PHOTO_HD


def test_fifo_in_place_of_a_source_is_404_without_blocking_a_worker(stack, client, root):
    fifo = root / "hostile_fifo.jpg"
    os.mkfifo(fifo)
    try:
        workers = sorted(stack.worker_pids())
        # More requests than workers: one stuck in open() would leave the rest unanswered.
        for path in ("/w:100/hostile_fifo.jpg", "/-/hostile_fifo.jpg", "/w:100/hostile_fifo.jpg",
                     "/f:png/hostile_fifo.jpg"):
            r = client.get(path, timeout=5)
            assert r.status == 404, f"{path}: {r.describe()}"
            assert r.elapsed < 2, f"{path}: answered after {r.elapsed:.1f}s"
        assert client.get(f"/w:64/{PHOTO_HD}", timeout=10).status == 200
        assert sorted(stack.worker_pids()) == workers
    finally:
        fifo.unlink()


def test_fifo_in_place_of_a_disk_cache_entry_is_a_miss(make_stack, disk):
    # Memory cache off: the second request must read the disk cache.
    stack = make_stack(workers=2, extra_args=["--set", f"cache.disk_path={disk}",
                                              "--set", "cache.memory_count_limit=0"])
    c = stack.client()
    path = "/rs:120:80:fill/f:png/pillow_hopper.jpg"
    before = set(entry_files(disk))
    first = c.get(path, timeout=10)
    assert first.status == 200, first.describe()
    new = set(entry_files(disk)) - before
    assert len(new) == 1, new
    entry = new.pop()
    workers = sorted(stack.worker_pids())
    entry.unlink()
    os.mkfifo(entry)
    for _ in range(4):  # more than the workers: none may be held by the FIFO
        r = c.get(path, timeout=5)
        assert r.status == 200, r.describe()
        assert r.elapsed < 3, f"answered after {r.elapsed:.1f}s"
        assert r.body == first.body
    assert sorted(stack.worker_pids()) == workers
    assert entry.is_file(), "the FIFO was not replaced by a re-rendered entry"


def test_pid_file_symlink_refuses_the_start(environment_ok, root, tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    link = tmp_path / "kiln.pid"
    link.symlink_to(target)
    sock = tmp_path / "kiln.sock"
    r = subprocess.run([str(KILN_BIN), "serve", "--listen", f"unix:{sock}", "--workers", "1",
                        "--root", str(root), "--set", f"server.pid_file={link}", "--set", "cache.disk_path="],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "server.pid_file" in out, out
    assert "symbolic link" in out, out
    assert target.read_text() == "keep me\n"
    assert link.is_symlink() and os.readlink(link) == str(target)


def test_nul_in_the_path_is_400(stack, client):
    r = client.get(f"/w:100/{PHOTO_HD}%00.png", timeout=10)
    assert r.status == 400, r.describe()
    # Straight to kiln, as nginx would pass it: REQUEST_URI raw, DOCUMENT_URI decoded (with the NUL
    # byte, or cut at it as libfcgi's C strings once did, silently serving photo_1920x1080.jpg).
    for request_uri, document_uri in ((f"/w:100/{PHOTO_HD}%00.png", f"/w:100/{PHOTO_HD}\0.png"),
                                      (f"/w:100%00/{PHOTO_HD}", f"/w:100\0/{PHOTO_HD}"),
                                      (f"/w:100/{PHOTO_HD}%00.png", None)):
        f = fcgi_request(stack.sock, fcgi_params("GET", request_uri, document_uri=document_uri), timeout=10)
        assert f.status == 400, f"{request_uri!r}: {f.status} {f.body[:200]!r}"
        assert b"NUL" in f.body, f.body[:200]


def test_numbers_have_one_grammar(client):
    for option in ("dpr:0x2", "bl:1e-300", "bl:nan", "dpr:inf", "w:+5"):
        r = client.get(f"/w:100/{option}/{PHOTO_HD}", timeout=10)
        assert r.status == 400, f"{option}: {r.describe()}"
        assert option.encode() in r.body, f"{option}: {r.body[:200]!r}"
    assert client.get(f"/w:100/dpr:1.5/bl:0.5/{PHOTO_HD}", timeout=20).status == 200
