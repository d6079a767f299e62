"""Helpers of the example scripts: grey-level scaling and side-by-side
montages written as PNG by ITK."""

import numpy as np


def to_uint8(a, lo=None, hi=None):
    """Scales a to 0..255 between lo and hi (default: its 0.5 and 99.5 percentiles)."""
    a = np.asarray(a, dtype=np.float64)
    lo = np.percentile(a, 0.5) if lo is None else lo
    hi = np.percentile(a, 99.5) if hi is None else hi
    return (np.clip((a - lo) / max(hi - lo, 1e-9), 0, 1) * 255).astype(np.uint8)


def montage(panels, gap=4, centre=False):
    """Panels side by side with white gaps; panels that are not uint8 are
    scaled with to_uint8. Shorter panels sit at the top, or in the middle
    with centre=True."""
    h = max(p.shape[0] for p in panels)
    row = []
    for p in panels:
        p = p if p.dtype == np.uint8 else to_uint8(p)
        pad = np.zeros((h, p.shape[1]), np.uint8)
        top = (h - p.shape[0]) // 2 if centre else 0
        pad[top : top + p.shape[0]] = p
        row += [pad, np.full((h, gap), 255, np.uint8)]
    return np.concatenate(row[:-1], axis=1)
