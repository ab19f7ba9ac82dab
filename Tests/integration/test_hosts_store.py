"""The fleet's (hostfleet.py) shared result store:
- every rendered variant reaches the store, under `fleet/<source tag>/<variant>` and nowhere else;
- a host whose disk cache is wiped (and memory lost with a restart) answers its whole share from
  the store: zero renders;
- one host's master killed: its variants keep answering 200 (the next host on the ring, from
  the store, not by rendering), the other hosts keep theirs; started again, its variants come
  back to it (disk cache hits) within fail_timeout and a little.
"""

from __future__ import annotations

import hashlib
import signal
import time

from hostfleet import BUCKET, ETAGS, KEY_PATTERN, PREFIX, SOURCE, VARIANTS, get_all, source_tag, wait_for_keys


def test_store_holds_every_variant(fleet, distribution):
    """Every rendered variant reaches the shared store, under the prefix and its source's tag,
    with the metadata that lets a host answer it without decoding."""
    prefix = f"{PREFIX}{source_tag(SOURCE)}/"
    rendered = len(VARIANTS) + 12  # and the 12 of test_url_forms_land_on_one_host, each under one key whatever its form
    keys = wait_for_keys(fleet, prefix, rendered)
    assert len(keys) == rendered, f"{len(keys)} objects under {prefix} after {rendered} renders\n{fleet.diagnostics()}"
    everything = fleet.store.keys()
    assert all(KEY_PATTERN.match(k) for k in everything), [k for k in everything if not KEY_PATTERN.match(k)][:5]
    head = fleet.store.client().head_object(Bucket=BUCKET, Key=keys[0])
    meta = head["Metadata"]
    assert head["ContentType"] == "image/jpeg"
    for name in ("kiln-key", "kiln-digest", "kiln-sha256"):
        assert meta.get(name), f"object metadata {meta} lacks {name}"
    assert meta["kiln-key"] == keys[0].rsplit("/", 1)[1]
    assert f'"{meta["kiln-digest"]}"' in {etag for etag, _ in ETAGS.values()}, "the digest is a rendered variant's ETag"


def test_wiped_host_serves_from_store(fleet, distribution):
    """A host whose disk cache is wiped and whose memory is lost (a restart) answers its whole
    share from the store: the same ETags and bytes, zero renders."""
    placed, _, _ = distribution
    host = fleet.hosts[2]
    mine = sorted(p for p, h in placed.items() if h == host.index)
    wait_for_keys(fleet, f"{PREFIX}{source_tag(SOURCE)}/", len(VARIANTS) + 12)
    host.stop()
    host.wipe_cache()
    assert not any(p.is_file() for p in host.cache.rglob("*"))
    host.start()
    client = fleet.client()
    results = get_all(client, mine)
    bad = [(p, r.describe()) for p, r in results if r.status != 200]
    assert not bad, f"{len(bad)} of {len(mine)} failed: {bad[:3]}\n{fleet.diagnostics()}"
    seen = fleet.where([r.header("x-request-id") for _, r in results])
    caches = {}
    for path, r in results:
        where, status, cache = seen[r.header("x-request-id")]
        assert where == host.index, f"{path} left host {host.index + 1} after its restart"
        caches[cache] = caches.get(cache, 0) + 1
        assert r.header("x-cache") == "HIT-SHARED", f"{path}: X-Cache {r.header('x-cache')} (a render or a local hit)"
        assert (r.header("etag"), hashlib.sha256(r.body).hexdigest()) == ETAGS[path], f"{path}: not the bytes rendered before"
    assert caches == {"HIT-SHARED": len(mine)}, caches
    print(f"\ntest_hosts: host {host.index + 1}'s {len(mine)} variants after its disk was wiped: {caches}")


def test_failover_and_return(fleet, distribution):
    """Kill one host's master: its variants keep answering 200 through the next host, the others
    stay where they were; start it again: its variants come back to it (its disk cache)."""
    placed, _, _ = distribution
    client = fleet.client()
    victim = fleet.hosts[1]
    mine = [p for p, h in placed.items() if h == victim.index][:30]
    wait_for_keys(fleet, f"{PREFIX}{source_tag(SOURCE)}/", len(VARIANTS))
    theirs = [p for p, h in placed.items() if h != victim.index][:30]
    assert len(mine) == 30 and len(theirs) == 30

    victim.stop(signal.SIGKILL)  # the master dies; its workers get SIGTERM from the kernel, drain, exit
    killed = time.monotonic()
    down = []
    for p in mine:
        t = time.monotonic()
        r = client.get(p, timeout=10)
        down.append(time.monotonic() - t)
        assert r.status == 200 and r.content_type == "image/jpeg", f"{p} with host {victim.index + 1} down: {r.describe()}\n{fleet.diagnostics()}"
        # The failover host had never seen it: the store's copy, not a render.
        assert r.header("x-cache") == "HIT-SHARED", f"{p} on the failover host: X-Cache {r.header('x-cache')}"
        assert r.header("etag") == ETAGS[p][0]
    first_ok = killed + down[0]
    placed_down = fleet.where([r.header("x-request-id") for r in [client.get(p) for p in mine[:5]]])
    assert victim.index not in {v[0] for v in placed_down.values()}
    others = fleet.where([r.header("x-request-id") for r in [client.get(p) for p in theirs]])
    moved = [p for p, (rid_host) in zip(theirs, others.values()) if rid_host[0] != placed[p]]
    assert not moved, f"variants of the live hosts moved when one host stopped: {moved[:3]}"
    assert max(down) < 2.0, f"a request took {max(down):.2f}s with a host down: {down}"
    for p in mine[:5]:  # the failover host keeps them now
        assert client.get(p).header("x-cache").startswith("HIT")

    victim.start()
    restarted = time.monotonic()
    back_at = None
    probe = mine[0]
    while time.monotonic() - restarted < fleet.fail_timeout + 5:
        r = client.get(probe)
        assert r.status == 200, f"{probe} while host {victim.index + 1} comes back: {r.describe()}"
        if fleet.where([r.header("x-request-id")])[r.header("x-request-id")][0] == victim.index:
            back_at = time.monotonic()
            break
        time.sleep(0.2)
    assert back_at is not None, f"host {victim.index + 1}'s variants did not return within fail_timeout ({fleet.fail_timeout}s) + 5s"
    answers = [client.get(p) for p in mine]
    assert all(r.status == 200 for r in answers)
    back = fleet.where([r.header("x-request-id") for r in answers])
    assert {v[0] for v in back.values()} == {victim.index}, "every variant of the restarted host is back on it"
    hits = [r.header("x-cache") for r in answers[1:]]
    assert all(h and h.startswith("HIT") for h in hits), f"the restarted host answers from its disk cache: {hits}"
    print(f"\ntest_hosts: host {victim.index + 1} killed: first 200 after {first_ok - killed:.3f}s, "
          f"slowest request while down {max(down):.3f}s (median {sorted(down)[len(down) // 2]:.3f}s); "
          f"back on it {back_at - restarted:.2f}s after its restart (fail_timeout {fleet.fail_timeout}s)")
