"""The first hour (issue 41), on the server: what `kiln serve` says at start about its socket and
its caches, the disk cache on by default, `kiln reload` reporting the master's verdict, and
purges from the command line going through the running server, which logs each as one line and
empties every worker's memory of the source even when the disk held nothing of it. The README's
literal run is test_readme_run.py; the docs' quoted messages test_docs_messages.py."""
from __future__ import annotations

import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cachefiles import entry_files, entry_source_path
from fcgiclient import fcgi_params, fcgi_request
from helpers import KILN_BIN
from test_purge_tiers import SECRET, X, X_URL, Y_URL, access_lines, entries_of, get, log_size, serve


def run_kiln(*args, cwd=None, env=None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(KILN_BIN), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=cwd, env=env)


def log_text(s, offset: int = 0) -> str:
    with open(s.kiln_log, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def wait_for_log(s, pattern: str, offset: int = 0, timeout: float = 20) -> re.Match:
    deadline = time.monotonic() + timeout
    while not (m := re.search(pattern, log_text(s, offset))):
        assert time.monotonic() < deadline, f"no {pattern!r} in the log:\n{log_text(s, offset)[-3000:]}"
        time.sleep(0.05)
    return m


# -- start: the socket and the caches ------------------------------------------------------

def test_start_log_names_the_socket_access_and_warns_when_nginx_is_locked_out(make_stack):
    ok = make_stack(workers=1, with_nginx=False)
    line = wait_for_log(ok, r'socket \S+kiln\.sock: owner (\S+), group (\S+), mode (0\d+)')
    assert line[3] == "0666"
    assert "cannot connect" not in log_text(ok)
    locked = make_stack(workers=1, with_nginx=False, socket_mode="0600")
    wait_for_log(locked, r"socket \S+kiln\.sock: owner \S+, group \S+, mode 0600")
    if os.geteuid() == 0:  # root's own socket: nginx's www-data (or nobody) is someone else
        warning = wait_for_log(locked, r'level=warning .*cannot connect to \S+kiln\.sock.*server\.socket_group')
        assert "502" in warning[0]


def test_memory_only_mode_says_what_it_gives_up(make_stack):
    s = make_stack(workers=1, with_nginx=False)  # the tests' stacks turn the disk cache off
    line = wait_for_log(s, r"no disk cache \(cache\.disk_path is empty\)[^\n]*")[0]
    assert "nothing is shared between workers" in line and "purges cannot reach" in line


def test_the_disk_cache_is_on_by_default_under_systemds_cache_directory(make_stack, tmp_path):
    folder = tmp_path / "state-cache"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    s = make_stack(workers=2, with_nginx=False, env={"CACHE_DIRECTORY": str(folder)})
    wait_for_log(s, rf"disk cache {re.escape(str(folder))} \(the default")
    firsts = Counted(s, plain=True).first_answers("/w:48/pillow_hopper.jpg", 0)
    # One render for both workers: the other's first answer came from the shared disk cache, or
    # waited on the render's lock (without a disk cache each worker's first answer is a MISS).
    assert sorted(firsts.values()) in (["HIT-DISK", "MISS"], ["COALESCED", "MISS"]), firsts
    assert len(entry_files(folder)) == 1


def test_tools_use_the_default_disk_cache_only_where_it_exists(tmp_path, root):
    # No kiln-cache here: the tools say there is no disk cache (exit 1), and make no folder.
    p = run_kiln("cache", "stats", "--root", root, cwd=tmp_path)
    assert p.returncode == 1 and "no disk cache" in p.stderr and "cache.disk_path" in p.stderr, p.stderr
    assert not (tmp_path / "kiln-cache").exists()
    # Where kiln serve made it, they use it.
    (tmp_path / "kiln-cache").mkdir()
    p = run_kiln("cache", "stats", "--root", root, cwd=tmp_path)
    assert p.returncode == 0 and f"disk cache {tmp_path}/kiln-cache" in p.stdout, (p.stdout, p.stderr)


# -- purges from the command line ----------------------------------------------------------

def purge(s, disk: Path, root: Path, *more: str) -> subprocess.CompletedProcess:
    return run_kiln("cache", "purge", "--root", root, "--listen", f"unix:{s.sock}", "--set", f"cache.disk_path={disk}",
                    "--set", f"server.peer_secret={SECRET}", *more)


class Counted:
    """Requests to one stack, counted, so the log can be read only once every answer so far has
    its access line (written after the answer went out): no answer from before a purge is then
    taken for one after it."""

    def __init__(self, s, plain: bool = False):
        self.s = s
        self.sent = 0
        # `plain`: a stack without the peer secret (test_purge_tiers' `serve` sets one).
        self.plain = plain

    def fetch(self, uri: str):
        if not self.plain:
            return get(self.s, uri)
        r = fcgi_request(self.s.sock, fcgi_params("GET", uri), timeout=60)
        assert r.status == 200, r
        return r

    def get(self, uri: str):
        self.sent += 1
        return self.fetch(uri)

    def settled_offset(self) -> int:
        deadline = time.monotonic() + 20
        while len(access_lines(self.s)) < self.sent:
            assert time.monotonic() < deadline, f"{len(access_lines(self.s))} access lines for {self.sent} requests"
            time.sleep(0.01)
        return log_size(self.s)

    def first_answers(self, uri: str, offset: int) -> dict[int, str]:
        """Each worker's first X-Cache for `uri` after log byte `offset` (4 requests at a time)."""
        pids = set(self.s.worker_pids())
        deadline = time.monotonic() + 60
        with ThreadPoolExecutor(max_workers=4) as pool:
            while True:
                self.sent += 4
                list(pool.map(lambda _: self.fetch(uri), range(4)))
                self.settled_offset()
                seen: dict[int, str] = {}
                for pid, u, cache in access_lines(self.s, offset):
                    if u == uri:
                        seen.setdefault(pid, cache)
                if set(seen) >= pids:
                    return seen
                assert time.monotonic() < deadline, seen


def test_a_purge_with_nothing_on_disk_still_empties_memory_and_is_logged(make_stack, disk, root):
    s = serve(make_stack, disk)
    c = Counted(s)
    c.first_answers(X_URL, 0)
    c.first_answers(Y_URL, 0)
    for p in entry_files(disk):  # the disk holds nothing of X any more; the workers' memory does
        if entry_source_path(p) == X:
            p.unlink()
    assert c.get(X_URL).headers["x-cache"] == "HIT-MEMORY"
    offset = c.settled_offset()
    p = purge(s, disk, root, "--source", X)
    assert p.returncode == 0 and p.stdout.startswith(f"purged 0 entries (0 B) of {X} from {disk}"), (p.stdout, p.stderr)
    lines = re.findall(r"msg=\"purge of [^\n]*", log_text(s, offset))
    assert len(lines) == 1 and f"purge of {X}: removed 0 disk cache entries" in lines[0], lines
    firsts = c.first_answers(X_URL, offset)
    assert "HIT-MEMORY" not in firsts.values(), firsts
    assert c.get(Y_URL).headers["x-cache"] == "HIT-MEMORY", "Y was purged too"
    # Everything: one line too, and every worker's memory emptied.
    offset = c.settled_offset()
    p = purge(s, disk, root)
    assert p.returncode == 0 and p.stdout.startswith("purged "), (p.stdout, p.stderr)
    wait_for_log(s, r"purge of every entry: removed \d+ disk cache entries", offset)
    assert entries_of(disk, X) == 0 and entries_of(disk, "skimage_coffee.png") == 0
    assert "HIT-MEMORY" not in c.first_answers(Y_URL, offset).values()


def test_a_purge_of_another_folder_does_not_touch_the_running_server(make_stack, disk, root, tmp_path):
    s = serve(make_stack, disk)
    get(s, X_URL)
    before = entries_of(disk, X)
    other = tmp_path / "other-cache"
    other.mkdir()
    offset = log_size(s)
    p = purge(s, other, root, "--source", X)
    assert p.returncode == 0 and p.stdout.startswith(f"purged 0 entries (0 B) of {X} from {other}"), (p.stdout, p.stderr)
    assert entries_of(disk, X) == before and before >= 1
    assert "purge of" not in log_text(s, offset)


# -- kiln reload -----------------------------------------------------------------------------

def test_kiln_reload_waits_for_the_masters_verdict(make_stack, tmp_path):
    conf = tmp_path / "kiln.toml"
    conf.write_text("[server]\nmax_requests = 100\n")
    s = make_stack(workers=1, with_nginx=False, extra_args=["--config", str(conf)])
    args = ["reload", "--config", conf, "--listen", f"unix:{s.sock}"]
    p = run_kiln(*args)
    assert p.returncode == 0 and re.fullmatch(r"reloaded: master \d+, generation 2\n", p.stdout), (p.stdout, p.stderr)
    # A watermark file that is not there: the master refuses, the workers keep the old settings.
    conf.write_text(f'[server]\nmax_requests = 100\n[watermarks]\nlogo = "{tmp_path}/missing.png"\n')
    p = run_kiln(*args)
    assert p.returncode == 1 and "reload refused" in p.stderr and "missing.png" in p.stderr, (p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1
    wait_for_log(s, r"reload failed, keeping the running workers")
    # No server: a clear one-line failure.
    s.stop()
    p = run_kiln(*args)
    assert p.returncode == 1 and "no kiln server answers" in p.stderr, p.stderr
