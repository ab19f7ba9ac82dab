#!/usr/bin/env python3
"""Memory of a running `kiln serve`: the master and its workers, from /proc (Linux).

    rss.py idle MASTER_PID              VmRSS of the master and each worker, and the sum (KiB lines)
    rss.py peak MASTER_PID              VmHWM (peak RSS since start) of each worker
    rss.py maps PID [N]                 the N largest mappings of PID by Rss (smaps), in MiB
    rss.py sections PID [N]             the resident pages of PID's executable file by ELF section
                                        (pagemap + readelf -S), in MiB: which part of kiln a start touches
    rss.py load BASE_URL N PATH...      N GETs spread over the PATHs, 2 keep-alive connections,
                                        bounded: stops at N requests or after BENCH_LOAD_SECONDS (600)

The idle sum is what shared/peers/bench.py reports as idle RSS: summed VmRSS of every process.
Output lines are `key value` pairs that scripts/bench reads with awk.
"""
import http.client
import os
import re
import struct
import subprocess
import sys
import threading
import time
import urllib.parse


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # the field after the command name (which may hold spaces or parentheses) is the state, then ppid
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            kids.append(int(entry))
    return sorted(kids)


def idle(master):
    total = status_kb(master, "VmRSS")
    print(f"master {total}")
    for i, w in enumerate(children(master)):
        kb = status_kb(w, "VmRSS")
        total += kb
        print(f"worker{i} {kb}")
    print(f"total {total}")


def peak(master):
    for i, w in enumerate(children(master)):
        print(f"worker{i} {status_kb(w, 'VmHWM')}")


def maps(pid, count):
    sizes = {}
    name = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and "-" in parts[0] and not line.startswith(("Rss", "Pss")) and not parts[0].endswith(":"):
                name = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
            elif parts and parts[0] == "Rss:":
                sizes[name] = sizes.get(name, 0) + int(parts[1])
    for name, kb in sorted(sizes.items(), key=lambda kv: -kv[1])[:count]:
        print(f"{name} {kb / 1024:.2f}")
    print(f"total {sum(sizes.values()) / 1024:.2f}")


def sections(pid, count):
    exe = os.readlink(f"/proc/{pid}/exe")
    table = subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True, check=True).stdout
    found = []  # (name, address, size) of the sections loaded in memory
    for line in table.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16):
            found.append((m.group(1), int(m.group(2), 16), int(m.group(3), 16)))
    spans, base = [], None
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 5 and parts[5] == exe:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                offset = int(parts[2], 16)
                spans.append((start, end))
                base = start - offset if base is None else min(base, start - offset)
    pages = {}
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end in spans:
            pagemap.seek(start // 4096 * 8)
            entries = pagemap.read((end - start) // 4096 * 8)
            for i in range((end - start) // 4096):
                if struct.unpack_from("<Q", entries, i * 8)[0] >> 62:  # present or swapped
                    page = start + i * 4096 - base
                    name = next((n for n, a, sz in found if a < page + 4096 and page < a + sz), "(between sections)")
                    pages[name] = pages.get(name, 0) + 1
    for name, n in sorted(pages.items(), key=lambda kv: -kv[1])[:count]:
        size = next((sz for nm, a, sz in found if nm == name), 0)
        print(f"{name} {n * 4 / 1024:.2f} of {size / 1048576:.2f}")
    print(f"total {sum(pages.values()) * 4 / 1024:.2f}")


def load(base, count, paths):
    url = urllib.parse.urlsplit(base)
    deadline = time.monotonic() + float(os.environ.get("BENCH_LOAD_SECONDS", "600"))
    lock = threading.Lock()
    state = {"next": 0, "ok": 0, "other": 0}

    def run():
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        while time.monotonic() < deadline:
            with lock:
                i = state["next"]
                if i >= count:
                    break
                state["next"] = i + 1
            try:
                conn.request("GET", paths[i % len(paths)])
                response = conn.getresponse()
                response.read()
                key = "ok" if response.status == 200 else "other"
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
                key = "other"
            with lock:
                state[key] += 1
        conn.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"requests {state['ok'] + state['other']}")
    print(f"non200 {state['other']}")


def main(argv):
    if len(argv) >= 2 and argv[0] == "idle":
        idle(int(argv[1]))
    elif len(argv) >= 2 and argv[0] == "peak":
        peak(int(argv[1]))
    elif len(argv) >= 2 and argv[0] == "maps":
        maps(int(argv[1]), int(argv[2]) if len(argv) > 2 else 15)
    elif len(argv) >= 2 and argv[0] == "sections":
        sections(int(argv[1]), int(argv[2]) if len(argv) > 2 else 12)
    elif len(argv) >= 4 and argv[0] == "load":
        load(argv[1], int(argv[2]), argv[3:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
