"""Metrics, status page and health (issue 10): /_kiln/metrics through nginx, added up over every
worker (and the workers that were replaced), checked against what the clients received after a
known mix of requests: misses, memory and disk hits, coalesced waits, 4xx, remembered failures
and a worker killed at its deadline. /_kiln/status shows a slow request with its stage;
`kiln health` exits 0 while kiln runs and 1 once it is gone."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections import Counter

from prometheus_client.parser import text_string_to_metric_families

from helpers import KILN_BIN, PHOTO_12MP, SLEEP_ON, sleep_url, wait_for_worker


def scrape(client) -> dict[tuple, float]:
    r = client.get("/_kiln/metrics", timeout=10)
    assert r.status == 200, r.describe()
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    out = {}
    for family in text_string_to_metric_families(r.body.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def delta(before, after, name, **labels) -> float:
    key = (name, tuple(sorted(labels.items())))
    assert key in after, f"{key} not exported"
    return after[key] - before.get(key, 0)


def slow_url(i: int, ms: int) -> str:
    """A JPEG render of a JPEG source that lasts `ms` ms (the sleep processor)."""
    return sleep_url(ms, 100 + i)


def value(sample, name, **labels) -> float:
    return sample.get((name, tuple(sorted(labels.items()))), 0)


def test_metrics_add_up_to_what_clients_received(make_stack, disk):
    s = make_stack(workers=3, extra_args=["--set", f"cache.disk_path={disk}", "--set", "limits.render_timeout=4s",
                                          "--set", "server.queue_timeout=0", "--set", "limits.slow_log_after=0", *SLEEP_ON])
    client = s.client()
    before = scrape(client)
    answers = []  # (status, X-Cache, body bytes) of every answer kiln gave

    def get(path, **kw):
        r = client.get(path, timeout=60, **kw)
        if r.status not in (502, 504):
            answers.append((r.status, r.header("X-Cache"), len(r.body)))
        return r

    for w in (101, 102, 103):
        assert get(f"/w:{w}/f:jpeg/pillow_hopper.jpg").status == 200
    assert get("/w:104/f:webp/pillow_hopper.jpg").status == 200
    for _ in range(4):  # hits, from memory or disk depending on the worker
        assert get("/w:101/f:jpeg/pillow_hopper.jpg").status == 200
    assert get("/nope:1/pillow_hopper.jpg").status == 400
    assert get("/w:10/no_such_file.jpg").status == 404
    for _ in range(3):  # a corrupt source: rendered once, then a remembered failure
        assert get("/w:10/rocket_truncated_50pct.jpg").status == 422
    # Three identical slow requests: one render (1.5 s, under half the 4 s deadline) and, asked
    # once it holds the render lock, two coalesced waits.
    url = slow_url(1, 1500)
    threads = [threading.Thread(target=get, args=(url,)) for _ in range(3)]
    threads[0].start()
    assert wait_for_worker(client, url), f"the slow request never reached a worker\n{s.logs()}"
    for t in threads[1:]:
        t.start()
    for t in threads:
        t.join(60)
    # A request killed at its deadline (nginx answers 502; kiln answered nothing): a 16 s sleep,
    # four times the 4 s deadline.
    killed = client.get(slow_url(2, 16_000), timeout=60)
    assert killed.status == 502
    assert s.wait_workers(3, timeout=5)
    # The master counted the kill and its replacement is up and idle.
    deadline = time.monotonic() + 10
    after = scrape(client)
    while not (value(after, "kiln_worker_restarts_total", cause="deadline") - value(before, "kiln_worker_restarts_total", cause="deadline") >= 1
               and value(after, "kiln_workers", state="idle") == 3) and time.monotonic() < deadline:
        time.sleep(0.1)
        after = scrape(client)

    classes = Counter(f"{st // 100}xx" for st, _, _ in answers)
    for c in ("2xx", "3xx", "4xx", "5xx"):
        assert delta(before, after, "kiln_http_requests_total", **{"class": c}) == classes.get(c, 0), (c, answers)
    cache = Counter(x for _, x, _ in answers if x)
    misses = cache["MISS"]
    assert misses == 6, answers  # 4 images, the corrupt one, the slow one
    assert delta(before, after, "kiln_renders_total") == misses
    assert delta(before, after, "kiln_cache_requests_total", outcome="miss") == misses
    ok_hits = sum(1 for st, x, _ in answers if st == 200 and x in ("HIT-MEMORY", "HIT-DISK"))
    assert delta(before, after, "kiln_cache_requests_total", outcome="hit_memory") + \
        delta(before, after, "kiln_cache_requests_total", outcome="hit_disk") == ok_hits == 4
    assert delta(before, after, "kiln_cache_requests_total", outcome="hit_memory") == \
        sum(1 for st, x, _ in answers if st == 200 and x == "HIT-MEMORY")
    assert delta(before, after, "kiln_cache_requests_total", outcome="coalesced") == cache["COALESCED"] == 2
    negatives = sum(1 for st, x, _ in answers if st >= 400 and x and x != "MISS")
    assert delta(before, after, "kiln_cache_requests_total", outcome="negative") == negatives == 2
    # Durations: one per answer; decode ran for every render; the two waits were timed.
    assert delta(before, after, "kiln_request_duration_seconds_count") == len(answers)
    assert delta(before, after, "kiln_stage_duration_seconds_count", stage="decode") == misses
    assert delta(before, after, "kiln_stage_duration_seconds_count", stage="encode") == misses - 1
    assert delta(before, after, "kiln_stage_duration_seconds_count", stage="wait") == 2
    assert delta(before, after, "kiln_lock_waits_total") == 2
    waited = delta(before, after, "kiln_lock_wait_seconds_total")
    assert 0.3 < waited < 30, waited
    assert abs(delta(before, after, "kiln_stage_duration_seconds_sum", stage="wait") - waited) < 0.01
    # Histogram buckets are cumulative and end at the count.
    assert delta(before, after, "kiln_stage_duration_seconds_bucket", stage="decode", le="+Inf") == misses
    assert delta(before, after, "kiln_stage_duration_seconds_bucket", stage="decode", le="0.001") <= misses
    # Bytes and formats.
    assert delta(before, after, "kiln_output_bytes_total") == sum(n for st, _, n in answers if st == 200)
    assert delta(before, after, "kiln_source_bytes_total") > 0
    assert delta(before, after, "kiln_output_formats_total", format="webp") == 1
    assert delta(before, after, "kiln_output_formats_total", format="jpeg") == 4
    # Counted when read: the killed render read its source too.
    assert delta(before, after, "kiln_source_formats_total", format="jpeg") == misses + 1
    # The master's own.
    assert delta(before, after, "kiln_worker_restarts_total", cause="deadline") == 1
    assert delta(before, after, "kiln_worker_restarts_total", cause="crash") == 0
    assert delta(before, after, "kiln_requests_shed_total") == 0
    assert after[("kiln_workers", (("state", "busy"),))] + after[("kiln_workers", (("state", "idle"),))] == 3
    assert after[("kiln_uptime_seconds", ())] > 0


def test_status_page_shows_a_slow_request_with_its_stage(make_stack):
    s = make_stack(workers=2, extra_args=["--set", "server.queue_timeout=0", "--set", "limits.render_timeout=60s", *SLEEP_ON])
    client = s.client()
    url = slow_url(3, 6000)
    t = threading.Thread(target=lambda: client.get(url, timeout=60), daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    page = ""
    while time.monotonic() < deadline:
        page = client.get("/_kiln/status", timeout=5).body.decode()
        if url in page and "process (sleep:6000)" in page:
            break
        time.sleep(0.1)
    assert url in page and "process (sleep:6000)" in page, page
    assert "generation:          1" in page and "workers:             2 of 2" in page
    data = json.loads(client.get("/_kiln/status?json", timeout=5).body)
    busy = [w for w in data["workers"] if w["state"] == "busy"]
    assert len(busy) == 1 and busy[0]["uri"] == url and busy[0]["running_seconds"] > 0, data
    assert busy[0]["stage"] == "process (sleep:6000)", busy[0]
    assert re.fullmatch(r"[0-9a-f]{32}", busy[0]["request_id"]), busy[0]  # nginx's $request_id
    assert {w["pid"] for w in data["workers"]} == set(s.worker_pids())
    t.join(60)
    data = json.loads(client.get("/_kiln/status?json", timeout=5).body)
    assert all(w["state"] == "idle" for w in data["workers"]) and data["answered"] >= 2


def test_status_page_shows_the_listen_queue(make_stack):
    """php-fpm's "listen queue": how many connections wait for a worker and for how long at least."""
    s = make_stack(workers=1, extra_args=["--set", "server.queue_timeout=0", "--set", "limits.render_timeout=60s", *SLEEP_ON])
    client = s.client()
    data = json.loads(client.get("/_kiln/status?json", timeout=5).body)
    assert data["listen_queue"] == 0 and data["oldest_queued_seconds"] == 0, data
    urls = [slow_url(i, 1500) for i in range(4)]
    threads = [threading.Thread(target=lambda u=u: client.get(u, timeout=60), daemon=True) for u in urls]
    for t in threads:
        t.start()
        time.sleep(0.05)
    seen = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        data = json.loads(client.get("/_kiln/status?json", timeout=5).body)
        seen.append((data["listen_queue"], data["oldest_queued_seconds"]))
        if data["listen_queue"] >= 2 and data["oldest_queued_seconds"] >= 0.3:
            break
        time.sleep(0.1)
    assert seen[-1][0] >= 2 and seen[-1][1] >= 0.3, seen
    page = client.get("/_kiln/status", timeout=5).body.decode()
    assert re.search(r"listen queue: +[0-9]+ waiting", page), page
    for t in threads:
        t.join(60)
    data = json.loads(client.get("/_kiln/status?json", timeout=5).body)
    assert data["listen_queue"] == 0 and data["oldest_queued_seconds"] == 0, data


def _get_from(port: int, path: str, source: str) -> int:
    c = socket.socket()
    c.bind((source, 0))
    c.settimeout(5)
    c.connect(("127.0.0.1", port))
    c.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while chunk := c.recv(4096):
        data += chunk
    c.close()
    return int(data.split(b" ", 2)[1])


def test_metrics_and_status_are_local_only(stack):
    assert _get_from(stack.port, "/_kiln/metrics", "127.0.0.1") == 200
    assert _get_from(stack.port, "/_kiln/metrics", "127.0.0.2") == 403
    assert _get_from(stack.port, "/_kiln/status", "127.0.0.2") == 403
    assert _get_from(stack.port, "/_kiln/health", "127.0.0.2") == 200


def test_kiln_health_command(make_stack):
    s = make_stack(workers=1)
    by_socket = subprocess.run([str(KILN_BIN), "health", "--listen", f"unix:{s.sock}"],
                               capture_output=True, text=True, timeout=10)
    assert by_socket.returncode == 0 and by_socket.stdout.startswith("200 ok: "), by_socket
    by_url = subprocess.run([str(KILN_BIN), "health", "--url", f"http://127.0.0.1:{s.port}/_kiln/health"],
                            capture_output=True, text=True, timeout=10)
    assert by_url.returncode == 0 and "200 ok: " in by_url.stdout, by_url
    s.stop()
    gone = subprocess.run([str(KILN_BIN), "health", "--listen", f"unix:{s.sock}", "--timeout", "1"],
                          capture_output=True, text=True, timeout=10)
    assert gone.returncode == 1 and "unhealthy" in gone.stderr, gone


def test_restart_causes_and_disk_cache_metrics(make_stack, disk):
    """Each way a worker is replaced has its counter: crash (killed from outside), recycle
    (server.max_requests), reload (SIGHUP replaces the generation), and a small disk cache's
    sweeps show up as evictions and its size as gauges."""
    import os
    import signal
    s = make_stack(workers=2, extra_args=["--set", f"cache.disk_path={disk}", "--set", "cache.disk_size_limit=1MB",
                                          "--set", "server.max_requests=5", "--set", "server.queue_timeout=0",
                                          "--set", "cache.memory_cost_limit=0"])
    client = s.client()
    before = scrape(client)
    victim = s.wait_workers()[0]
    os.kill(victim, signal.SIGKILL)
    assert victim not in s.wait_workers(2, timeout=5, exclude={victim})
    # Big entries (about 200 KB each) fill the 1 MB cache: sweeps evict; max_requests recycles.
    for i in range(16):
        r = client.get(f"/rs:{900 + i}:0/q:95/f:jpeg/{PHOTO_12MP}", timeout=60)
        assert r.status == 200, r.describe()
    # The recycled workers were replaced and the sweeps finished before the reload.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        now = scrape(client)
        if delta(before, now, "kiln_worker_restarts_total", cause="recycle") >= 2 \
                and delta(before, now, "kiln_disk_cache_evictions_total") > 0 and len(s.wait_workers(2, timeout=0)) == 2:
            break
        time.sleep(0.1)
    s.kiln.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    after = scrape(client)
    while delta(before, after, "kiln_worker_restarts_total", cause="reload") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        after = scrape(client)
    assert delta(before, after, "kiln_worker_restarts_total", cause="crash") == 1
    assert delta(before, after, "kiln_worker_restarts_total", cause="reload") == 2
    # The readiness probe and 16 images on 2 workers with max_requests 5: at least 2 recycled.
    assert delta(before, after, "kiln_worker_restarts_total", cause="recycle") >= 2
    assert delta(before, after, "kiln_worker_restarts_total", cause="deadline") == 0
    assert delta(before, after, "kiln_disk_cache_evictions_total") > 0
    size = after[("kiln_disk_cache_bytes", ())]
    assert 0 < size <= 1 << 20, size
    assert after[("kiln_disk_cache_entries", ())] > 0
    # Recycled and reloaded workers' counts were kept: every answer is counted.
    assert delta(before, after, "kiln_http_requests_total", **{"class": "2xx"}) >= 16
    assert delta(before, after, "kiln_renders_total") == 16
