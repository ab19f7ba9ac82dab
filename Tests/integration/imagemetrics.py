"""Image comparison for the fidelity tests: SSIM (Wang et al. 2004, 11x11 Gaussian window,
sigma 1.5, K1 0.01, K2 0.03, on 0-255 data, averaged over the RGB channels) and mean absolute
difference. numpy only, so the oracle does not depend on the code under test."""
from __future__ import annotations

import numpy as np


def _gaussian_kernel(size: int = 11, sigma: float = 1.5) -> np.ndarray:
    x = np.arange(size) - (size - 1) / 2
    k = np.exp(-(x ** 2) / (2 * sigma ** 2))
    return k / k.sum()


def _filter(img: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Separable 'valid' convolution of a 2-D float array."""
    n = len(k)
    rows = sum(k[i] * img[:, i:img.shape[1] - n + 1 + i] for i in range(n))
    return sum(k[i] * rows[i:rows.shape[0] - n + 1 + i, :] for i in range(n))


def ssim_channel(a: np.ndarray, b: np.ndarray) -> float:
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    k = _gaussian_kernel()
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mu_a, mu_b = _filter(a, k), _filter(b, k)
    var_a = _filter(a * a, k) - mu_a ** 2
    var_b = _filter(b * b, k) - mu_b ** 2
    cov = _filter(a * b, k) - mu_a * mu_b
    s = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return float(s.mean())


def ssim(a, b) -> float:
    """SSIM of two PIL images (or HxWx3 arrays) of the same size, mean over R, G and B."""
    x = np.asarray(a.convert("RGB") if hasattr(a, "convert") else a)
    y = np.asarray(b.convert("RGB") if hasattr(b, "convert") else b)
    assert x.shape == y.shape, f"sizes differ: {x.shape} vs {y.shape}"
    return float(np.mean([ssim_channel(x[..., c], y[..., c]) for c in range(3)]))


def mean_abs_diff(a, b) -> float:
    x = np.asarray(a.convert("RGB"), dtype=np.int16)
    y = np.asarray(b.convert("RGB"), dtype=np.int16)
    assert x.shape == y.shape, f"sizes differ: {x.shape} vs {y.shape}"
    return float(np.abs(x - y).mean())
