#!/usr/bin/env python3
"""Kiln against the best peer, from one run of shared/peers (its summary.json): per op, Kiln's CPU
milliseconds per request (every process of the server, its nginx included), the best peer's and
their ratio; req/s at the lowest concurrency and its ratio; output bytes against Pillow's at the
same quality. Ratios come from one run only, so they are comparable; absolute figures are not.

    peer_ratios.py RESULTS_DIR [--peer kiln]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> int:
    args = sys.argv[1:]
    me = "kiln"
    if "--peer" in args:
        i = args.index("--peer")
        me = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = json.loads((Path(args[0]) / "summary.json").read_text())
    meta, rows = data["meta"], data["summary"]
    conc = min(meta["concs"])
    validation = meta.get("validation", {})
    out = [f"Kiln and the best peer per op (CPU ms per request, c={conc}, median of {meta['repeats']} "
           f"interleaved {meta['duration']} s runs; {meta['stamp']})", "",
           "| op | Kiln CPU ms | best peer CPU ms | Kiln ÷ best | Kiln req/s ÷ best | output bytes Kiln / Pillow |",
           "|---|---|---|---|---|---|"]
    for op in sorted({r["op"] for r in rows}):
        here = [r for r in rows if r["op"] == op and r["conc"] == conc]
        mine = next((r for r in here if r["peer"] == me), None)
        others = [r for r in here if r["peer"] != me and r["cpu_ms"]]
        if not mine or not mine["cpu_ms"] or not others:
            out.append(f"| {op} | {'-' if not mine else mine['cpu_ms']} | - | - | - | - |")
            continue
        best = min(others, key=lambda r: r["cpu_ms"])
        fastest = max(others, key=lambda r: r["rps"])
        kb = validation.get(me, {}).get(op, {}).get("bytes")
        pb = validation.get("pillow", {}).get(op, {}).get("bytes")
        size = f"{kb} / {pb} ({kb / pb:.3f})" if kb and pb else "-"
        out.append(f"| {op} | {mine['cpu_ms']:.1f} | {best['cpu_ms']:.1f} ({best['peer']}) | "
                   f"{mine['cpu_ms'] / best['cpu_ms']:.2f} | {mine['rps'] / fastest['rps']:.2f} ({fastest['peer']}) | {size} |")
    idle = meta.get("idle_rss_mib", {})
    if idle:
        out += ["", "Idle RSS (MiB, every process of the server): " +
                ", ".join(f"{k} {v:.1f}" for k, v in sorted(idle.items(), key=lambda kv: kv[1]))]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
