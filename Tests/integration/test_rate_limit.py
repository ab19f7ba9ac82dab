"""The opt-in per-client rate limit (nginx/kiln-rate-limit.conf with the `limit_req_zone` line of
nginx/kiln.conf, both used as shipped): one client address sending past its burst gets fast
429s with Retry-After while another address is still served; the first is served again after
Retry-After; a page of thumbnails from one browser is never limited."""
from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from helpers import NGINX_DIR, assert_plain_error
from stack import running_stack

URL = "/w:8/f:jpeg/pillow_hopper.jpg"


def code_of(name: str) -> str:
    """The directives of a shipped nginx file, comments removed."""
    text = (NGINX_DIR / name).read_text()
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def shipped_numbers() -> tuple[float, int]:
    """(rate in requests per second, burst) as the shipped files say."""
    zone = re.search(r"^\s*limit_req_zone\s+\$binary_remote_addr\s+zone=kiln_rate:\d+m\s+rate=(\d+)r/(s|m);",
                     code_of("kiln.conf"), re.M)
    assert zone, "nginx/kiln.conf: no `limit_req_zone $binary_remote_addr zone=kiln_rate:... rate=...;`"
    rate = int(zone[1]) / (1 if zone[2] == "s" else 60)
    req = re.search(r"^\s*limit_req\s+zone=kiln_rate\s+burst=(\d+)\s+nodelay;", code_of("kiln-rate-limit.conf"), re.M)
    assert req, "nginx/kiln-rate-limit.conf: no `limit_req zone=kiln_rate burst=N nodelay;`"
    return rate, int(req[1])


RATE, BURST = shipped_numbers()


@pytest.fixture(scope="module")
def limited(root):
    """kiln behind nginx with the rate limit turned on."""
    yield from running_stack(root=root, workers=2, rate_limit=True)


def assert_rate_limited(r, what: str) -> None:
    assert r.status == 429, f"{what}: {r.describe()}"
    assert r.header("retry-after") == "1", f"{what}: Retry-After {r.header('retry-after')!r}"
    assert "no-store" in (r.header("cache-control") or ""), f"{what}: a 429 must not be cached"
    assert_plain_error(r, what)
    assert r.elapsed < 1.0, f"{what}: a 429 must be immediate, took {r.elapsed:.2f}s"


def test_shipped_files(environment_ok, tmp_path):
    """Off by default in kiln-locations.conf, one uncommented line turns it on in kiln.conf, and
    the example site with it passes `nginx -t`."""
    assert "limit_req" not in code_of("kiln-locations.conf"), "the rate limit is opt-in"
    assert re.search(r"^\s*limit_req_status\s+429;", code_of("kiln-rate-limit.conf"), re.M)
    assert BURST >= 50, f"a page of 50 thumbnails must pass the default burst ({BURST})"
    doc = (NGINX_DIR.parent / "docs" / "deploy.md").read_text()
    assert f"burst={BURST} nodelay" in doc and f"rate={RATE:g}r/s" in doc, "docs/deploy.md's rate limit numbers"
    site = (NGINX_DIR / "kiln.conf").read_text()
    site, n = re.subn(r"^(\s*)# include kiln-rate-limit.conf;",
                      rf"\1include {NGINX_DIR / 'kiln-rate-limit.conf'};", site, flags=re.M)
    assert n == 1, "nginx/kiln.conf: the commented `# include kiln-rate-limit.conf;` line"
    site = site.replace("include kiln-locations.conf;", f"include {NGINX_DIR / 'kiln-locations.conf'};")
    site = site.replace("listen 8080;", "listen 127.0.0.1:1;")
    (tmp_path / "kiln.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  include {tmp_path}/kiln.conf;\n}}\n")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    p = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                        "-e", str(tmp_path / "error.log")], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


def test_one_address_is_limited_and_another_is_not(limited):
    a = limited.client(source="127.0.0.2")
    b = limited.client(source="127.0.0.3")
    results: list[tuple[float, object]] = []  # (time answered, response) of client a
    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            results.append((time.monotonic(), a.get(URL, timeout=20)))

    t0 = time.monotonic()
    threads = [threading.Thread(target=hammer, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    deadline = t0 + 15
    while sum(r.status == 429 for _, r in list(results)) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    limited_at = time.monotonic()
    # While a keeps sending (and is refused), b is served.
    b_answers = [b.get(URL, timeout=20) for _ in range(20)]
    window = (limited_at, time.monotonic())
    stop.set()
    for t in threads:
        t.join(30)
    elapsed = max(t for t, _ in results) - t0

    statuses = [r.status for _, r in results]
    assert set(statuses) <= {200, 429}, f"only 200 and 429: {sorted(set(statuses))}\n{limited.logs()}"
    refused = [r for _, r in results if r.status == 429]
    assert len(refused) >= 5, f"{len(results)} requests in {elapsed:.1f}s from one address: no 429s"
    for r in refused[:20]:
        assert_rate_limited(r, "127.0.0.2 past its burst")
    ok = statuses.count(200)
    # The bucket starts full: at least burst + 1 pass before a refusal; then `rate` a second.
    assert ok >= BURST + 1, f"only {ok} of {len(statuses)} served: the first burst {BURST} + 1 must pass"
    most = BURST + 1 + RATE * elapsed + 2
    assert ok <= most, f"{ok} served in {elapsed:.1f}s: more than burst {BURST} + {RATE}/s allow ({most:.0f})"
    in_window = [r.status for t, r in results if window[0] <= t <= window[1]]
    assert 429 in in_window, f"127.0.0.2 was not refused while 127.0.0.3 was sent: {in_window}"
    bad_b = [r for r in b_answers if r.status != 200]
    assert not bad_b, f"127.0.0.3 must be served while 127.0.0.2 is limited: {bad_b}"
    assert all(r.content_type == "image/jpeg" and r.body for r in b_answers)

    # After Retry-After, a is served again.
    time.sleep(float(refused[-1].header("retry-after")))
    r = a.get(URL)
    assert r.status == 200 and r.content_type == "image/jpeg", f"after Retry-After: {r.describe()}"


def test_a_page_of_thumbnails_is_not_limited(limited):
    """50 different thumbnails from one address at once over 6 connections, like a browser."""
    c = limited.client(source="127.0.0.4")
    paths = [f"/thumb/{40 + i}x{40 + i}/pillow_hopper.jpg" for i in range(50)]
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda p: c.get(p, timeout=30), paths))
    bad = [(p, r) for p, r in zip(paths, answers) if r.status != 200 or r.content_type != "image/jpeg"]
    assert not bad, f"a page of {len(paths)} thumbnails was limited: {bad[:5]}\n{limited.logs()}"
    assert len({r.body for r in answers}) == len(paths), "each thumbnail is its own render"
