"""Purging the fleet (hostfleet.py): `kiln cache purge --source X` (store, every host's disk and
memory through their status sockets, Varnish by xkey) leaves no tier holding a variant of X, Y
untouched; the next request for each variant of X renders once in the fleet.
"""

from __future__ import annotations

import time

from hostfleet import KEPT, PREFIX, PURGED, STATUS_PORT, edge_get, sign, source_tag, varnish_hit, wait_for_keys


def test_purge_everywhere(fleet, distribution):
    """`kiln cache purge --source X`: afterwards Varnish, every host's memory and disk, and the
    store hold no variant of X (the next request for each renders, once in the fleet), and Y's
    variants are untouched everywhere."""
    xs = [sign(f"/rs:{20 + i}:{20 + i}:force/{PURGED}") for i in range(18)]
    ys = [sign(f"/rs:{20 + i}:{20 + i}:force/{KEPT}") for i in range(6)]
    for p in xs + ys:
        assert edge_get(fleet, p).header("x-cache") == "MISS"
    for p in xs + ys:  # the edge holds them now
        assert varnish_hit(edge_get(fleet, p)), f"{p}: not cached by Varnish"
    for p in xs + ys:  # and the hosts (straight to nginx, past the edge), in memory or on disk
        assert fleet.client().get(p).header("x-cache") in ("HIT-MEMORY", "HIT-DISK")
    x_prefix, y_prefix = f"{PREFIX}{source_tag(PURGED)}/", f"{PREFIX}{source_tag(KEPT)}/"
    assert len(wait_for_keys(fleet, x_prefix, len(xs))) == len(xs)
    assert len(wait_for_keys(fleet, y_prefix, len(ys))) == len(ys)

    started = time.monotonic()
    p = fleet.purge(PURGED)
    took = time.monotonic() - started
    assert p.returncode == 0, f"kiln cache purge: {p.returncode}\n{p.stdout}\n{p.stderr}"
    out = p.stdout
    for h in fleet.hosts:
        assert f"{h.addr}:{STATUS_PORT}" in out, f"no line for host {h.addr}:\n{out}"
    assert "varnish" in out.lower() or str(fleet.varnish.port) in out, out
    assert "shared" in out.lower() or "s3://" in out, out
    print(f"\ntest_hosts: kiln cache purge --source {PURGED} in {took:.2f}s:\n{out.strip()}")

    assert fleet.store.keys(x_prefix) == [], "the store still holds variants of the purged source"
    assert len(fleet.store.keys(y_prefix)) == len(ys)
    answers = [edge_get(fleet, p) for p in xs]
    assert not any(varnish_hit(r) for r in answers), "Varnish answered a purged variant from its cache"
    caches = [r.header("x-cache") for r in answers]
    assert caches == ["MISS"] * len(xs), f"after the purge, X came from a tier that should be empty: {caches}"
    seen = fleet.where([r.header("x-request-id") for r in answers])
    assert sorted(v[2] for v in seen.values()) == ["MISS"] * len(xs), "each variant of X rendered exactly once"
    for p in ys:
        assert varnish_hit(edge_get(fleet, p)), f"{p}: Y was purged from Varnish too"
        assert fleet.client().get(p).header("x-cache") in ("HIT-MEMORY", "HIT-DISK"), f"{p}: Y was purged from a host"
