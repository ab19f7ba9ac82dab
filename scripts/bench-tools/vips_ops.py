#!/usr/bin/env python3
"""libvips (pyvips) doing what a Kiln benchmark op does, in-process: CPU ms per conversion and bytes.

    vips_ops.py anim SOURCE.gif WIDTH QUALITY EFFORT [RUNS]    every frame to WIDTH, animated WebP
    vips_ops.py avif SOURCE WIDTH QUALITY EFFORT [RUNS]        to WIDTH, AVIF (heifsave, AV1)

Prints `cpu_ms MEDIAN bytes N frames F` (median of RUNS, default 7, after one warm-up). libvips
runs with one thread (VIPS_CONCURRENCY=1, like a Kiln worker) and its operation cache off, and
without any HTTP: the figure favours libvips by the cost of a request (under 1 ms here).
EFFORT is libvips' `effort`: WebP's method 0-6, AVIF's 0-9 (aom's cpu-used is 9 - effort).
"""
import os
import statistics
import sys
import time

os.environ.setdefault("VIPS_CONCURRENCY", "1")
import pyvips  # noqa: E402

pyvips.cache_set_max(0)


def anim(src, width, q, effort):
    image = pyvips.Image.thumbnail(src + "[n=-1]", width, height=100000)
    data = image.webpsave_buffer(Q=q, effort=effort)
    return data, image.get_n_pages()


def avif(src, width, q, effort):
    image = pyvips.Image.thumbnail(src, width, height=100000)
    return image.heifsave_buffer(Q=q, effort=effort, compression="av1"), 1


def main():
    op, src, width, q, effort = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    runs = int(sys.argv[6]) if len(sys.argv) > 6 else 7
    fn = {"anim": anim, "avif": avif}[op]
    fn(src, width, q, effort)
    times, size, frames = [], 0, 1
    for _ in range(runs):
        t0 = time.process_time()
        data, frames = fn(src, width, q, effort)
        times.append((time.process_time() - t0) * 1000)
        size = len(data)
    print(f"cpu_ms {statistics.median(times):.1f} bytes {size} frames {frames}")


if __name__ == "__main__":
    main()
