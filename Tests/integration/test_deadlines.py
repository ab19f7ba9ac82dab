"""Render deadlines and abandoned work (issue 14): a request still running at
limits.render_timeout is killed by the master, which names its URL and stage (and the slow log
names it earlier, at limits.slow_log_after) while the other worker keeps serving; a request
whose web server has gone is not rendered; three identical slow requests cause one render even
when the render outlasts cache.lock_timeout; a worker that grew past limits.max_worker_memory is
replaced after its request.

Slow renders: the sleep processor (`sleep:<ms>`, debug.sleep_processor), a render of an exact
length whatever the machine's speed, with a different width per request so that no cache answers
one of them. Time bounds compare with the configured deadlines only."""
from __future__ import annotations

import re
import socket
import threading
import time

from helpers import PHOTO_12MP, SLEEP_ON, sleep_url, status_json, wait_for_worker
from stack import alive

RENDER_TIMEOUT = 2.0  # limits.render_timeout of the kill test


def slow_url(i: int, ms: int) -> str:
    return sleep_url(ms, 100 + i)


def _log(s) -> str:
    return s.kiln_log.read_text(errors="replace")


def _wait_log(s, pattern: str, timeout: float) -> re.Match | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(pattern, _log(s))
        if m:
            return m
        time.sleep(0.05)
    return None


def test_slow_render_is_killed_at_its_deadline_and_logged_with_its_stage(make_stack):
    s = make_stack(workers=2, extra_args=["--set", f"limits.render_timeout={RENDER_TIMEOUT}s", "--set", "limits.slow_log_after=0.4s",
                                          "--set", "server.queue_timeout=0", *SLEEP_ON])
    before = set(s.wait_workers())
    client = s.client()
    url = slow_url(1, 20_000)  # ten times the deadline: only the kill ends it early
    result: dict = {}

    def slow():
        t0 = time.monotonic()
        r = client.get(url, timeout=60)
        result["slow"] = (r.status, time.monotonic() - t0, time.monotonic())

    t = threading.Thread(target=slow, daemon=True)
    t.start()
    # While it renders, the other worker keeps answering small requests at once.
    assert wait_for_worker(client, url), f"the slow request never reached a worker\n{s.logs()}"
    small = []
    while t.is_alive() and len(small) < 20:
        t0 = time.monotonic()
        r = client.get(f"/w:{20 + len(small)}/f:jpeg/pillow_hopper.jpg", timeout=10)
        small.append((r.status, time.monotonic() - t0, time.monotonic()))
        time.sleep(0.05)
    t.join(30)
    status, took, ended = result["slow"]
    assert status == 502, f"the killed request got {status}, expected nginx's 502\n{s.logs()}"
    # Killed by the master (it reads the scoreboard every 50 ms) soon after the deadline, long before the sleep ends.
    assert RENDER_TIMEOUT - 0.1 <= took < RENDER_TIMEOUT + 5, \
        f"the request ended after {took:.2f} s; render_timeout is {RENDER_TIMEOUT} s\n{s.logs()}"
    assert small and all(st == 200 for st, _, _ in small), f"other requests during the slow one: {small}"
    # Not held up: answered while the slow one still ran (a request waiting for its worker would
    # end only after the kill), each well within half the deadline.
    assert sum(1 for _, _, end in small if end < ended) >= 3, f"other requests were held up: {small}"
    assert max(d for _, d, _ in small) < RENDER_TIMEOUT / 2, f"other requests were held up: {small}"
    # The master writes the kill line just after its SIGKILL: the client can see nginx's 502 first.
    killed = _wait_log(s, r"worker (\d+) killed: request (\S+) ran [0-9.]+ s, past limits\.render_timeout \(2\.0 s\), in stage (\w+)", 10)
    log = _log(s)
    assert killed, log[-3000:]
    assert killed.group(2) == url, killed.group(0)
    assert killed.group(3) == "process", killed.group(0)
    assert int(killed.group(1)) in before
    # The kill line carries the request's id (nginx's $request_id), like the access lines.
    kill_line = next(line for line in log.splitlines() if killed.group(0) in line)
    assert re.search(r"\brequest_id=[0-9a-f]{32}\b", kill_line), kill_line
    slow_line = re.search(r"slow request: worker \d+ has run (\S+) for [0-9.]+ s \(limits\.slow_log_after 0\.4 s\), now in stage \w+", log)
    assert slow_line and slow_line.group(1) == url, log[-3000:]
    # A fresh worker replaced the killed one, not counted as a crash; the next request renders.
    after = s.wait_workers(2, timeout=5, exclude={int(killed.group(1))})
    assert len(after) == 2 and int(killed.group(1)) not in after, (before, after)
    assert not alive(int(killed.group(1)))
    assert "crash loop" not in log
    assert client.get("/w:64/f:png/pillow_hopper.jpg").status == 200


def test_slow_log_without_kill_when_under_the_deadline(make_stack):
    s = make_stack(workers=1, extra_args=["--set", "limits.render_timeout=60s", "--set", "limits.slow_log_after=0.3s",
                                          "--set", "server.queue_timeout=0", *SLEEP_ON])
    client = s.client()
    url = slow_url(2, 1000)  # over three times slow_log_after, far under render_timeout
    r = client.get(url, timeout=60)
    assert r.status == 200, r.describe()
    m = _wait_log(s, r"slow request: worker \d+ has run (\S+) for", 5)
    assert m and m.group(1) == url, _log(s)[-2000:]
    assert "past limits.render_timeout" not in _log(s)
    # Logged once per request, not every poll of the master.
    assert _log(s).count(f"has run {url} for") == 1


def _abandon(client, port: int, path: str, queued: int) -> bool:
    """Sends a GET to nginx and closes the connection without reading, once nginx has passed it
    on (the master's status page shows `queued` connections waiting in the listen queue);
    returns whether it saw them."""
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
    deadline = time.monotonic() + 10
    while (status_json(client).get("listen_queue") or 0) < queued and time.monotonic() < deadline:
        time.sleep(0.02)
    seen = (status_json(client).get("listen_queue") or 0) >= queued
    c.close()
    return seen


def test_abandoned_request_is_not_rendered(make_stack, disk):
    """One worker busy with a slow render; a second request waits in the queue and its client
    leaves: nginx closes the FastCGI connection, and when the worker gets to it, it sees the
    hang-up and stops before rendering (499 in the log, no cache entry)."""
    s = make_stack(workers=1, extra_args=["--set", "server.queue_timeout=0", "--set", "limits.render_timeout=60s",
                                          "--set", f"cache.disk_path={disk}", *SLEEP_ON])
    client = s.client()
    busy_url = slow_url(3, 3000)
    gone_url = slow_url(4, 3000)
    done: dict = {}
    t = threading.Thread(target=lambda: done.setdefault("busy", client.get(busy_url, timeout=60).status), daemon=True)
    t.start()
    assert wait_for_worker(client, busy_url), f"the busy request never reached the worker\n{s.logs()}"
    t0 = time.monotonic()
    assert _abandon(client, s.port, gone_url, queued=1), f"the abandoned request never reached kiln's queue\n{s.logs()}"
    assert t.is_alive(), "the busy request ended before the other one left: the test proves nothing"
    t.join(60)
    assert done.get("busy") == 200
    # The access line (logfmt): uri=... status=499 ... reason="the web server closed ...".
    m = _wait_log(s, r"uri=" + re.escape(gone_url) + r" status=499 .*reason=\"the web server closed the connection before (\w+)", 10)
    assert m, _log(s)[-3000:]
    # Not rendered: stopped within the time of one render, and nothing stored for it.
    after = client.get(gone_url, timeout=60)
    assert after.status == 200 and after.header("X-Cache") == "MISS", after.describe()
    assert time.monotonic() - t0 < 60


def test_three_identical_slow_requests_render_once(make_stack, disk):
    """The render takes longer than cache.lock_timeout (0.5 s): the waiters keep waiting because
    the holder announced its deadline (render_timeout) in the lock, and read its entry."""
    s = make_stack(workers=3, extra_args=["--set", f"cache.disk_path={disk}", "--set", "cache.lock_timeout=0.5s",
                                          "--set", "limits.render_timeout=60s", "--set", "server.queue_timeout=0", *SLEEP_ON])
    client = s.client()
    url = slow_url(5, 2500)  # five times lock_timeout
    results: list = [None] * 3

    def one(i):
        r = client.get(url, timeout=90)
        results[i] = (r.status, r.header("X-Cache"), r.body)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(3)]
    threads[0].start()
    # The first one renders (it holds the render lock) before the other two ask.
    assert wait_for_worker(client, url), f"the first request never reached a worker\n{s.logs()}"
    for th in threads[1:]:
        th.start()
    for th in threads:
        th.join(90)
    assert all(r and r[0] == 200 for r in results), [r[:2] if r else r for r in results]
    outcomes = sorted(r[1] for r in results)
    assert outcomes == ["COALESCED", "COALESCED", "MISS"], f"{outcomes}\n{s.logs()}"
    assert len({r[2] for r in results}) == 1
    assert "rendering here too" not in _log(s)


def test_worker_over_max_worker_memory_is_replaced(make_stack):
    """A fresh worker's RSS is about 25 MB here. Each answer below is a PNG of about 4.5 MB that
    the worker's memory cache keeps (64 MiB by default), so its RSS grows with every request
    until it passes the 48 MiB limit; the worker then exits after that request and a fresh one
    takes its place. (Decoded pixels do not count: glibc returns such large blocks at once.)"""
    s = make_stack(workers=1, extra_args=["--set", "limits.max_worker_memory=48MiB", "--set", "server.queue_timeout=0"])
    client = s.client()
    first = s.wait_workers(1)
    m = None
    for i in range(10):
        r = client.get(f"/rs:{1800 + i}:0/f:png/{PHOTO_12MP}", timeout=60)
        assert r.status == 200 and len(r.body) > 2 << 20, r.describe()
        m = _wait_log(s, r"resident memory (\d+) MiB is above limits\.max_worker_memory \(48 MiB\) after (\d+) requests", 0.3)
        if m:
            break
    assert m and int(m.group(1)) > 48, _log(s)[-2000:]
    assert int(m.group(2)) >= 3, f"recycled after {m.group(2)} requests: the first ones already passed the limit"
    after = s.wait_workers(1, timeout=5, exclude=set(first))
    assert after and not set(after) & set(first), (first, after)
    assert client.get("/w:32/f:jpeg/pillow_hopper.jpg").status == 200
    # A small request does not recycle the fresh worker (its RSS stays under the limit).
    time.sleep(0.3)
    assert s.wait_workers(1, timeout=1) == after
    assert "crash" not in _log(s)
