#!/usr/bin/env python3
"""imgproxy's benchmark shape (issue 37), side by side with thumbor: every request asks for a
random one of a set of ~2 MP photos, fit into 512x512, JPEG quality 80, 2 clients.

imgproxy publishes its own figures this way (1.38-1.54x thumbor's requests per second). The photos
are made here from the standard benchmark sources (random crops of about 2 MP, a fixed seed, JPEG
quality 90), written once into the peer harness's images/ folder (both servers' root). Runs wrk
-t2 -c2 with a Lua script that picks a random photo per request, REPEATS interleaved runs per
server, and prints the medians of requests per second and CPU ms per request (every process of
each server, its nginx included), and Kiln's ratio to thumbor.

    imgproxy_shape.py HARNESS_DIR [--count 40] [--duration 6] [--repeats 3]

The servers must be running (the harness's start.sh thumbor kiln); scripts/bench does that.
"""
from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import subprocess
import sys
import urllib.request

PEERS = {
    "thumbor": {"port": 18082, "pidfiles": ["thumbor.pid"], "url": "/unsafe/fit-in/512x512/filters:quality(80)/{dir}/{name}"},
    "kiln": {"port": 18090, "pidfiles": ["kiln-nginx.pid", "kiln-master.pid"], "url": "/rs:512:512/q:80/f:jpeg/{dir}/{name}"},
}
FOLDER = "imgproxy-shape"
SOURCES = ("photo_4000x3000.jpg", "photo_8160x6120.jpg", "photo_1920x1080.jpg")


def make_photos(images: str, count: int) -> list[str]:
    """`count` random crops of about 2 MP from the larger benchmark photos (made once)."""
    from PIL import Image

    out = os.path.join(images, FOLDER)
    os.makedirs(out, exist_ok=True)
    names = [f"photo_{i:03d}.jpg" for i in range(count)]
    if all(os.path.exists(os.path.join(out, n)) for n in names):
        return names
    sources = [Image.open(os.path.join(images, s)).convert("RGB") for s in SOURCES if os.path.exists(os.path.join(images, s))]
    big = [s for s in sources if s.width * s.height >= 4_000_000]
    if not big:
        sys.exit(f"imgproxy shape: no source of at least 4 MP in {images}")
    rng = random.Random(37)
    shapes = [(1800, 1200), (1680, 1260), (1920, 1080), (1200, 1800), (1440, 1440)]  # ~2.0-2.2 MP, several aspects
    for name in names:
        src = rng.choice(big)
        w, h = rng.choice(shapes)
        scale = rng.uniform(max(w / src.width, h / src.height), 1.0)  # crop a larger area, then scale it down
        cw, ch = min(src.width, int(w / scale)), min(src.height, int(h / scale))
        x, y = rng.randrange(0, src.width - cw + 1), rng.randrange(0, src.height - ch + 1)
        photo = src.crop((x, y, x + cw, y + ch)).resize((w, h), Image.LANCZOS)
        photo.save(os.path.join(out, name), "JPEG", quality=90)
        os.chmod(os.path.join(out, name), 0o644)
    os.chmod(out, 0o755)
    return names


def check(peer: str, names: list[str]) -> None:
    """One answer per server: a JPEG whose longer side is 512."""
    from PIL import Image

    p = PEERS[peer]
    url = f"http://127.0.0.1:{p['port']}" + p["url"].format(dir=FOLDER, name=names[0])
    with urllib.request.urlopen(url, timeout=60) as r:
        img = Image.open(io.BytesIO(r.read()))
    if img.format != "JPEG" or max(img.size) != 512:
        sys.exit(f"imgproxy shape: {peer} answered {img.format} {img.size} for {url}")


def lua(peer: str, names: list[str], path: str) -> None:
    template = PEERS[peer]["url"]
    paths = ", ".join('"%s"' % template.format(dir=FOLDER, name=n) for n in names)
    with open(path, "w") as f:
        f.write("local paths = {%s}\n" % paths)
        f.write("function setup(thread) thread:set('seed', math.random(1, 1000000)) end\n")
        f.write("function init(args) math.randomseed(seed or os.time()) end\n")
        f.write("function request() return wrk.format('GET', paths[math.random(#paths)]) end\n")


def run(harness: str, peer: str, script: str, duration: int) -> tuple[float, float | None]:
    sys.path.insert(0, harness)
    import bench  # the harness's /proc helpers: the same CPU accounting as its table

    p = PEERS[peer]
    pids = bench.peer_pids({"pidfiles": p["pidfiles"]})
    t0 = {pid: bench.cpu_ticks(pid) for pid in pids}
    out = subprocess.run(["wrk", "-t2", "-c2", f"-d{duration}s", "--timeout", "30s", "-s", script,
                          f"http://127.0.0.1:{p['port']}/"], capture_output=True, text=True).stdout
    r = bench.parse_wrk(out)
    if r["non2xx"] or r["sock_err"]:
        print(f"  {peer}: {r['non2xx']} non-2xx answers, {r['sock_err']} socket errors")
    cpu = sum(bench.cpu_ticks(pid) - t0.get(pid, 0) for pid in pids) / os.sysconf("SC_CLK_TCK")
    return r["rps"], (1000 * cpu / r["requests"]) if r["requests"] else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("harness")
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--duration", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    names = make_photos(os.path.join(a.harness, "images"), a.count)
    scripts = {}
    for peer in PEERS:
        check(peer, names)
        scripts[peer] = os.path.join(a.harness, "run", f"imgproxy-shape-{peer}.lua")
        lua(peer, names, scripts[peer])
        run(a.harness, peer, scripts[peer], 2)  # warm-up, not recorded
    results: dict[str, list[tuple[float, float | None]]] = {p: [] for p in PEERS}
    order = list(PEERS)
    for i in range(a.repeats):
        for peer in order[i % 2:] + order[:i % 2]:
            results[peer].append(run(a.harness, peer, scripts[peer], a.duration))
    med = {p: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs if r[1] is not None)) for p, rs in results.items()}
    print(f"imgproxy's benchmark shape: a random one of {a.count} ~2 MP photos per request, fit 512x512, JPEG q80, "
          f"wrk -t2 -c2, {a.duration} s x {a.repeats} interleaved, medians")
    for peer, (rps, cpu) in med.items():
        print(f"  {peer:8} {rps:8.1f} req/s  {cpu:7.2f} CPU ms/req")
    k, t = med["kiln"], med["thumbor"]
    print(f"  kiln / thumbor: {k[0] / t[0]:.2f}x the requests per second, {k[1] / t[1]:.2f}x the CPU per request "
          "(imgproxy publishes 1.38-1.54x thumbor's requests per second)")


if __name__ == "__main__":
    main()
