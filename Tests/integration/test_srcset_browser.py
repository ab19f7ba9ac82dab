"""`kiln srcset` in a real browser: Debian's headless chromium (Selenium, as test_demo_page.py) loads
a page whose `<img srcset sizes>` comes from `kiln srcset`, at viewport widths 375 and 1280 and
device pixel ratios 1 and 2 (DevTools `Emulation.setDeviceMetricsOverride`), with the images on
the real kiln behind nginx and the page on a small server of its own on 127.0.0.1.

The widths and sizes make the choice unambiguous: `sizes` gives a slot of 375 CSS px on the narrow
viewport and 640 on the wide one, and the srcset has exactly slot × DPR among its widths
(375, 640, 750, 1280), so every rule a browser may use (the first candidate whose density reaches
the DPR, Chromium's geometric-mean tie-break) picks that one. Checked: `currentSrc`, the only image
request in the browser's network log, the answer's pixel width (a plain Image of currentSrc) and
the density-corrected naturalWidth (the slot). Screenshots: .build/artifacts/srcset-<w>-dpr<d>.png.
"""
from __future__ import annotations

import http.server
import json
import subprocess
import threading

import pytest

from demopage import ARTIFACTS, chromium, wait_for
from helpers import KILN_BIN, PHOTO_HD
from stack import free_port

pytestmark = pytest.mark.timeout(120)

WIDTHS = [375, 640, 750, 1280]
SIZES = "(max-width: 600px) 100vw, 640px"
CASES = [(375, 1, 375), (375, 2, 750), (1280, 1, 640), (1280, 2, 1280)]  # viewport, DPR, expected w


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


@pytest.fixture
def page_server():
    """Serves one HTML page (set by the test) at http://127.0.0.1:PORT/ until the test ends."""
    page = {"html": b""}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = page["html"]
            self.send_response(200 if self.path == "/" else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body) if self.path == "/" else 0))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if self.path == "/":
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield page, f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join(5)


def image_requests(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent" and msg["params"].get("type") == "Image":
            urls.append(msg["params"]["request"]["url"])
    return urls


def test_srcset_from_kiln_srcset_picks_the_width_sizes_and_dpr_predict(stack, browser, page_server, capsys):
    base = f"http://127.0.0.1:{stack.port}"
    out = subprocess.run([str(KILN_BIN), "srcset", PHOTO_HD, "--widths", ",".join(map(str, WIDTHS)),
                          "--sizes", SIZES, "--alt", "a photo", "--base-url", base, "--json"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    url_of = {u["width"]: u["url"] for u in doc["urls"]}
    assert sorted(url_of) == WIDTHS, doc
    tag = subprocess.run([str(KILN_BIN), "srcset", PHOTO_HD, "--widths", ",".join(map(str, WIDTHS)),
                          "--sizes", SIZES, "--alt", "a photo", "--base-url", base],
                         capture_output=True, text=True, timeout=30).stdout.strip()
    page, page_url = page_server
    page["html"] = ("<!doctype html><html><head><meta charset='utf-8'><title>srcset</title>"
                    "<style>body{margin:0;font:14px sans-serif} img{display:block}</style></head>"
                    f"<body>{tag}<p id='caption'></p></body></html>").encode()

    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    seen = {}
    try:
        for viewport, dpr, expected in CASES:
            browser.execute_cdp_cmd("Network.clearBrowserCache", {})
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": viewport, "height": 900, "deviceScaleFactor": dpr, "mobile": False})
            browser.get("about:blank")
            image_requests(browser)  # drop what came before
            browser.get(page_url)
            state = wait_for(browser, """(() => { const i = document.querySelector('img');
                return i.complete && i.naturalWidth > 0 && [innerWidth, devicePixelRatio, i.currentSrc, i.naturalWidth,
                       i.getBoundingClientRect().width]; })()""", f"the image at {viewport} px, DPR {dpr}")
            inner, ratio, current, natural, shown = state
            assert (inner, ratio) == (viewport, dpr), state
            slot = viewport if viewport <= 600 else 640
            assert current == url_of[expected], f"{viewport} px, DPR {dpr}: chose {current}, predicted {url_of[expected]}"
            assert natural == slot and shown == slot, f"density-corrected width {natural} (shown {shown}), slot {slot}"
            requested = image_requests(browser)
            assert requested == [url_of[expected]], f"{viewport} px, DPR {dpr}: image requests {requested}"
            # The answer's own pixel size: the same URL as a plain image (no srcset, density 1).
            pixels = browser.execute_async_script("""const done = arguments[arguments.length - 1];
                const im = new Image(); im.onload = () => done([im.naturalWidth, im.naturalHeight]);
                im.onerror = () => done(null); im.src = arguments[0];""", current)
            assert pixels and pixels[0] == expected and abs(pixels[1] - round(expected * 1080 / 1920)) <= 1, (current, pixels)
            browser.execute_script("document.getElementById('caption').textContent = arguments[0]",
                                   f"viewport {viewport} px, DPR {dpr}: {current} ({pixels[0]}x{pixels[1]})")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = ARTIFACTS / f"srcset-{viewport}-dpr{dpr}.png"
            assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 5_000, shot
            seen[(viewport, dpr)] = current
            with capsys.disabled():
                print(f"\n    srcset {viewport} px DPR {dpr}: {current} -> {shot}")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    assert len(set(seen.values())) == 4, seen  # four cases, four different URLs
