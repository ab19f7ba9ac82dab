"""Back-pressure inside kiln (issue 14): once every worker has been busy with its request for
server.queue_timeout, the master answers the queued connections itself with a fast 503 and
Retry-After instead of letting them wait in the listen queue until nginx gives up; the
requests the workers took succeed; /_kiln/health, answered by the master on its status socket,
stays fast throughout.

nginx's own cap (limit_conn) is raised out of the way here, so the 503s are kiln's."""
from __future__ import annotations

import io
import threading
import time

from helpers import SLEEP_ON, sleep_url

N = 200
QUEUE_TIMEOUT = 1.0
SLEEP = 3.0  # each slow render: three times the queue timeout, whatever the machine


def slow_url(i: int) -> str:
    # A different width per request (100…299), so no cache answers one.
    return sleep_url(int(SLEEP * 1000), 100 + i)


def _jpeg_width(body: bytes) -> int | None:
    from PIL import Image
    try:
        im = Image.open(io.BytesIO(body))
        im.load()
        return im.size[0] if im.format == "JPEG" else None
    except Exception:  # noqa: BLE001
        return None


def test_overload_gets_fast_503s_while_health_answers(make_stack):
    s = make_stack(workers=2, nginx_env={"KILN_NGINX_CONN_LIMIT": "1000"},
                   extra_args=["--set", f"server.queue_timeout={QUEUE_TIMEOUT}s", "--set", "server.backlog=1024",
                               "--set", "limits.render_timeout=60s", *SLEEP_ON])
    client = s.client()
    health = client.get("/_kiln/health", timeout=5)
    assert health.status == 200 and health.body.startswith(b"ok: "), health.describe()

    results: list = [None] * N
    checks: list = []
    stop = threading.Event()

    def one(i):
        t0 = time.monotonic()
        try:
            r = client.get(slow_url(i), timeout=90)
            results[i] = (r.status, time.monotonic() - t0, r.header("Retry-After"), r.body)
        except Exception as e:  # noqa: BLE001
            results[i] = ("error", time.monotonic() - t0, None, repr(e).encode())

    def poll_health():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = client.get("/_kiln/health", timeout=5)
                checks.append((r.status, time.monotonic() - t0, r.body))
            except Exception as e:  # noqa: BLE001
                checks.append(("error", time.monotonic() - t0, repr(e).encode()))
            time.sleep(0.05)

    poller = threading.Thread(target=poll_health, daemon=True)
    poller.start()
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(N)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    wall = time.monotonic() - t0
    stop.set()
    poller.join(10)

    assert all(r is not None for r in results), "some requests never returned"
    unexpected = [(i, r[:3], r[3][:120]) for i, r in enumerate(results) if r[0] not in (200, 503)]
    assert not unexpected, f"only 200 and 503 are acceptable: {unexpected[:5]}\n{s.logs()}"
    ok = [(i, r) for i, r in enumerate(results) if r[0] == 200]
    shed = [r for r in results if r[0] == 503]
    assert len(ok) >= 2, f"the workers' requests must succeed: {len(ok)} × 200\n{s.logs()}"
    assert len(shed) >= N // 2, f"{len(shed)} × 503 for {N} requests on 2 workers\n{s.logs()}"
    # The accepted ones are whole images of the asked width.
    bad = [(i, len(r[3])) for i, r in ok if _jpeg_width(r[3]) != 100 + i]
    assert not bad, bad
    # Fast: a 503 waited at most queue_timeout for the workers, plus a moment for the master,
    # never until a worker came free (SLEEP).
    slow_503 = sorted(r[1] for r in shed if r[1] > QUEUE_TIMEOUT + 2.5)
    assert not slow_503, f"{len(slow_503)} slow 503s, the slowest {slow_503[-1]:.2f} s"
    assert all(r[2] == "1" for r in shed), {r[2] for r in shed}
    assert all(b"overloaded: every worker has been busy" in r[3] for r in shed)
    # Far from what a queue of 200 renders of SLEEP seconds on 2 workers would take (300 s).
    assert wall < N * SLEEP / 2 / 5, f"the burst took {wall:.1f} s"

    # Health answered throughout, by the master, well within the queue timeout (a check queued
    # behind the busy workers would wait at least that long, then get a 503).
    print(f"{len(ok)} x 200, {len(shed)} x 503 (slowest {max(r[1] for r in shed):.2f} s) in {wall:.1f} s; "
          f"{len(checks)} health checks, slowest {max(c[1] for c in checks) * 1000:.0f} ms")
    assert len(checks) >= 5, checks
    assert all(c[0] == 200 for c in checks), [c[:2] for c in checks if c[0] != 200]
    busy = [c for c in checks if b", 2 busy" in c[2]]
    assert busy, "no health check ran while both workers were busy: the check proves nothing"
    slowest = max(c[1] for c in checks)
    assert slowest < QUEUE_TIMEOUT / 2, f"health checks took up to {slowest * 1000:.0f} ms: {sorted(c[1] for c in checks)[-5:]}"

    log = s.kiln_log.read_text(errors="replace")
    assert "answered" in log and "queued connections with 503" in log, log[-2000:]
    # Afterwards the workers serve again.
    r = client.get("/w:40/f:jpeg/pillow_hopper.jpg", timeout=30)
    assert r.status == 200


def test_no_503_while_a_worker_is_free(make_stack):
    """Requests that finish quickly never trip the back-pressure, however many come in a row."""
    s = make_stack(workers=2, extra_args=["--set", "server.queue_timeout=0.2s"])
    client = s.client()
    statuses = []
    for i in range(30):
        statuses.append(client.get(f"/w:{10 + i}/f:jpeg/pillow_hopper.jpg", timeout=10).status)
    assert statuses == [200] * 30


def test_health_reports_no_worker_when_stopping(make_stack):
    s = make_stack(workers=1, extra_args=["--set", "server.shutdown_timeout=5s", "--set", "server.queue_timeout=0"])
    client = s.client()
    r = client.get("/_kiln/health", timeout=5)
    assert r.status == 200 and b"1 of 1 workers running, 0 busy" in r.body, r.describe()
    assert r.header("Cache-Control") == "no-store"
    # Only /_kiln/health lives on the status socket.
    assert client.get("/_kiln/health/x", timeout=5).status != 200


def test_a_saturated_queue_that_moves_is_not_shed(make_stack):
    """More connections than workers with short renders keep the listen queue from ever being
    empty, but nobody waits long: no 503 (kiln samples the queue's length and the accepted count,
    QueueWaitTracker). Before, a queue never seen empty for queue_timeout was shed wholesale."""
    s = make_stack(workers=2, nginx_env={"KILN_NGINX_CONN_LIMIT": "64"},
                   extra_args=["--set", "server.queue_timeout=1s", *SLEEP_ON])
    client = s.client()
    clients, seconds = 8, 5.0
    results: list = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def loop(c):
        i = 0
        while time.monotonic() < stop_at:
            # 50 ms each (the sleep processor on a small JPEG): with 8 clients on 2 workers a
            # request waits about 3 renders, a fifth of the 1 s queue_timeout. A new width each
            # time (20…619): no cache hit.
            url = sleep_url(50, 20 + (i * clients + c) % 600)
            t0 = time.monotonic()
            r = client.get(url, timeout=30)
            with lock:
                results.append((r.status, time.monotonic() - t0))
            i += 1

    threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    statuses = sorted({r[0] for r in results})
    assert len(results) >= 3 * clients, f"only {len(results)} answers in {seconds} s"
    assert statuses == [200], f"{sum(1 for r in results if r[0] != 200)} of {len(results)} not 200: {statuses}\n{s.logs()}"
    slowest = max(r[1] for r in results)
    log = s.kiln_log.read_text(errors="replace")
    assert "queued connections with 503" not in log, log[-2000:]
    print(f"{len(results)} x 200 with {clients} clients on 2 workers, slowest {slowest * 1000:.0f} ms")
