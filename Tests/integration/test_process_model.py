"""Master and workers: respawn, graceful stop with requests in flight, reload, socket modes,
configuration flags. Tests that stop or reconfigure kiln use their own instance."""
from __future__ import annotations

import io
import os
import signal
import stat
import subprocess
import threading
import time

from fcgiclient import IncompleteResponse, fcgi_params, fcgi_request
from helpers import SLEEP_ON, SLOW_SOURCE
from stack import alive, socket_accepts

SLOW = f"/rs:300:300/sleep:2000/f:jpeg/{SLOW_SOURCE}"  # 640x427 fit in 300x300: 300x200, after 2 s


def test_socket_mode_0666_when_asked(stack):
    mode = stat.S_IMODE(os.stat(stack.sock).st_mode)
    assert mode == 0o666, f"--socket-mode 0666 gave {oct(mode)}"
    assert stat.S_ISSOCK(os.stat(stack.sock).st_mode)


def test_socket_mode_default_0660(make_stack):
    s = make_stack(workers=1, socket_mode=None, with_nginx=False)
    mode = stat.S_IMODE(os.stat(s.sock).st_mode)
    assert mode == 0o660, f"default socket mode is {oct(mode)}, the contract says 0660"


def test_worker_respawn_after_sigkill(stack, client):
    before = stack.wait_workers()
    assert len(before) == stack.workers, before
    victim = before[0]
    os.kill(victim, signal.SIGKILL)
    t0 = time.monotonic()
    after = stack.wait_workers(timeout=2.0, exclude={victim})
    took = time.monotonic() - t0
    assert victim not in after and len(after) == stack.workers, \
        f"no replacement worker within 2 s: before {before}, after {after}"
    assert set(before[1:]) <= set(after), "the other workers should keep running"
    assert took <= 2.0
    for _ in range(6):
        r, im = client.image("/w:50/f:png/pillow_hopper.jpg")
        assert im.size == (50, 50)


def test_direct_fastcgi_without_nginx(stack):
    """kiln also works without nginx (no DOCUMENT_URI: it parses REQUEST_URI)."""
    r = fcgi_request(stack.sock, fcgi_params("GET", "/w:64/f:png/pillow_hopper.jpg?x=1"))
    assert r.status == 200, f"{r.status} {r.body[:200]!r}"
    assert r.content_type == "image/png"
    from PIL import Image
    assert Image.open(io.BytesIO(r.body)).size == (64, 64)


def _listen_queue_empty(sock_path) -> bool | None:
    """Recv-Q of the listening unix socket (connections not yet accepted) via `ss`; None when
    ss cannot tell."""
    try:
        out = subprocess.run(["ss", "-xlnH"], capture_output=True, text=True, timeout=5).stdout
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if str(sock_path) in line:
            fields = line.split()
            try:
                return int(fields[2]) == 0
            except (IndexError, ValueError):
                return None
    return None


def test_graceful_stop_finishes_in_flight_requests(make_stack):
    """SIGTERM to the master while 20 slow requests are in flight.

    The instance has 20 workers, so every request is accepted by a worker at once (checked
    with the socket's listen queue) and is genuinely in flight when SIGTERM arrives: each
    must get a complete 200 with a valid image. Requests sent after the stop (once the
    socket refuses connections) must fail cleanly at connect (refused / no such socket),
    without hanging. All kiln processes must be gone within the timeout and the master must
    exit with status 0. Talks FastCGI straight to the socket: nginx would turn a refused
    connection into a 502 and hide the difference."""
    n = 20
    s = make_stack(workers=n, with_nginx=False, extra_args=SLEEP_ON)
    workers = s.wait_workers(n, timeout=5)
    assert len(workers) == n, f"expected {n} workers, have {len(workers)}"

    results: list = [None] * n
    started = threading.Barrier(n + 1)

    def one(i):
        started.wait()
        try:
            results[i] = fcgi_request(s.sock, fcgi_params("GET", SLOW), timeout=60)
        except Exception as e:  # noqa: BLE001
            results[i] = e

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    started.wait()
    # Wait until every connection has been accepted by a worker (or 0.5 s when ss can't say).
    deadline = time.monotonic() + 3
    time.sleep(0.05)
    while time.monotonic() < deadline:
        empty = _listen_queue_empty(s.sock)
        if empty is None:
            time.sleep(0.5)
            break
        if empty:
            break
        time.sleep(0.02)
    still_running = sum(1 for t in threads if t.is_alive())
    t_stop = time.monotonic()
    s.kiln.send_signal(signal.SIGTERM)

    # After the stop: once the socket refuses, new requests fail at connect, quickly.
    refuse_deadline = time.monotonic() + 20
    while socket_accepts(s.sock) and time.monotonic() < refuse_deadline and s.kiln.poll() is None:
        time.sleep(0.02)
    late = []
    if not socket_accepts(s.sock):
        for _ in range(3):
            t0 = time.monotonic()
            try:
                r = fcgi_request(s.sock, fcgi_params("GET", "/w:10/pillow_hopper.jpg"), timeout=5)
                late.append(("answered", r.status))
            except (FileNotFoundError, ConnectionRefusedError) as e:
                late.append(("refused", type(e).__name__))
            except Exception as e:  # noqa: BLE001
                late.append(("bad", repr(e)))
            assert time.monotonic() - t0 < 5

    for t in threads:
        t.join(70)
    try:
        code = s.kiln.wait(30)
    except subprocess.TimeoutExpired:
        code = None
    stop_took = time.monotonic() - t_stop

    assert still_running > 0, "all requests had finished before SIGTERM; the test proves nothing"
    bad = []
    from PIL import Image
    for i, r in enumerate(results):
        if isinstance(r, BaseException) or r is None:
            bad.append(f"#{i}: {r!r}")
        elif r.status != 200:
            bad.append(f"#{i}: status {r.status} {r.body[:100]!r}")
        else:
            try:
                im = Image.open(io.BytesIO(r.body))
                im.load()
                assert im.size == (300, 200)
            except Exception as e:  # noqa: BLE001
                bad.append(f"#{i}: truncated or invalid image of {len(r.body)} bytes: {e}")
    assert not bad, f"in-flight requests did not complete after SIGTERM ({still_running} running):\n" \
                    + "\n".join(bad) + "\n" + s.logs()
    assert all(kind in ("refused", "answered") for kind, _ in late), f"requests after the stop: {late}"
    assert all(v == 200 for kind, v in late if kind == "answered"), late
    assert code == 0, f"master exit status {code} (None: still running 30 s after the last request)\n{s.logs()}"
    assert stop_took < 30
    leftover = [p for p in workers if alive(p)]
    deadline = time.monotonic() + 5
    while leftover and time.monotonic() < deadline:
        time.sleep(0.05)
        leftover = [p for p in workers if alive(p)]
    assert not leftover, f"workers still running after the master exited: {leftover}"
    s.exit_code = code


def test_sigterm_idle_exits_quickly(make_stack):
    s = make_stack(workers=2, with_nginx=False)
    workers = s.wait_workers()
    t0 = time.monotonic()
    s.kiln.send_signal(signal.SIGTERM)
    code = s.kiln.wait(10)
    assert code == 0
    assert time.monotonic() - t0 < 5, "an idle server should stop at once"
    deadline = time.monotonic() + 5
    while [p for p in workers if alive(p)] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [p for p in workers if alive(p)]
    assert not socket_accepts(s.sock)
    s.exit_code = code


def test_workers_exit_when_master_is_killed(make_stack):
    """No orphaned workers holding the socket when the master dies hard."""
    s = make_stack(workers=2, with_nginx=False)
    workers = s.wait_workers()
    os.kill(s.master_pid, signal.SIGKILL)
    s.kiln.wait(5)
    s.exit_code = -9
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and [p for p in workers if alive(p)]:
        time.sleep(0.05)
    left = [p for p in workers if alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, f"workers {left} outlived the killed master by 3 s"


def test_sighup_reload_keeps_serving(make_stack):
    s = make_stack(workers=2, with_nginx=False)
    s.wait_workers()
    os.kill(s.master_pid, signal.SIGHUP)
    deadline = time.monotonic() + 5
    ok = 0
    while time.monotonic() < deadline and ok < 5:
        try:
            r = fcgi_request(s.sock, fcgi_params("GET", "/w:32/f:png/pillow_hopper.jpg"), timeout=10)
            if r.status == 200:
                ok += 1
        except (OSError, IncompleteResponse):
            pass
        time.sleep(0.05)
    assert s.kiln.poll() is None, f"master exited on SIGHUP ({s.kiln.returncode})\n{s.logs()}"
    assert ok == 5, f"only {ok} good answers within 5 s of SIGHUP\n{s.logs()}"
    assert len(s.wait_workers(timeout=3)) == 2


def test_config_flag_sets_limits(make_stack):
    """`--set limits.max_pixels=...` (and the environment form) reach the workers."""
    for kw in ({"extra_args": ["--set", "limits.max_pixels=1000000"]},
               {"env": {"KILN_LIMITS_MAX_PIXELS": "1000000"}}):
        s = make_stack(workers=1, with_nginx=False, **kw)
        big = fcgi_request(s.sock, fcgi_params("GET", "/w:100/photo_1920x1080.jpg"))
        small = fcgi_request(s.sock, fcgi_params("GET", "/w:100/skimage_rocket.jpg"))
        assert big.status == 413, f"{kw}: 2 MP source over a 1 MP limit gave {big.status} {big.body[:100]!r}"
        assert small.status == 200, f"{kw}: 0.27 MP source gave {small.status} {small.body[:100]!r}"


def test_config_file(make_stack, tmp_path):
    conf = tmp_path / "kiln.toml"
    conf.write_text("# test\n[limits]\nmax_pixels = 1_000_000\n")
    s = make_stack(workers=1, with_nginx=False, extra_args=["--config", str(conf)])
    r = fcgi_request(s.sock, fcgi_params("GET", "/w:100/photo_1920x1080.jpg"))
    assert r.status == 413, f"{r.status} {r.body[:100]!r}"


def _serve_must_fail(args: list[str]) -> subprocess.CompletedProcess:
    """Runs `kiln serve ...` that must exit at start; kills it (and its workers) if it does not."""
    from helpers import KILN_BIN
    from stack import child_pids
    p = subprocess.Popen([str(KILN_BIN), "serve", "--set", "cache.disk_path=", *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        for pid in child_pids(p.pid):
            os.kill(pid, signal.SIGKILL)
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"kiln serve {' '.join(args)} kept running; it should have refused to start")
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_bad_configuration_fails_at_start(tmp_path):
    p = _serve_must_fail(["--listen", f"unix:{tmp_path}/k.sock", "--workers", "1", "--root", str(tmp_path),
                          "--set", "limits.max_pixels=lots"])
    assert p.returncode != 0, "an invalid value must stop the server at start"
    assert "max_pixels" in (p.stderr + p.stdout), f"the error should name the key: {p.stderr!r}"


def test_missing_root_fails_at_start(tmp_path):
    p = _serve_must_fail(["--listen", f"unix:{tmp_path}/k.sock", "--workers", "1", "--root", str(tmp_path / "nope")])
    assert p.returncode != 0
    assert not (tmp_path / "k.sock").exists() or not socket_accepts(tmp_path / "k.sock")
