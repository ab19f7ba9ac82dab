"""Starts or stops the SeaweedFS of `scripts/bench`'s `shared` op (issue 28), with the test
suite's helper (Tests/integration/seaweed.py): one `weed server -s3` on 127.0.0.1 with a bucket.

    python seaweed_bench.py start DIR   prints `<endpoint> <access key> <secret key> <pid>`
    python seaweed_bench.py stop DIR    kills it (the pid recorded in DIR/weed.pid)
"""
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "integration"))
from seaweed import ACCESS_KEY, SECRET_KEY, SeaweedStore  # noqa: E402

command, folder = sys.argv[1], Path(sys.argv[2])
if command == "start":
    store = SeaweedStore(folder, bucket="kiln")
    store.start()
    (folder / "weed.pid").write_text(str(store.proc.pid))
    print(store.endpoint, ACCESS_KEY, SECRET_KEY, store.proc.pid)
elif command == "stop":
    try:
        os.killpg(int((folder / "weed.pid").read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass
