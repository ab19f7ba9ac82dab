"""The fleet's (hostfleet.py) store under attack and failing:
- hostile source names give keys inside the prefix; an object tampered with in the store (cut
  short, or a wrong digest in its metadata) is discarded and rendered again, then overwritten;
- the store hung (SIGSTOP) and then killed: every request still answers 200 by rendering, none
  slower than a render plus the store's timeout (2x margin), errors counted; started again,
  writes resume.
"""

from __future__ import annotations

import hashlib
import time
import urllib.parse

from fcgiclient import fcgi_params
from hostfleet import BUCKET, KEY_PATTERN, ODD, PREFIX, RETRY_AFTER, SECRET, SOURCE, STATUS_PORT, STORE_TIMEOUT, TAMPERED, VARIANTS, fcgi_tcp, sign, source_tag, stdout_of, variant_path, wait_for_keys


def test_hostile_names_and_tampered_objects(fleet, distribution):
    """Odd and hostile source names give object keys inside the prefix (traversals are refused
    before the store); an object cut short or carrying a wrong digest in its metadata is never
    served: the host renders again and overwrites it."""
    client = fleet.client()
    for name in ODD:
        quoted = "/".join(urllib.parse.quote(seg, safe="") for seg in name.split("/"))
        r = client.get(sign(f"/rs:33:33:force/{quoted}"))
        assert r.status == 200, f"{name!r}: {r.describe()}"
    for hostile in ["/rs:33:33:force/../peer-secret", "/rs:33:33:force/%2e%2e/%2e%2e/etc/passwd",
                    "/rs:33:33:force/odd%20dir/..%2F..%2Fpeer-secret"]:
        r = client.get(sign(hostile))
        assert 400 <= r.status < 500, f"{hostile}: {r.describe()}"
    for name in ODD:
        assert len(wait_for_keys(fleet, f"{PREFIX}{source_tag(name)}/", 1)) == 1, name
    everything = fleet.store.keys()
    assert everything and all(KEY_PATTERN.match(k) for k in everything), [k for k in everything if not KEY_PATTERN.match(k)][:5]

    s3 = fleet.store.client()
    tampered: list[str] = []
    for i, damage in enumerate(["cut", "digest"]):
        path = sign(f"/rs:{40 + i}:{30 + i}:force/{TAMPERED}")
        first = client.get(path)
        assert first.status == 200 and first.header("x-cache") == "MISS"
        host = fleet.where([first.header("x-request-id")])[first.header("x-request-id")][0]
        prefix = f"{PREFIX}{source_tag(TAMPERED)}/"
        fresh = [k for k in wait_for_keys(fleet, prefix, i + 1) if k not in tampered]
        assert len(fresh) == 1, f"one new object for one new variant: {fresh}"
        key = fresh[0]
        tampered.append(key)
        obj = s3.get_object(Bucket=BUCKET, Key=key)
        body, meta = obj["Body"].read(), obj["Metadata"]
        assert body == first.body
        if damage == "cut":
            s3.put_object(Bucket=BUCKET, Key=key, Body=body[: len(body) // 2], Metadata=meta, ContentType=obj["ContentType"])
        else:
            meta = dict(meta, **{"kiln-sha256": "0" * 64})
            s3.put_object(Bucket=BUCKET, Key=key, Body=body, Metadata=meta, ContentType=obj["ContentType"])
        # Forget it on its host (disk and memory), through the host's own purge endpoint.
        raw = fcgi_tcp(fleet.hosts[host].addr, STATUS_PORT,
                       fcgi_params("POST", "/_kiln/purge?source=" + urllib.parse.quote(TAMPERED, safe=""))
                       | {"KILN_PEER_SECRET": SECRET}, source=fleet.net.nginx_addr)
        assert stdout_of(raw).startswith(b"Status: 200") or b"purged" in stdout_of(raw), stdout_of(raw)[:300]
        again = client.get(path)
        assert again.status == 200, again.describe()
        assert again.header("x-cache") == "MISS", f"{damage}: a tampered object was served ({again.header('x-cache')})"
        assert again.body == first.body and again.header("etag") == first.header("etag")
        # The render overwrote it with a good copy.
        deadline = time.monotonic() + 20
        while True:
            obj = s3.get_object(Bucket=BUCKET, Key=key)
            good = obj["Body"].read() == first.body and obj["Metadata"].get("kiln-sha256") == hashlib.sha256(first.body).hexdigest()
            if good or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert good, f"{damage}: the tampered object was not overwritten"


def test_store_down_fails_open(fleet, distribution):
    """The store hung, then dead: every request answers 200 by rendering, none slower than a
    render plus the store's timeout (2x margin), the errors counted; started again, writes
    resume."""
    client = fleet.client()

    def render_all(sizes):
        times, answers = [], []
        for w, h in sizes:
            t = time.monotonic()
            r = client.get(sign(variant_path(w, h)), timeout=30)
            times.append(time.monotonic() - t)
            assert r.status == 200 and r.content_type == "image/jpeg", f"{w}x{h}: {r.describe()}\n{fleet.diagnostics()}"
            assert r.header("x-cache") == "MISS", f"{w}x{h}: {r.header('x-cache')}"
            answers.append(r)
        return times, answers

    prefix = f"{PREFIX}{source_tag(SOURCE)}/"
    baseline, _ = render_all([(50 + i, 9) for i in range(12)])  # new variants, store up
    stored = len(wait_for_keys(fleet, prefix, len(VARIANTS) + 12 + 12))
    errors_before = sum(h.metric("kiln_shared_cache_reads_total", 'result="error"') for h in fleet.hosts)

    fleet.store.pause()
    try:
        hung, _ = render_all([(50 + i, 10) for i in range(24)])
    finally:
        fleet.store.resume()
    fleet.store.stop()
    dead, _ = render_all([(50 + i, 11) for i in range(12)])
    bound = 2 * (max(baseline) + STORE_TIMEOUT)
    print(f"\ntest_hosts: store up: slowest render {max(baseline):.3f}s; hung: slowest {max(hung):.3f}s; "
          f"dead: slowest {max(dead):.3f}s (bound {bound:.3f}s)")
    assert max(hung + dead) < bound, f"a request took {max(hung + dead):.2f}s with the store down (bound {bound:.2f}s)"
    errors = sum(h.metric("kiln_shared_cache_reads_total", 'result="error"') for h in fleet.hosts) - errors_before
    skipped = sum(h.metric("kiln_shared_cache_reads_total", 'result="skipped"') for h in fleet.hosts)
    assert errors >= 1, "the store's failures are counted"
    assert skipped >= 1, "after a failure the breaker skips the store"
    assert all(h.proc.poll() is None and len(h.workers()) == 2 for h in fleet.hosts)

    fleet.store.start()
    # New variants until one reaches the store (each worker's breaker reopens after RETRY_AFTER).
    deadline = time.monotonic() + 10 * RETRY_AFTER + 20
    i = 0
    while len(fleet.store.keys(prefix)) <= stored:
        assert time.monotonic() < deadline, "writes did not resume after the store came back"
        render_all([(50 + i % 40, 13 + i // 40)])
        i += 1
        time.sleep(0.2)
