"""OpenTelemetry traces (issue 40, part 3): each worker exports its sampled requests over
OTLP/HTTP (protobuf) to `tracing.endpoint`; here a real receiver (otlpreceiver.py: the official
`opentelemetry-proto` classes decode every request) sits on loopback behind a real nginx and kiln.

- a request with a W3C `traceparent` through nginx is one SERVER span, child of the caller's span,
  with one INTERNAL child per stage that ran; the attributes say the variant, the cache outcome,
  the sizes and the worker; a hit has the cache's spans instead of the render's;
- without a `traceparent`, the trace id is nginx's request id (X-Request-Id);
- the sampler: parent-based by default (an unsampled parent is not traced, a sampled one is, at
  ratio 0), and by the trace id's low 63 bits when `follow_parent = false` (exactly the ids
  below ratio × 2⁶³, checked one by one);
- the shared store's read and write are spans of their own;
- a receiver that hangs costs requests nothing: 40 requests are answered while its first POST is
  still unanswered, and the spans beyond `tracing.queue_size` are counted as dropped."""
from __future__ import annotations

import os
import re
import statistics
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from otlpreceiver import Receiver
from seaweed import SeaweedStore, weed_binary

pytestmark = pytest.mark.timeout(180)

SERVER, INTERNAL = 2, 1
PARENT_SPAN = "b7ad6b7169203331"


@pytest.fixture
def receiver():
    r = Receiver().start()
    yield r
    r.stop()


def traced_stack(make_stack, receiver, *extra: str, workers: int = 1, **kw):
    return make_stack(workers=workers, extra_args=["--set", f"tracing.endpoint={receiver.endpoint}",
                                                   "--set", "tracing.export_interval=50ms", *extra], **kw)


def traceparent(trace_id: str, sampled: bool = True) -> str:
    return f"00-{trace_id}-{PARENT_SPAN}-{'01' if sampled else '00'}"


def new_trace_id() -> str:
    return os.urandom(16).hex()


def scrape(client) -> dict[tuple, float]:
    r = client.get("/_kiln/metrics", timeout=10)
    assert r.status == 200, r.describe()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.body.decode()) for s in family.samples}


def test_a_render_and_a_hit_are_traces_under_the_callers_span(make_stack, receiver, root, disk):
    s = traced_stack(make_stack, receiver, "--set", f"cache.disk_path={disk}")
    client = s.client()
    path = "/rs:300:200:fill/f:webp/pillow_hopper.jpg"
    miss_id, hit_id = new_trace_id(), new_trace_id()
    miss = client.get(path, headers={"traceparent": traceparent(miss_id), "tracestate": "vendor=abc"})
    assert miss.status == 200 and miss.header("X-Cache") == "MISS", miss.describe()
    hit = client.get(path, headers={"traceparent": traceparent(hit_id)})
    assert hit.status == 200 and hit.header("X-Cache").startswith("HIT"), hit.describe()

    spans = receiver.wait_trace(miss_id, lambda sp: any(x.name == "GET" for x in sp))
    roots = [x for x in spans if x.kind == SERVER]
    assert len(roots) == 1, spans
    r = roots[0]
    assert r.name == "GET" and r.parent_span_id == PARENT_SPAN and r.trace_state == "vendor=abc"
    assert r.flags & 0x301 == 0x301, hex(r.flags)  # sampled, parent known to be remote
    a = r.attributes
    assert a["http.request.method"] == "GET" and a["http.response.status_code"] == 200
    assert a["url.path"] == path
    assert a["kiln.cache"] == "MISS"
    assert a["kiln.variant"].endswith("pillow_hopper.jpg") and "rs:300:200:fill" in a["kiln.variant"], a["kiln.variant"]
    assert a["kiln.digest"] == miss.header("ETag").strip('"')
    assert a["kiln.output.format"] == "webp" and a["kiln.output.bytes"] == len(miss.body)
    assert a["http.response.body.size"] == len(miss.body)
    assert a["kiln.source.bytes"] == (root / "pillow_hopper.jpg").stat().st_size
    assert a["kiln.request_id"] == miss.header("X-Request-Id")
    assert a["kiln.worker"] == 0
    assert r.resource["service.name"] == "kiln" and r.resource["process.pid"] in s.worker_pids()
    assert r.status_code == 0 and r.end > r.start

    children = [x for x in spans if x.kind == INTERNAL]
    names = [x.name for x in children]
    for stage in ("spec", "key", "cache.read", "load", "decode", "process", "encode", "cache.write"):
        assert stage in names, names
    for x in children:
        assert x.parent_span_id == r.span_id and x.trace_id == miss_id
        assert r.start <= x.start <= x.end <= r.end, (x.name, x.start, x.end, r.start, r.end)
    assert len({x.span_id for x in spans}) == len(spans)
    # The stages run in order: each render stage starts when the one before ended, or later.
    order = [x for x in sorted(children, key=lambda x: x.start) if x.name in ("load", "sniff", "decode", "process", "encode")]
    assert [x.name for x in order][0] == "load" and [x.name for x in order][-1] == "encode", [x.name for x in order]

    hit_spans = receiver.wait_trace(hit_id)
    hr = [x for x in hit_spans if x.kind == SERVER][0]
    assert hr.attributes["kiln.cache"] == hit.header("X-Cache")
    assert hr.attributes["kiln.digest"] == a["kiln.digest"]
    hit_names = {x.name for x in hit_spans if x.kind == INTERNAL}
    assert "cache" in hit_names and not hit_names & {"decode", "encode", "cache.write"}, hit_names


def test_without_a_traceparent_the_trace_id_is_nginxs_request_id(make_stack, receiver):
    s = traced_stack(make_stack, receiver)
    r = s.client().get("/w:64/f:png/pillow_hopper.jpg")
    assert r.status == 200, r.describe()
    request_id = r.header("X-Request-Id")
    assert re.fullmatch(r"[0-9a-f]{32}", request_id), request_id
    spans = receiver.wait_trace(request_id)
    root = [x for x in spans if x.kind == SERVER]
    assert len(root) == 1 and root[0].parent_span_id == "" and root[0].flags & 0x300 == 0x100, root


def test_a_client_error_is_a_span_without_an_error_status(make_stack, receiver):
    s = traced_stack(make_stack, receiver)
    trace_id = new_trace_id()
    r = s.client().get("/w:64/no-such-file.jpg", headers={"traceparent": traceparent(trace_id)})
    assert r.status == 404, r.describe()
    root = [x for x in receiver.wait_trace(trace_id) if x.kind == SERVER][0]
    assert root.attributes["http.response.status_code"] == 404
    assert root.status_code == 0  # a 4xx is the client's: not an error of the server span (OTel HTTP conventions)


def test_the_sampler_follows_the_parent_and_otherwise_the_trace_id(make_stack, receiver):
    # Parent-based at ratio 0: only a sampled parent's trace is recorded.
    s = traced_stack(make_stack, receiver, "--set", "tracing.sample_ratio=0")
    client = s.client()
    unsampled, plain, sampled = new_trace_id(), None, new_trace_id()
    assert client.get("/w:50/pillow_hopper.jpg", headers={"traceparent": traceparent(unsampled, sampled=False)}).status == 200
    plain = client.get("/w:51/pillow_hopper.jpg").header("X-Request-Id")
    assert client.get("/w:52/pillow_hopper.jpg", headers={"traceparent": traceparent(sampled)}).status == 200
    # One worker answers and queues in order: once the last trace is in, the earlier ones would be.
    assert receiver.wait_trace(sampled)
    assert receiver.trace(unsampled) == [] and receiver.trace(plain) == []
    s.stop()

    # follow_parent = false, ratio 0.5: a trace is kept when its low 8 bytes, top bit dropped,
    # are below 2^62, whatever the parent's flag says.
    s = traced_stack(make_stack, receiver, "--set", "tracing.sample_ratio=0.5", "--set", "tracing.follow_parent=false")
    client = s.client()
    ids = [new_trace_id() for _ in range(24)]
    ids.append(os.urandom(8).hex() + "0000000000000001")  # certainly kept: the last one sent
    expected = {t for t in ids if (int(t[16:], 16) & (2**63 - 1)) < 2**62}
    assert ids[-1] in expected
    for i, t in enumerate(ids):
        r = client.get(f"/w:{40 + i}/pillow_hopper.jpg", headers={"traceparent": traceparent(t, sampled=i % 2 == 0)})
        assert r.status == 200, r.describe()
    assert receiver.wait_trace(ids[-1])
    got = {t for t in ids if receiver.trace(t)}
    assert got == expected, (sorted(got), sorted(expected))
    assert 0 < len(expected) < len(ids)


@pytest.fixture(scope="module")
def weed(tmp_path_factory):
    try:
        weed_binary()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    store = SeaweedStore(tmp_path_factory.mktemp("weed"), bucket="kiln-traces")
    try:
        store.start()
    except RuntimeError as e:
        store.stop()
        pytest.fail(str(e), pytrace=False)
    yield store
    store.stop()


def test_the_shared_stores_read_and_write_are_spans(make_stack, receiver, weed, tmp_path):
    os.chmod(tmp_path, 0o755)
    args = ["--set", "cache.shared=s3://kiln-traces/t/", "--set", f"cache.shared_endpoint={weed.endpoint}",
            "--set", "source.allowed_networks=127.0.0.1"]
    env = {**weed.environment, "AWS_SESSION_TOKEN": ""}
    path = "/w:140/f:webp/pillow_hopper.jpg"
    hosts = []
    for name in ("a", "b"):
        disk = tmp_path / name
        disk.mkdir()
        hosts.append(traced_stack(make_stack, receiver, *args, "--set", f"cache.disk_path={disk}", env=env))
    rendered, shared = new_trace_id(), new_trace_id()
    r = hosts[0].client().get(path, headers={"traceparent": traceparent(rendered)})
    assert r.status == 200 and r.header("X-Cache") == "MISS", r.describe()
    # The write follows the answer: its span comes with the request's, after the answer's end.
    spans = receiver.wait_trace(rendered, lambda sp: any(x.name == "store.write" for x in sp))
    root = [x for x in spans if x.kind == SERVER][0]
    write = [x for x in spans if x.name == "store.write"]
    assert len(write) == 1 and write[0].parent_span_id == root.span_id and write[0].start >= root.end, spans
    assert [x.name for x in spans if x.name == "store.read"] == ["store.read"]  # looked up before rendering
    # Another host with nothing in memory or on disk answers from the store (the write's span
    # is recorded once the write is done).
    again = hosts[1].client().get(path, headers={"traceparent": traceparent(shared)})
    assert again.status == 200 and again.header("X-Cache") == "HIT-SHARED", again.describe()
    spans = receiver.wait_trace(shared)
    root = [x for x in spans if x.kind == SERVER][0]
    assert root.attributes["kiln.cache"] == "HIT-SHARED"
    names = {x.name for x in spans if x.kind == INTERNAL}
    assert {"store.read", "cache.write"} <= names and not names & {"decode", "encode", "store.write"}, names


def test_a_hanging_receiver_costs_requests_nothing(make_stack, receiver, disk):
    receiver.hang()
    s = traced_stack(make_stack, receiver, "--set", "tracing.export_timeout=60s", "--set", "tracing.queue_size=16",
                     "--set", f"cache.disk_path={disk}")
    client = s.client()
    # The readiness request's trace went first: the exporter's POST now waits, unanswered.
    assert receiver.wait_pending(1), "no export reached the receiver"
    path = "/w:120/f:webp/pillow_hopper.jpg"
    assert client.get(path).status == 200
    before = scrape(client)
    times = []
    for _ in range(40):
        t0 = time.monotonic()
        r = client.get(path, headers={"traceparent": traceparent(new_trace_id())})
        times.append(time.monotonic() - t0)
        assert r.status == 200, r.describe()
    # Every request was answered while the collector still holds the first export.
    with receiver.lock:
        assert receiver.pending == 1 and receiver.spans == []
    after = scrape(client)
    dropped = after.get(("kiln_trace_spans_total", (("result", "dropped"),)), 0) - \
        before.get(("kiln_trace_spans_total", (("result", "dropped"),)), 0)
    assert dropped > 0, "a full queue must drop (and count) spans"
    print(f"\n40 hits with the collector hanging: median {statistics.median(times) * 1000:.2f} ms, "
          f"max {max(times) * 1000:.2f} ms; {dropped:.0f} spans dropped")
    receiver.release()
    # Released, the held export completes and the thread sends what the queue held (a second
    # POST: the queue was emptied when it was taken); the worker then goes on exporting.
    deadline = time.monotonic() + 20
    while len(receiver.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(receiver.requests) >= 2, receiver.requests
    t = new_trace_id()
    assert client.get(path, headers={"traceparent": traceparent(t)}).status == 200
    assert receiver.wait_trace(t), "exports did not resume after the collector came back"


def test_a_wrong_tracing_setting_is_one_line_naming_it(tmp_path):
    import subprocess
    from helpers import KILN_BIN
    for key, value in [("endpoint", '"ftp://collector/v1/traces"'), ("sample_ratio", "1.5"), ("headers", '"no-colon"'),
                       ("queue_size", "3"), ("export_timeout", '"0s"')]:
        conf = tmp_path / f"{key}.toml"
        conf.write_text(f"[tracing]\n{key} = {value}\n")
        out = subprocess.run([str(KILN_BIN), "config", "check", str(conf)], capture_output=True, text=True, timeout=30)
        text = (out.stdout + out.stderr).strip()
        assert out.returncode == 2 and f"tracing.{key}" in text and len(text.splitlines()) == 1, (key, out.returncode, text)
