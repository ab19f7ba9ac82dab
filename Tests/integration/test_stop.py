"""Nothing lost on stop (issue 14): SIGTERM answers every connection already queued on the
listening socket before the workers exit, within server.shutdown_timeout; new connections are
refused at once; a reload hands the queue to the new generation; temporary cache files left by a
killed writer are removed at the next start.

Each test runs its own kiln behind its own nginx (2 workers) and sends slow renders: the sleep
processor (`sleep:<ms>`, debug.sleep_processor), 3 s each whatever the machine's speed, with a
different width per request so that no cache answers one of them. server.queue_timeout=0: the queued requests must wait in the queue
here, not be answered 503 by the master's back-pressure (test_backpressure.py)."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from helpers import SLEEP_ON, sleep_url
from stack import alive, socket_accepts

N = 6
WORKERS = 2
SLEEP_MS = 3000


def slow_url(i: int) -> str:
    return sleep_url(SLEEP_MS, 100 + i)


def _listen_queue(sock_path) -> int | None:
    """Connections waiting in the listening unix socket's queue (ss's Recv-Q); None when ss
    cannot tell."""
    try:
        out = subprocess.run(["ss", "-xlnH"], capture_output=True, text=True, timeout=5).stdout
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if str(sock_path) in line:
            try:
                return int(line.split()[2])
            except (IndexError, ValueError):
                return None
    return None


def _send_burst(client, n: int) -> tuple[list, list[threading.Thread]]:
    results: list = [None] * n

    def one(i):
        t0 = time.monotonic()
        try:
            r = client.get(slow_url(i), timeout=90)
            results[i] = (r.status, time.monotonic() - t0, r.body)
        except Exception as e:  # noqa: BLE001
            results[i] = ("error", time.monotonic() - t0, repr(e))

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    return results, threads


def _wait_queued(s, queued: int, timeout: float = 20) -> int:
    """Waits until `queued` connections wait in the listen queue (the workers being busy with the
    others); returns the last count seen. Fails the test when ss cannot tell."""
    deadline = time.monotonic() + timeout
    seen = _listen_queue(s.sock)
    assert seen is not None, "ss cannot show the listen queue of the unix socket"
    # More than `queued` for a moment while a worker is still starting.
    while seen != queued and time.monotonic() < deadline:
        time.sleep(0.02)
        seen = _listen_queue(s.sock) or 0
    return seen


def _valid_jpeg(body: bytes, width: int) -> str | None:
    from PIL import Image
    try:
        im = Image.open(io.BytesIO(body))
        im.load()
    except Exception as e:  # noqa: BLE001
        return f"not a whole image ({len(body)} bytes): {e}"
    return None if im.format == "JPEG" and im.size[0] == width else f"{im.format} {im.size}"


def _wait_exit(s, timeout: float) -> int | None:
    try:
        code = s.kiln.wait(timeout)
    except subprocess.TimeoutExpired:
        return None
    s.exit_code = code
    return code


def test_sigterm_answers_every_queued_request(make_stack):
    """6 slow requests on 2 workers: 2 in progress and 4 queued when SIGTERM arrives; all 6 get a
    whole 200. A request sent after SIGTERM is refused at once (nginx's 502, not a wait), and the
    master exits once the queue is done, well within shutdown_timeout."""
    timeout = 60
    s = make_stack(workers=WORKERS, extra_args=["--set", f"server.shutdown_timeout={timeout}s", "--set", "server.queue_timeout=0", *SLEEP_ON])
    workers = s.wait_workers()
    client = s.client()
    results, threads = _send_burst(client, N)
    queued = _wait_queued(s, N - WORKERS)
    assert queued == N - WORKERS, f"expected {N - WORKERS} queued connections, ss shows {queued}\n{s.logs()}"
    assert all(r is None for r in results), f"requests finished before SIGTERM: the test proves nothing: {results}"

    t_stop = time.monotonic()
    s.kiln.send_signal(signal.SIGTERM)
    # New connections are refused at once while the queue is being answered.
    deadline = time.monotonic() + 2
    while socket_accepts(s.sock) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not s.sock.exists(), "the socket file is still there after SIGTERM"
    t0 = time.monotonic()
    late = client.get("/w:10/f:jpeg/pillow_hopper.jpg", timeout=10)
    late_took = time.monotonic() - t0
    draining = s.kiln.poll() is None

    for t in threads:
        t.join(90)
    code = _wait_exit(s, timeout)
    stop_took = time.monotonic() - t_stop

    bad = []
    for i, r in enumerate(results):
        if r is None or r[0] != 200:
            bad.append(f"#{i}: {r if r is None else r[:2]} {r[2][:100] if r else ''!r}")
        elif why := _valid_jpeg(r[2], 100 + i):
            bad.append(f"#{i}: {why}")
    assert not bad, "queued requests lost on SIGTERM:\n" + "\n".join(bad) + "\n" + s.logs()
    assert draining, "the master had exited before the late request: the check below proves nothing"
    assert late.status == 502 and late_took < 2, \
        f"a request after SIGTERM must be refused at once: {late.status} after {late_took:.2f} s"
    assert code == 0, f"master exit status {code} (None: still running {timeout} s after SIGTERM)\n{s.logs()}"
    assert stop_took < timeout
    log = s.kiln_log.read_text(errors="replace")
    assert "queued connections after the stop signal" in log, log[-3000:]
    assert "SIGKILL" not in log, log[-3000:]
    deadline = time.monotonic() + 5
    while [p for p in workers if alive(p)] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [p for p in workers if alive(p)]


def test_sigterm_stops_at_shutdown_timeout(make_stack):
    """With a shutdown_timeout shorter than the queued work, the master kills the workers at the
    bound (logged): it exits on time, the requests not answered by then get nginx's 502, none
    hangs."""
    timeout = 1
    s = make_stack(workers=WORKERS, extra_args=["--set", f"server.shutdown_timeout={timeout}s", "--set", "server.queue_timeout=0", *SLEEP_ON])
    client = s.client()
    results, threads = _send_burst(client, N)
    queued = _wait_queued(s, N - WORKERS)
    assert queued == N - WORKERS, f"expected {N - WORKERS} queued connections, ss shows {queued}\n{s.logs()}"

    t_stop = time.monotonic()
    s.kiln.send_signal(signal.SIGTERM)
    code = _wait_exit(s, timeout + 10)
    stop_took = time.monotonic() - t_stop
    for t in threads:
        t.join(30)

    assert code == 0, f"master exit status {code}\n{s.logs()}"
    assert stop_took < timeout + 3, f"the master took {stop_took:.1f} s with shutdown_timeout = {timeout} s"
    assert all(r is not None for r in results), f"requests still hanging after the stop: {results}"
    statuses = [r[0] for r in results]
    assert set(statuses) <= {200, 502}, statuses
    # 4 × 3 s of queued work on 2 workers cannot fit into 1 s.
    assert statuses.count(502) >= 1, f"everything was answered within {timeout} s: the test proves nothing: {statuses}"
    log = s.kiln_log.read_text(errors="replace")
    assert "still running after shutdown_timeout; sending SIGKILL" in log \
        or "stopped draining the queue at shutdown_timeout" in log, log[-3000:]


def test_sighup_hands_the_queue_to_the_new_generation(make_stack):
    """A reload while 4 requests are queued: the old workers finish their request and leave
    without draining; the new generation answers the queue; all 6 get a 200."""
    s = make_stack(workers=WORKERS, extra_args=["--set", "server.shutdown_timeout=60s", "--set", "server.queue_timeout=0", *SLEEP_ON])
    old = set(s.wait_workers())
    client = s.client()
    results, threads = _send_burst(client, N)
    queued = _wait_queued(s, N - WORKERS)
    assert queued == N - WORKERS, f"expected {N - WORKERS} queued connections, ss shows {queued}\n{s.logs()}"
    os.kill(s.master_pid, signal.SIGHUP)
    for t in threads:
        t.join(90)
    statuses = [r[0] if r else None for r in results]
    assert statuses == [200] * N, f"{statuses}\n{s.logs()}"
    deadline = time.monotonic() + 10
    while [p for p in old if alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in old if alive(p)], "the old generation did not exit"
    assert s.kiln.poll() is None
    log = s.kiln_log.read_text(errors="replace")
    assert "SIGKILL" not in log, log[-3000:]


def test_stale_temp_files_removed_at_start(make_stack, disk: Path):
    """A temporary cache file whose writer died (the pid in its name no longer exists) is removed
    when kiln starts, and logged; a temporary file of a live process is kept (it is being
    written)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert not alive(dead.pid)
    tmp = disk / "tmp"
    tmp.mkdir()
    stale = tmp / f"0123456789abcdef.{dead.pid}.1"
    stale.write_bytes(b"KILN" + b"\0" * 100_000)
    live = tmp / f"fedcba9876543210.{os.getpid()}.1"
    live.write_bytes(b"KILN" + b"\0" * 1000)
    s = make_stack(workers=1, with_nginx=False, extra_args=["--set", f"cache.disk_path={disk}"])
    deadline = time.monotonic() + 10
    while stale.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not stale.exists(), f"a dead writer's temporary file survived the start\n{s.logs()}"
    assert live.exists(), "a live writer's temporary file was removed"
    log = s.kiln_log.read_text(errors="replace")
    assert "removed 1 temporary files" in log and "by writers that died" in log, log[-3000:]
