"""A worker that cannot load libmagic's database refuses to start (it would otherwise answer
every request with a 415, negatively cached). libmagic's default database honours the MAGIC
environment variable, so a MAGIC naming a file that is not a magic database stands in for a
broken installation."""
from __future__ import annotations

import subprocess
import time

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


def test_workers_refuse_to_start_without_the_magic_database(make_stack, tmp_path):
    magic = bogus_magic(tmp_path)
    s = make_stack(workers=2, with_nginx=False, env={"MAGIC": str(magic)})
    deadline = time.monotonic() + 20
    log = ""
    while time.monotonic() < deadline:
        log = s.kiln_log.read_text(errors="replace")
        if "crash loop" in log:
            break
        time.sleep(0.2)
    lines = [line for line in log.splitlines() if "cannot load the libmagic database" in line]
    assert lines, f"no worker said why it did not start:\n{s.logs()}"
    assert all("does not start" in line for line in lines), lines
    assert "crash loop" in log, f"the master's crash-loop guard did not engage:\n{s.logs()}"
    assert s.kiln.poll() is None, "the master itself must keep running (and keep retrying)"
