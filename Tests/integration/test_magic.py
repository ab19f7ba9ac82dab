"""A worker that cannot load libmagic's database refuses to start (it would otherwise answer
every request with a 415, negatively cached). libmagic's default database honours the MAGIC
environment variable, so a MAGIC naming a file that is not a magic database stands in for a
broken installation."""
from __future__ import annotations

import subprocess

from helpers import BENCH, KILN_BIN, PHOTO_HD


def bogus_magic(tmp_path):
    p = tmp_path / "bogus.mgc"
    p.write_bytes(b"this is not a compiled magic database\n" * 10)
    return p


def test_process_fails_clearly_without_the_magic_database(tmp_path):
    magic = bogus_magic(tmp_path)
    out = tmp_path / "out.jpg"
    r = subprocess.run([str(KILN_BIN), "process", str(BENCH / PHOTO_HD), "w:100", str(out)],
                       capture_output=True, text=True, timeout=60, env={"MAGIC": str(magic), "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0, f"kiln process succeeded without a magic database: {r.stdout} {r.stderr}"
    assert "cannot load the libmagic database" in r.stderr and str(magic) in r.stderr, r.stderr
    assert not out.exists()


def test_serve_refuses_to_start_without_the_magic_database(tmp_path):
    """`kiln serve` builds the pipeline once at start to check the settings, so a missing database
    stops the master before any worker starts (a worker that meets one later logs one line and
    exits non-zero at start, and the master's crash-loop guard paces the restarts)."""
    magic = bogus_magic(tmp_path)
    sock = tmp_path / "kiln.sock"
    r = subprocess.run([str(KILN_BIN), "serve", "--listen", f"unix:{sock}", "--workers", "1", "--root", str(BENCH), "--set", "cache.disk_path="],
                       capture_output=True, text=True, timeout=60, env={"MAGIC": str(magic), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 2, f"kiln serve did not refuse to start (exit {r.returncode}): {r.stderr[-2000:]}"
    # Kiln's own reason is one line (libmagic prints its parse warnings before it), not a trap.
    last = r.stderr.strip().splitlines()[-1]
    assert "Fatal error" not in r.stderr and last.startswith("kiln: invalid configuration: cannot load the libmagic database"), r.stderr[-2000:]
    assert "cannot load the libmagic database" in r.stderr and str(magic) in r.stderr, r.stderr[-2000:]
