"""The nginx concurrency cap (limit_conn kiln_conn 8, limit_conn_status 503): a burst far
above it gets 200s and fast 503s only; no 502/504, no hang.

The admitted requests last SLEEP each (the sleep processor, debug.sleep_processor), so the cap is
reached whatever the machine's speed; a different width per request: no cache answers one."""
from __future__ import annotations

import threading
import time

from helpers import LIMIT_CONN, SLEEP_ON, sleep_url

WORKERS = 4
SLEEP = 4.0


def slow_url(i: int) -> str:
    return sleep_url(int(SLEEP * 1000), 100 + i)


def test_burst_gets_200_or_fast_503(make_stack):
    # server.queue_timeout=0: the 503s are nginx's (kiln's own back-pressure: test_backpressure.py).
    stack = make_stack(workers=WORKERS, extra_args=["--set", "server.queue_timeout=0", *SLEEP_ON])
    client = stack.client()
    n = 60
    results: list = [None] * n
    barrier = threading.Barrier(n)

    def one(i):
        barrier.wait()
        t0 = time.monotonic()
        try:
            r = client.get(slow_url(i), timeout=60)
            results[i] = (r.status, time.monotonic() - t0, len(r.body), r.content_type, r.header("Retry-After"), r.body)
        except Exception as e:  # noqa: BLE001
            results[i] = ("error", time.monotonic() - t0, repr(e), "", None, b"")

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    wall = time.monotonic() - t0

    assert all(r is not None for r in results), "some requests never returned (hang)"
    statuses = [r[0] for r in results]
    unexpected = [r for r in results if r[0] not in (200, 503)]
    assert not unexpected, f"only 200 and 503 are acceptable under overload: {unexpected}\n{stack.logs()}"
    ok = [r for r in results if r[0] == 200]
    shed = [r for r in results if r[0] == 503]
    assert len(ok) + len(shed) == n, f"every answer is a 200 or a 503: {statuses}"
    assert shed, f"{n} simultaneous requests with a cap of {LIMIT_CONN} gave no 503: {statuses}"
    # A 503 means LIMIT_CONN requests were in flight at that moment, and each of those ends in a
    # 200: so at least the cap's worth of requests succeed.
    assert len(ok) >= LIMIT_CONN, f"fewer 200s than the cap of {LIMIT_CONN}: {statuses}"
    # nginx's own 503s say when to retry and what happened, in one line.
    assert all(r[4] == "1" and r[5].startswith(b"busy: too many requests in kiln") for r in shed), \
        {(r[4], r[5][:60]) for r in shed}
    # Immediate: answered well before the first admitted request could end (SLEEP).
    slow_503 = [r[:2] for r in shed if r[1] > SLEEP / 2]
    assert not slow_503, f"503s must be immediate: {slow_503}"
    # The cap's worth in WORKERS at a time: 2 rounds of SLEEP (nginx's read timeout is 30 s).
    slow_200 = [r[:2] for r in ok if r[1] > 30]
    assert not slow_200, f"admitted requests took too long: {slow_200}"
    assert all(r[3] == "image/jpeg" and r[2] > 0 for r in ok)
    assert wall < 60
    # and the server is fine afterwards
    r = client.get("/w:40/f:jpeg/pillow_hopper.jpg")
    assert r.status == 200
