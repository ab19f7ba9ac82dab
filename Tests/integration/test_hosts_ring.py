"""The fleet (hostfleet.py) as a ring of hosts:
- 1,000 distinct signed variants: each is served (200, an image of the asked size) and rendered
  on exactly one host (its request id in that host's access log, with cache=MISS); every host
  renders within 15 % of a third;
- the URL forms of one variant (signed, signed again with an expiry, the trusted /thumb
  rewrite) land on the same host, the later forms as cache hits;
- the adapters' forms (Next.js, Cloudflare, imgix) of 12 variants spread over the hosts as the
  native form does (the ring's key holds the query parameters the adapters read), and another
  order of the parameters keeps a variant on its host.
"""

from __future__ import annotations

import time

from hostfleet import ADAPTED, HOSTS, SOURCE, TOLERANCE, VARIANTS, sign, variant_path


def test_distribution(fleet, distribution):
    """Each of 1,000 distinct variants rendered once, on one host; every host within 15 % of a
    third; each host's disk cache holds its share."""
    placed, counts, entries = distribution
    assert len(placed) == len(VARIANTS) == 1000
    even = len(VARIANTS) / HOSTS
    for i, n in enumerate(counts):
        assert abs(n - even) <= TOLERANCE * even, f"host {i + 1} rendered {n} of 1000 (even: {even:.0f} ± 15%): {counts}"
    # The disk caches grew by their host's share: the hosts do not all cache everything.
    assert all(e > 0 for e in entries)
    assert max(entries) < 2 * min(entries) + 10, f"disk cache files per host {entries} do not follow {counts}"
    # Sizes are right (a sample: decoding all 1,000 adds nothing).
    client = fleet.client()
    for w, h in VARIANTS[::97]:
        _, im = client.image(sign(variant_path(w, h)))
        assert im.size == (w, h)


def test_url_forms_land_on_one_host(fleet, distribution):
    """Signed, signed with an expiry (another signature) and the trusted /thumb rewrite of one
    variant reach the same host, which answers the later forms from its cache."""
    client = fleet.client()
    hosts_used = set()
    for w, h in [(20 + i, 30 + i) for i in range(12)]:
        rest = f"/rs:{w}:{h}:fill/-/{SOURCE}"
        forms = [sign(rest), sign(f"/exp:{int(time.time()) + 3600}{rest}"), f"/thumb/{w}x{h}/{SOURCE}"]
        answers = [client.get(p) for p in forms]
        for p, r in zip(forms, answers):
            assert r.status == 200, f"{p}: {r.describe()}"
        placed = fleet.where([r.header("x-request-id") for r in answers])
        where = {v[0] for v in placed.values()}
        assert len(where) == 1, f"{rest}: the forms {forms} went to hosts {[v[0] + 1 for v in placed.values()]}"
        caches = [r.header("x-cache") for r in answers]
        assert caches[0] == "MISS" and all(c.startswith("HIT") for c in caches[1:]), f"{rest}: X-Cache {caches}"
        hosts_used |= where
    assert len(hosts_used) > 1, "12 variants all on one host: the key does not spread"


def test_adapted_forms_spread_and_keep_their_host(fleet, distribution):
    """Issue 36 §4: before, every `/_next/image?url=…` URL hashed to one host (36 URLs: 0/36/0)."""
    client = fleet.client()
    forms = {
        "next": lambda w: f"/_next/image?url=%2F{ADAPTED}&w={w}&q=75",
        "cloudflare": lambda w: f"/cdn-cgi/image/width={w},quality=75/{ADAPTED}",
        "imgix": lambda w: f"/{ADAPTED}?w={w}&q=75",
        "native": lambda w: sign(f"/rs:{w}:0:fit/q:75/-/{ADAPTED}"),
    }
    # The widths Next.js allows (its deviceSizes and imageSizes): the adapter refuses others.
    widths = [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080]
    for name, form in forms.items():
        answers = [client.get(form(w)) for w in widths]
        for w, r in zip(widths, answers):
            assert r.status == 200, f"{name} {w}: {r.describe()}"
        placed = fleet.where([r.header("x-request-id") for r in answers])
        hosts = [placed[r.header("x-request-id")][0] for r in answers]
        assert len(set(hosts)) > 1, f"{name}: the 12 variants all went to host {hosts[0] + 1}"
        if name in ("next", "imgix"):
            # Another order of the parameters: the same host, from its cache.
            for w, host in list(zip(widths, hosts))[:4]:
                url = form(w)
                path, query = url.split("?", 1)
                again = client.get(f"{path}?{'&'.join(reversed(query.split('&')))}")
                assert again.status == 200 and again.header("x-cache").startswith("HIT"), f"{name} {w}: {again.describe()}"
                assert fleet.where([again.header("x-request-id")])[again.header("x-request-id")][0] == host, f"{name} {w}"
