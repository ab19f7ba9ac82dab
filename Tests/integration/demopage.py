"""The demo page's test harness (Tests/integration/test_demo_page.py): the real `scripts/run` on a
free port, Debian's headless chromium through Debian's chromedriver (Selenium), and helpers that
read the page. Every process started here is stopped by its owner: DemoRun.stop(), chromium()'s exit.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from helpers import KILN_BIN, REPO, HttpClient
from stack import alive, child_pids, free_port

ARTIFACTS = REPO / ".build" / "artifacts"
DEMO_ROOT = REPO / "demo"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
IMAGE_FILE = re.compile(r"\.(jpe?g|png|webp)$", re.I)
WAIT = 20  # seconds for one page state


def demo_images() -> list[str]:
    """What the page must list: the JPEG, PNG and WebP files of demo/ (and two folders down)."""
    return sorted(str(p.relative_to(DEMO_ROOT)) for p in DEMO_ROOT.rglob("*")
                  if p.is_file() and IMAGE_FILE.search(p.name) and len(p.relative_to(DEMO_ROOT).parts) <= 3)


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for c in child_pids(todo.pop()):
            out.append(c)
            todo.append(c)
    return out


def kill_all(pids: list[int]) -> None:
    for p in pids:
        if alive(p):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


class DemoRun:
    """`scripts/run` on a free port; stop() is Ctrl-C's path (the script's trap stops nginx and kiln)."""

    def __init__(self, sign: bool):
        self.dir = Path(tempfile.mkdtemp(prefix="kiln-demo-test-", dir=os.environ.get("TMPDIR", "/tmp")))
        self.out = self.dir / "run.out"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.sign = sign
        self.proc: subprocess.Popen | None = None
        self.servers: list[int] = []  # kiln's and nginx's masters, for the last-resort cleanup

    def start(self) -> "DemoRun":
        env = {**os.environ, "KILN_PORT": str(self.port), "KILN_SKIP_BUILD": "1", "KILN_BIN": str(KILN_BIN),
               "KILN_WORKERS": "2", "KILN_DEMO_SIGN": "1" if self.sign else "0"}
        self.proc = subprocess.Popen([str(REPO / "scripts" / "run")], stdin=subprocess.DEVNULL,
                                     stdout=open(self.out, "wb"), stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        deadline = time.monotonic() + 30
        while "Press Ctrl-C to stop." not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"scripts/run did not start (status {self.proc.returncode}):\n{self.output()}",
                            pytrace=False)
            time.sleep(0.1)
        run_dir = re.search(r"socket (\S+)/kiln\.sock", self.output())
        assert run_dir, self.output()
        self.run_dir = Path(run_dir[1])
        for name in ("kiln.master.pid", "nginx.master.pid"):
            self.servers.append(int((self.run_dir / name).read_text()))
        self.client = HttpClient("127.0.0.1", self.port)
        return self

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def stop(self) -> None:
        workers = [c for p in self.servers for c in child_pids(p)]
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(25)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        kill_all(self.servers + workers)
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def chromium():
    """Headless chromium (Debian's) through Debian's chromedriver, with the DevTools network log on;
    on exit, quit and any leftover chromium or chromedriver process killed."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.fail(f"{path} is not installed (scripts/test installs chromium and chromium-driver)",
                        pytrace=False)
    profile = tempfile.mkdtemp(prefix="kiln-demo-chromium-", dir=os.environ.get("TMPDIR", "/tmp"))
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--hide-scrollbars", "--no-first-run", "--disable-extensions",
                f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = Service(CHROMEDRIVER, log_output=os.path.join(profile, "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    try:
        yield driver
    finally:
        leftovers = descendants(service.process.pid) + [service.process.pid]
        try:
            driver.quit()
        finally:
            time.sleep(0.2)
            kill_all(leftovers)
            shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver, script: str, what: str, timeout: float = WAIT):
    """Polls a JavaScript expression until it is truthy; returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script("return " + script)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what} ({script})\n"
                                 f"browser log: {driver.get_log('browser')}")
        time.sleep(0.05)


def load(driver, run: DemoRun) -> None:
    driver.get(run.base + "/")
    wait_for(driver, "document.body.dataset.ready === '1'", "the page to start")


def apply_spec(driver, spec: str, source: str, expected_url: str) -> str:
    """Picks `source` in the image list, types `spec` and presses Enter; waits for the result of
    `expected_url`; returns the result's state (`done` or `error`)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.find_element(By.CSS_SELECTOR, f'#image-list button[data-path="{source}"]').click()
    field = driver.find_element(By.ID, "spec")
    field.clear()
    field.send_keys(spec + Keys.ENTER)
    return wait_for(driver, f"""(() => {{ const r = document.getElementById('result');
        return r.dataset.url === {json.dumps(expected_url)} && r.dataset.state !== 'loading' && r.dataset.state; }})()""",
                    f"the result of {expected_url}")


def response_headers(driver, log: list, url: str) -> dict[str, str]:
    """The headers of the last response the browser received for `url` (DevTools network events)."""
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.responseReceived":
            log.append(msg["params"]["response"])
    found = [r for r in log if r["url"] == url]
    assert found, f"the browser's network log has no response for {url}"
    return {k.lower(): v for k, v in found[-1]["headers"].items()}


def server_timing(header: str) -> list[tuple[str, float]]:
    out = []
    for entry in header.split(","):
        name, *params = [p.strip() for p in entry.split(";")]
        dur = [float(p[4:]) for p in params if p.startswith("dur=")]
        out.append((name, dur[0] if dur else 0.0))
    return out


def text(driver, element_id: str) -> str:
    return driver.execute_script(f"return document.getElementById('{element_id}').textContent").strip()


def screenshot(driver, name: str, capsys) -> Path:
    """Saves the page as .build/artifacts/NAME and says where in the test output (not captured)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    assert driver.save_screenshot(str(path)), f"no screenshot at {path}"
    assert path.stat().st_size > 10_000, f"{path} is suspiciously small"
    with capsys.disabled():
        print(f"\n    demo page screenshot: {path}")
    return path


def run_url(driver, path: str) -> str:
    return driver.execute_script("return location.origin") + path
