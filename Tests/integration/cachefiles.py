"""Reading kiln's disk cache folder from the tests: entry files, their disk usage, and a full
check of one entry (the layout of Sources/KilnPipeline/Caching/EntryCodec.swift, checksum included)."""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np

from helpers import KILN_BIN

MASK = (1 << 64) - 1


def entry_files(disk: Path) -> list[Path]:
    """Entry files (fan-out folder xx/<64 hex>); temporaries live in tmp/, locks in locks/."""
    return [p for p in disk.glob("??/*") if p.is_file() and len(p.name) == 64]


def all_files(disk: Path) -> list[Path]:
    return [p for p in disk.rglob("*") if p.is_file()]


def disk_usage(p: Path) -> int:
    """As DiskCache counts: allocated blocks, at least the size."""
    st = p.stat()
    return max(st.st_size, st.st_blocks * 512)


def _checksum_update(state: tuple[int, int], data: bytes) -> tuple[int, int]:
    """EntryChecksum.update: 64-bit little-endian words (a += w; b += a), then tail bytes + 0x100."""
    a, b = state
    n = len(data) // 8
    if n:
        words = np.frombuffer(data[: n * 8], dtype="<u8")
        with np.errstate(over="ignore"):
            prefix = np.cumsum(words, dtype=np.uint64)
            b = (b + n * a + int(prefix.sum(dtype=np.uint64))) & MASK
            a = (a + int(prefix[-1])) & MASK
    for byte in data[n * 8:]:
        a = (a + byte + 0x100) & MASK
        b = (b + a) & MASK
    return a, b


def check_entry(p: Path) -> str | None:
    """None when the entry file is whole and its checksum matches; else what is wrong."""
    data = p.read_bytes()
    if len(data) < 68 or data[:4] != b"KLNC":
        return f"{p}: no entry header"
    header_size = struct.unpack_from("<I", data, 8)[0]
    body_size = struct.unpack_from("<Q", data, 16)[0]
    if header_size + body_size != len(data):
        return f"{p}: {len(data)} bytes, header says {header_size} + {body_size}"
    stored = struct.unpack_from("<Q", data, header_size - 8)[0]
    state = _checksum_update((1, 0), data[: header_size - 8])
    a, b = _checksum_update(state, data[header_size:])
    value = a ^ (((b << 32) | (b >> 32)) & MASK)
    if value != stored:
        return f"{p}: checksum mismatch"
    return None


def entry_source_path(p: Path) -> str:
    """The fourth header string (key, content type, ETag, source path, message)."""
    data = p.read_bytes()
    off = 40
    strings = []
    for _ in range(5):
        n = struct.unpack_from("<I", data, off)[0]
        strings.append(data[off + 4: off + 4 + n].decode())
        off += 4 + n
    return strings[3]


def kiln(*args, timeout: float = 120, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(KILN_BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, input=input, stdin=None if input is not None else subprocess.DEVNULL)


class ReadOnlyFolder:
    """Makes a folder refuse new files for everyone: `chattr +i` as root (root ignores modes),
    mode 0555 otherwise. A context manager that undoes it."""

    def __init__(self, path: Path):
        self.path = path
        self.as_root = __import__("os").geteuid() == 0

    def __enter__(self) -> "ReadOnlyFolder":
        if self.as_root:
            r = subprocess.run(["chattr", "+i", str(self.path)], capture_output=True, text=True)
            assert r.returncode == 0, f"chattr +i {self.path}: {r.stderr}"
        else:
            self.path.chmod(0o555)
        probe = self.path / "probe"
        try:
            probe.write_bytes(b"x")
        except OSError:
            return self
        probe.unlink()
        raise AssertionError(f"{self.path} still accepts new files")

    def __exit__(self, *exc) -> None:
        if self.as_root:
            subprocess.run(["chattr", "-i", str(self.path)], capture_output=True)
        else:
            self.path.chmod(0o755)
