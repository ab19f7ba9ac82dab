#!/usr/bin/env python3
"""Pillow's (or Pillow-SIMD's) Lanczos resize of one image, timed: the resize floor that
`scripts/bench --resample` prints beside Kiln's kernels.

    pillow_resize.py SOURCE WIDTH HEIGHT [RUNS] [--alpha] [--keep-alpha] [--from=WxH]

Prints one line: the Pillow version, the sizes, the median and fastest of RUNS resizes (after
one warm-up), in the thread's CPU time as `kiln bench-resample` measures. --alpha adds the same diagonal alpha ramp as `kiln bench-resample --alpha`
(Pillow premultiplies RGBA around the resize, as Kiln does). --keep-alpha resizes the source's
own RGBA instead of RGB. --from=WxH first brings the source to the size Kiln decodes it at (a
JPEG's DCT scale; untimed, box filter), as `scripts/bench`'s floors do.
"""
import sys
import time

from PIL import Image


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    alpha = "--alpha" in sys.argv
    keep_alpha = "--keep-alpha" in sys.argv
    start_size = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--from=")), None)
    source, width, height = args[0], int(args[1]), int(args[2])
    runs = int(args[3]) if len(args) > 3 else 21
    image = Image.open(source)
    image = image.convert("RGBA" if keep_alpha and "A" in image.getbands() else "RGB")
    if start_size:
        w, h = (int(v) for v in start_size.split("x"))
        if (w, h) != image.size:
            image = image.resize((w, h), Image.BOX)
    if alpha:
        w, h = image.size
        ramp = Image.frombytes("L", (w, h), bytes(((x + y) * 255 // (w + h)) for y in range(h) for x in range(w)))
        image.putalpha(ramp)
    image.load()
    times = []
    for run in range(runs + 1):
        start = time.thread_time()
        image.resize((width, height), Image.LANCZOS)
        if run:
            times.append((time.thread_time() - start) * 1000)
    times.sort()
    layout = "RGBA" if image.mode == "RGBA" else "RGB"
    print(f"resample {image.width}x{image.height} -> {width}x{height} {layout} Pillow {Image.__version__}: "
          f"median {times[len(times) // 2]:.2f} CPU ms, min {times[0]:.2f} ({runs} runs)")


if __name__ == "__main__":
    main()
