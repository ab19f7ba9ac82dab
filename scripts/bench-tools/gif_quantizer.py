"""GIF out against Pillow (issue 38): the bench photo at 800 px as PNG, then Kiln's GIF encode
(`kiln process ... f:gif`, the encode phase, median of 5) and Pillow's quantize(256) + save; bytes
and SSIM against the PNG.

    .venv-test/bin/python scripts/bench-tools/gif_quantizer.py .build/release/kiln ../shared/bench/photo_1920x1080.jpg
"""
import io
import re
import statistics
import subprocess
import sys
import time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "Tests" / "integration"))
from PIL import Image
import numpy as np
from imagemetrics import ssim
K = sys.argv[1] if len(sys.argv) > 1 else "kiln"
src = sys.argv[2] if len(sys.argv) > 2 else "../shared/bench/photo_1920x1080.jpg"
subprocess.run([K, "process", src, "w:800/f:png", "/tmp/kiln-gifq-ref.png"], check=True, capture_output=True)
ref = Image.open("/tmp/kiln-gifq-ref.png").convert("RGB")
# Kiln: the encode phase of `kiln process` from the PNG (decode and resize excluded).
times = []
for _ in range(5):
    p = subprocess.run([K, "process", "/tmp/kiln-gifq-ref.png", "f:gif", "/tmp/kiln-gifq-k.gif"], check=True, capture_output=True, text=True)
    times.append(float(re.search(r"encode;dur=([0-9.]+)", p.stderr + p.stdout).group(1)))
kg = Image.open("/tmp/kiln-gifq-k.gif").convert("RGB")
pt = []
for _ in range(5):
    t = time.perf_counter(); q = ref.quantize(256, dither=Image.Dither.FLOYDSTEINBERG); b = io.BytesIO(); q.save(b, "GIF"); pt.append((time.perf_counter() - t) * 1000)
pg = Image.open(io.BytesIO(b.getvalue())).convert("RGB")
print(f"kiln  GIF: encode {statistics.median(times):.1f} ms, {len(open('/tmp/kiln-gifq-k.gif','rb').read())} bytes, SSIM {ssim(np.asarray(ref), np.asarray(kg)):.4f}")
print(f"Pillow GIF: quantize+save {statistics.median(pt):.1f} ms, {len(b.getvalue())} bytes, SSIM {ssim(np.asarray(ref), np.asarray(pg)):.4f}  (Pillow {Image.__version__}: median cut, no dithering)")
