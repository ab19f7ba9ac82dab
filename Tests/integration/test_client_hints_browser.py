"""Client Hints and Save-Data in a real browser (issue 27 §4): headless Chromium (Debian's,
through Selenium and chromedriver, as test_demo_page.py) loads a page that nginx serves with
`Accept-CH` (nginx/kiln-client-hints.conf, KILN_NGINX_CLIENT_HINTS=1); the image requests it then
hints get the snapped widths and the right `Vary`; with Save-Data on (DevTools protocol) the
answers are smaller and carry `Vary: Save-Data`. http://127.0.0.1 is a secure context for
Chromium, so it honours Accept-CH there. Screenshots: .build/artifacts/client-hints-*.png.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from demopage import chromium, response_headers, screenshot, wait_for
from helpers import BENCH
from stack import running_stack

pytestmark = pytest.mark.timeout(90)

IMG = "photo_1920x1080.jpg"
SLOT = f"/w:auto/q:70/{IMG}"          # <img sizes="300px">: Sec-CH-Width = 300 × DPR
VIEWPORT = f"/w:auto/q:71/{IMG}"      # no sizes: Sec-CH-Viewport-Width × Sec-CH-DPR
FIXED = f"/ch:1/w:800/f:auto/{IMG}"   # Sec-CH-DPR multiplies 800; Save-Data lowers the quality
PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>Client Hints</title></head>
<body style="margin:0">
<img id="slot" src="{SLOT}" sizes="300px" style="width:300px">
<img id="viewport" src="{VIEWPORT}" style="width:400px">
<img id="fixed" src="{FIXED}" style="width:400px">
</body></html>"""
VARY_AUTO = "Sec-CH-Width, Sec-CH-Viewport-Width, Width, Viewport-Width, Sec-CH-DPR, DPR"


@pytest.fixture(scope="module")
def site():
    """A root with the photo and the page (served by nginx's /static/), and its stack."""
    base = Path(tempfile.mkdtemp(prefix="kiln-ch-root-", dir=os.environ.get("TMPDIR", "/tmp")))
    os.chmod(base, 0o755)
    shutil.copy2(BENCH / IMG, base / IMG)
    (base / "hints.html").write_text(PAGE)
    for p in base.iterdir():
        os.chmod(p, 0o644)
    yield from running_stack(root=base, workers=1, nginx_env={"KILN_NGINX_CLIENT_HINTS": "1"})
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        yield driver


def load_page(driver, site, dpr: float, save_data: bool) -> dict[str, dict]:
    """Loads the page at a device pixel ratio, with or without Save-Data; per image: its natural
    width and the response headers the browser received."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 900, "deviceScaleFactor": dpr, "mobile": False})
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Save-Data": "on"} if save_data else {}})
    driver.get_log("performance")  # drop earlier events
    base = f"http://127.0.0.1:{site.port}"
    driver.get(f"{base}/static/hints.html")
    wait_for(driver, "[...document.images].every(i => i.complete && i.naturalWidth > 0)", "the hinted images")
    widths = driver.execute_script("return Object.fromEntries([...document.images].map(i => [i.id, i.naturalWidth]))")
    log: list = []
    return {name: {"width": widths[name], "headers": response_headers(driver, log, base + path)}
            for name, path in (("slot", SLOT), ("viewport", VIEWPORT), ("fixed", FIXED))}


def test_page_sends_accept_ch(site):
    page = site.client().get("/static/hints.html")
    assert page.status == 200 and page.content_type == "text/html", page.describe()
    assert page.header("accept-ch") == "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width", page.describe()


@pytest.mark.parametrize("dpr,slot,viewport,fixed", [(1, 320, 1280, 800), (2, 640, 1920, 1600)])
def test_hinted_requests_get_snapped_widths_and_vary(browser, site, capsys, dpr, slot, viewport, fixed):
    got = load_page(browser, site, dpr, save_data=False)
    assert {k: v["width"] for k, v in got.items()} == {"slot": slot, "viewport": viewport, "fixed": fixed}, got
    assert got["slot"]["headers"]["vary"] == VARY_AUTO, got["slot"]   # q: in the URL: no Save-Data
    assert got["viewport"]["headers"]["vary"] == VARY_AUTO
    fixed_headers = got["fixed"]["headers"]
    assert fixed_headers["vary"] == "Accept, Sec-CH-DPR, DPR, Save-Data", fixed_headers
    assert fixed_headers["content-type"] in ("image/avif", "image/webp"), fixed_headers
    # The same answer as the native URL of the bucket (one cache entry, one ETag).
    native = site.client().get(f"/w:{slot}/q:70/{IMG}")
    assert native.header("etag") == got["slot"]["headers"]["etag"], (native.describe(), got["slot"])
    screenshot(browser, f"client-hints-dpr{dpr}.png", capsys)


def test_save_data_gives_smaller_answers(browser, site, capsys):
    plain = load_page(browser, site, 1, save_data=False)
    saving = load_page(browser, site, 1, save_data=True)
    screenshot(browser, "client-hints-save-data.png", capsys)
    for name in ("slot", "viewport", "fixed"):
        assert plain[name]["width"] == saving[name]["width"], (plain[name], saving[name])
    # The slot's and viewport's URLs carry q:, which wins: the same answer, no Save-Data in Vary.
    for name in ("slot", "viewport"):
        a, b = plain[name]["headers"], saving[name]["headers"]
        assert a["etag"] == b["etag"] and "Save-Data" not in b["vary"], (a, b)
    # The fixed one has none: Save-Data lowers its quality.
    fa, fb = plain["fixed"]["headers"], saving["fixed"]["headers"]
    assert fa["vary"] == fb["vary"] == "Accept, Sec-CH-DPR, DPR, Save-Data", (fa, fb)
    assert fa["etag"] != fb["etag"] and fa["content-type"] == fb["content-type"], (fa, fb)
    assert int(fb["content-length"]) < int(fa["content-length"]) * 0.9, (fa, fb)
