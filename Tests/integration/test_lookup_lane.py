"""The lookup lane (issue 37): `server.lookup_workers` workers on a socket of their own answer
cache hits, and hand every miss to the render workers through nginx (`X-Accel-Redirect` to the
internal locations of nginx/kiln-lookup.conf). Run through a real nginx with the shipped include.

- A hit is answered by the lane while every render worker is busy: the render workers are held
  by the test-only sleep processor for 4 s, and a hit comes back well within that (a deterministic
  delay, not CPU speed: without the lane the hit would wait for a render worker).
- A miss is rendered by a render worker (its access line), after the lane's hand-off; nginx's
  trusted rewrites stay trusted; a client cannot reach the internal locations.
- The lane is no way around the checks: a bad signature is refused by the lane, a bad option too,
  and a miss is checked again by the render worker (an unsigned URL never renders)."""
from __future__ import annotations

import re
import threading
import time

from helpers import SLEEP_ON, sign_path, sleep_url, wait_for_worker

KEY, SALT = "ab" * 32, "cd" * 16
ACCESS = re.compile(r"msg=access pid=(\d+) .*? uri=(\S+) status=(\d+) bytes=(\d+) cache=(\S+)")


def lane(make_stack, disk, *more):
    return make_stack(workers=2, extra_args=["--set", "server.lookup_workers=1", "--set", f"cache.disk_path={disk}",
                                             "--set", "cache.memory_cost_limit=0", *SLEEP_ON, *more],
                      nginx_env={"KILN_NGINX_LOOKUP": "1"})


def access(s) -> list[tuple[int, str, int, int, str]]:
    return [(int(m[1]), m[2], int(m[3]), int(m[4]), m[5]) for m in ACCESS.finditer(s.kiln_log.read_text(errors="replace"))]


def wait_access(s, uri: str, count: int, timeout: float = 20) -> list[tuple[int, str, int, int, str]]:
    deadline = time.monotonic() + timeout
    while len(lines := [a for a in access(s) if a[1] == uri]) < count:
        assert time.monotonic() < deadline, f"{uri}: {lines}"
        time.sleep(0.02)
    return lines


def test_a_miss_is_handed_to_a_render_worker_and_the_next_is_a_lane_hit(make_stack, disk):
    s = lane(make_stack, disk)
    c = s.client()
    uri = "/w:120/pillow_hopper.jpg"
    first = c.get(uri)
    assert first.status == 200 and first.header("x-cache") == "MISS" and first.header("content-type") == "image/jpeg"
    handed, rendered = wait_access(s, uri, 2)
    assert handed[2:5] == (200, 0, "-") and rendered[2:] == (200, len(first.body), "MISS"), (handed, rendered)
    lane_pid = handed[0]
    assert rendered[0] != lane_pid
    again = c.get(uri)
    assert again.status == 200 and again.header("x-cache") == "HIT-DISK" and again.body == first.body
    assert again.header("etag") == first.header("etag")
    assert wait_access(s, uri, 3)[-1][0] == lane_pid, "the hit came from the lane"
    # Conditional requests are the lane's too: a 304 without a render.
    r = c.get(uri, headers={"If-None-Match": first.header("etag")})
    assert r.status == 304
    # nginx's trusted rewrite stays trusted through the hand-off (the preset-free /thumb/ path).
    t = c.get("/thumb/40x30/pillow_hopper.jpg")
    assert t.status == 200 and t.header("x-cache") == "MISS"
    assert c.get("/thumb/40x30/pillow_hopper.jpg").header("x-cache") == "HIT-DISK"
    # Counted once each: the hand-off is the render worker's request, not a second one.
    from test_metrics import delta, scrape
    before = scrape(c)
    assert c.get("/w:121/pillow_hopper.jpg").header("x-cache") == "MISS"
    assert c.get("/w:121/pillow_hopper.jpg").header("x-cache") == "HIT-DISK"
    wait_access(s, "/w:121/pillow_hopper.jpg", 3)
    after = scrape(c)
    assert delta(before, after, "kiln_http_requests_total", **{"class": "2xx"}) == 2
    # The internal locations are nginx's alone.
    assert c.get("/_kiln_render/w:120/pillow_hopper.jpg").status == 404
    assert c.get("/_kiln_render_trusted/w:120/pillow_hopper.jpg").status == 404


def test_a_hit_does_not_wait_for_busy_render_workers(make_stack, disk):
    s = lane(make_stack, disk)
    c = s.client()
    hit = "/w:90/pillow_hopper.jpg"
    assert c.get(hit).status == 200
    assert c.get(hit).header("x-cache") == "HIT-DISK"
    # Both render workers sleep 4 s in a render each (two cold variants).
    answers = []
    threads = [threading.Thread(target=lambda w=w: answers.append(c.get(sleep_url(4000, w), timeout=60).status)) for w in (301, 302)]
    for t in threads:
        t.start()
    # Both render workers are in the sleep (the master's status page says so).
    for w in (301, 302):
        assert wait_for_worker(c, sleep_url(4000, w), "process", timeout=20), f"no render worker took {sleep_url(4000, w)}"
    started = time.monotonic()
    r = c.get(hit, timeout=30)
    took = time.monotonic() - started
    assert r.status == 200 and r.header("x-cache") == "HIT-DISK"
    assert took < 2.0, f"the hit waited {took:.2f} s behind renders"  # 2x margin under the 4 s sleep
    for t in threads:
        t.join()
    assert answers == [200, 200]


def test_the_lane_is_no_way_around_signatures_and_options(make_stack, disk):
    s = lane(make_stack, disk, "--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}")
    c = s.client()
    path = "/w:110/pillow_hopper.jpg"
    signed = sign_path(path, KEY, SALT)
    r = c.get(signed)
    assert r.status == 200 and r.header("x-cache") == "MISS"
    assert c.get(signed).header("x-cache") == "HIT-DISK"
    # The same variant unsigned, or with a wrong signature: refused by the lane, never rendered.
    before = len(access(s))
    assert c.get(path).status == 403
    bad = "/" + "A" * 43 + path
    assert c.get(bad).status == 403
    assert c.get("/nope:1" + path).status in (400, 403)
    lines = access(s)[before:]
    assert all(a[2] in (400, 403) for a in lines) and len(lines) == 3, lines


def test_a_flood_of_cold_urls_fills_the_render_cap_but_never_refuses_a_hit(make_stack, disk):
    """nginx's cap (`limit_conn kiln_conn 8`) counts renders only with the lane's map of kiln.conf:
    ten slow cold renders at once fill it (8 in kiln, 2 refused by nginx at once), and hits are
    still answered meanwhile. With the cap counted at the public location, every hit would be a 503
    until the renders drained."""
    s = lane(make_stack, disk, "--set", "server.queue_timeout=60s")
    c = s.client()
    hit = "/w:91/pillow_hopper.jpg"
    assert c.get(hit).status == 200
    assert c.get(hit).header("x-cache") == "HIT-DISK"
    answers: list[int] = []
    lock = threading.Lock()

    def cold(width: int) -> None:
        status = c.get(sleep_url(1500, width), timeout=120).status
        with lock:
            answers.append(status)

    threads = [threading.Thread(target=cold, args=(400 + i,)) for i in range(10)]
    for t in threads:
        t.start()
    # Two refused by nginx at once (the cap is full), both render workers in a sleep.
    deadline = time.monotonic() + 20
    while True:
        with lock:
            refused = answers.count(503)
        if refused >= 2:
            break
        assert time.monotonic() < deadline, f"nginx refused no render: {answers}"
        time.sleep(0.02)
    hits = [c.get(hit, timeout=30) for _ in range(5)]
    with lock:
        in_flight = 10 - len(answers)
    assert in_flight >= 6, f"the renders drained before the hits were sent: {answers}"  # 8 admitted, 2 rendering per 1.5 s
    assert [(h.status, h.header("x-cache")) for h in hits] == [(200, "HIT-DISK")] * 5
    for t in threads:
        t.join()
    assert sorted(answers) == [200] * 8 + [503] * 2, answers


def test_a_flood_of_hits_does_not_hold_up_a_render(make_stack, disk):
    """The other way round: four clients asking for a hit without pause do not keep a cold render
    from a render worker (the lane answers them; the cap does not count them)."""
    s = lane(make_stack, disk)
    c = s.client()
    hit = "/w:92/pillow_hopper.jpg"
    assert c.get(hit).status == 200
    stop = threading.Event()
    hits: list[int] = []

    def hammer() -> None:
        mine = s.client()
        while not stop.is_set():
            hits.append(mine.get(hit, timeout=30).status)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 30
        while len(hits) < 50:
            assert time.monotonic() < deadline, f"only {len(hits)} hits answered"
            time.sleep(0.01)
        started = time.monotonic()
        r = c.get(sleep_url(500, 393), timeout=60)
        took = time.monotonic() - started
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert r.status == 200 and r.header("x-cache") == "MISS"
    assert took < 5.0, f"a 0.5 s render took {took:.2f} s beside hits"
    assert set(hits) == {200}, sorted(set(hits))
