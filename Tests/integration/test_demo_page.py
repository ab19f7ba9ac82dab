"""The demo page of scripts/run (web/), in a real headless browser.

The real `scripts/run` is started on a free port (KILN_PORT, KILN_SKIP_BUILD=1, this KILN_BIN), and
Debian's chromium, driven by Selenium through Debian's chromedriver, loads http://127.0.0.1:PORT/,
applies a spec and reads what the page shows. The browser's own network log (the DevTools
`Network.responseReceived` events) gives the response headers the page received, so the page's
size, format, X-Cache and Server-Timing bars are checked against the real headers. Screenshots:
.build/artifacts/demo-page.png and .build/artifacts/demo-page-signed.png.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os

import pytest

from demopage import (DemoRun, apply_spec, chromium, demo_images, load, response_headers,
                      run_url, screenshot, server_timing, text, wait_for)
from helpers import assert_plain_error

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


@pytest.fixture
def demo():
    runs: list[DemoRun] = []

    def start(sign: bool = False) -> DemoRun:
        runs.append(DemoRun(sign))
        return runs[-1].start()

    yield start
    for r in runs:
        r.stop()


def check_result(driver, log: list, url: str, width: int, height: int) -> dict[str, str]:
    """The shown image has the requested size; the facts and bars match the response's headers."""
    natural = driver.execute_script(
        "const i = document.getElementById('result-img'); return [i.naturalWidth, i.naturalHeight, i.hidden]")
    assert natural == [width, height, False], f"{url}: rendered <img> is {natural}, expected {width}x{height}"
    headers = response_headers(driver, log, run_url(driver, url))
    assert text(driver, "f-type") == headers["content-type"]
    assert text(driver, "f-cache") == headers["x-cache"]
    shown_bytes = int(driver.execute_script("return document.getElementById('f-bytes').dataset.bytes"))
    assert shown_bytes == int(headers["content-length"]), (shown_bytes, headers)
    assert f"{shown_bytes:,} B" in text(driver, "f-bytes") or f"{shown_bytes} B" == text(driver, "f-bytes")
    assert text(driver, "f-pixels") == f"{width} × {height}"

    timings = server_timing(headers["server-timing"])
    phases = [(n, d) for n, d in timings if n != "total"]
    total = dict(timings)["total"]
    assert len(phases) >= 3, f"too few Server-Timing phases to chart: {headers['server-timing']}"
    rows = driver.execute_script("""return [...document.querySelectorAll('#timing .phase')].map(r => ({
        name: r.dataset.name, dur: parseFloat(r.dataset.dur), ms: r.querySelector('.ms').textContent,
        bar: r.querySelector('.bar').getBoundingClientRect().width,
        track: r.querySelector('.track').getBoundingClientRect().width}))""")
    assert [(r["name"], r["dur"]) for r in rows] == phases, (rows, headers["server-timing"])
    assert text(driver, "f-total") == f"total {total:.2f} ms"
    longest = max(d for _, d in phases)
    assert longest > 0
    for r in rows:
        assert r["ms"] == f"{r['dur']:.2f} ms", r
        expected = max(2.0, r["dur"] / longest * r["track"]) if r["dur"] > 0 else 0.0
        assert r["track"] > 100, f"timing track only {r['track']} px wide"
        assert abs(r["bar"] - expected) <= 1.5, f"bar of {r['name']} ({r['dur']} ms) is {r['bar']} px, expected {expected:.1f}"
        if r["dur"] > 0:
            assert r["bar"] > 0
    return headers



# ---- tests -------------------------------------------------------------------------------------

def test_demo_page_renders_a_spec_with_its_timing(browser, demo, capsys):
    run = demo(sign=False)
    # `/` is the page; image URLs still reach kiln; the images folder is listed, not served by nginx.
    page = run.client.get("/")
    assert page.status == 200 and page.content_type == "text/html", page.describe()
    original = run.client.get("/rocket.jpg")
    assert original.status == 200 and original.content_type == "image/jpeg" and original.header("x-cache"), \
        original.describe()
    assert run.client.get("/_demo/images/rocket.jpg").status == 404

    load(browser, run)
    log: list = []
    listed = browser.execute_script(
        "return [...document.querySelectorAll('#image-list button')].map(b => b.dataset.path)")
    assert listed and sorted(listed) == demo_images(), (listed, demo_images())
    assert not browser.execute_script("return document.getElementById('signed-row').hidden === false")

    # Typed options: the first answer is rendered (MISS), the same URL again comes from kiln's cache.
    url = "/rs:200:150:fill/f:webp/coffee.png"
    assert apply_spec(browser, "rs:200:150:fill/f:webp", "coffee.png", url) == "done"
    assert text(browser, "url") == url
    # The typed options show in the controls too.
    assert browser.execute_script("return ['c-w', 'c-h', 'c-mode', 'c-format'].map(i => document.getElementById(i).value)") \
        == ["200", "150", "fill", "webp"]
    first = check_result(browser, log, url, 200, 150)
    assert first["x-cache"] == "MISS" and first["content-type"] == "image/webp", first
    screenshot(browser, "demo-page.png", capsys)  # a rendered answer: every phase in the chart
    browser.execute_script("document.getElementById('apply').click()")
    wait_for(browser, "document.getElementById('history').tBodies[0].rows.length >= 2 && "
                      "document.getElementById('result').dataset.state === 'done'", "the second answer")
    again = check_result(browser, log, url, 200, 150)
    assert again["x-cache"].startswith("HIT"), again
    history = browser.execute_script("""return [...document.querySelectorAll('#history tbody tr')]
        .slice(0, 2).map(r => [...r.cells].map(c => c.textContent))""")
    assert [h[5] for h in history] == [again["x-cache"], "MISS"], history
    assert all(h[2] == url and h[1] == "200" for h in history), history

    # The controls write the options: fill 120x90 as PNG.
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    for field, value in (("c-w", "120"), ("c-h", "90")):
        el = browser.find_element(By.ID, field)
        el.clear()
        el.send_keys(value)
    Select(browser.find_element(By.ID, "c-mode")).select_by_value("fill")
    Select(browser.find_element(By.ID, "c-format")).select_by_value("png")
    wait_for(browser, "document.getElementById('result').dataset.url === '/rs:120:90:fill/f:png/coffee.png' && "
                      "document.getElementById('result').dataset.state === 'done'", "the controls' result")
    headers = check_result(browser, log, "/rs:120:90:fill/f:png/coffee.png", 120, 90)
    assert headers["content-type"] == "image/png"

    # A bad spec: the page shows kiln's one-line reason, exactly.
    bad = "/rs:200:150:fill/f:svg/coffee.png"
    assert apply_spec(browser, "rs:200:150:fill/f:svg", "coffee.png", bad) == "error"
    answer = run.client.get(bad)
    assert answer.status == 400, answer.describe()
    assert_plain_error(answer, bad)
    assert text(browser, "error") == answer.body.decode().strip()
    assert text(browser, "f-status").startswith("400")
    assert browser.execute_script("return document.getElementById('result-img').hidden")


def test_demo_page_signs_urls_when_signing_is_on(browser, demo, capsys):
    run = demo(sign=True)
    config = json.loads(run.client.get("/_demo/config.json").body)
    assert config["demo_only"] is True and config["signing"], config
    key, salt, size = config["signing"]["key"], config["signing"]["salt"], config["signing"]["size"]
    unsigned = run.client.get("/rs:160:120:fill/f:png/rocket.jpg")
    assert unsigned.status == 403, unsigned.describe()

    load(browser, run)
    assert "signed" in text(browser, "signing-badge")
    log: list = []
    path = "/rs:160:120:fill/f:png/rocket.jpg"
    mac = hmac.new(bytes.fromhex(key), bytes.fromhex(salt) + path.encode(), hashlib.sha256).digest()
    signed = "/" + base64.urlsafe_b64encode(mac[:size]).rstrip(b"=").decode() + path
    assert apply_spec(browser, "rs:160:120:fill/f:png", "rocket.jpg", signed) == "done"
    assert text(browser, "url") == path
    assert text(browser, "signed-url") == signed
    assert browser.execute_script("return document.getElementById('signed-row').hidden") is False
    check_result(browser, log, signed, 160, 120)

    # The shown signed URL renders on its own; the thumbnails (signed too) all loaded.
    r, im = run.client.image(signed)
    assert r.content_type == "image/png" and im.size == (160, 120), r.describe()
    thumbs = wait_for(browser, """(() => { const t = [...document.querySelectorAll('#image-list img')];
        return t.length > 0 && t.every(i => i.complete && i.naturalWidth > 0) && t.length; })()""",
                      "the signed thumbnails")
    assert thumbs == len(demo_images())
    screenshot(browser, "demo-page-signed.png", capsys)


def test_demo_locations_in_the_tests_stack(make_stack, root):
    """kiln_write_nginx_conf's KILN_NGINX_DEMO in a tests' stack: `/` is the page, the root is listed,
    image URLs are kiln's as before."""
    s = make_stack(nginx_env={"KILN_NGINX_DEMO": str(root)})
    c = s.client()
    page = c.get("/")
    assert page.status == 200 and page.content_type == "text/html" and b"demo.js" in page.body, page.describe()
    listing = c.get("/_demo/images/")
    assert listing.status == 200, listing.describe()
    assert sorted(e["name"] for e in json.loads(listing.body)) == sorted(n for n in os.listdir(root)
                                                                     if not n.startswith("."))
    config = json.loads(c.get("/_demo/config.json").body)
    assert config["signing"] is None and config["demo_only"] is True
    r, im = c.image("/rs:64:48:fill/f:webp/pillow_hopper.jpg")
    assert im.size == (64, 48) and r.header("x-cache") == "MISS", r.describe()
    assert c.get("/_demo/images/pillow_hopper.jpg").status == 404
