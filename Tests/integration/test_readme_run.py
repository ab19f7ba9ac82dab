"""The README's "Run it for real" section, followed literally: in a fresh folder holding only
the shipped files (nginx/, demo/ and the built binaries where the README's line expects them,
.build/release/), its two command lines run as they are written (the kiln line in the
background), and a client gets a 300x200 WebP crop and then the same variant from the disk cache
on another worker (`HIT-DISK`), with the defaults: kiln's default socket, the disk cache on.

The lines run in private namespaces the test makes (`unshare`): a network namespace of its own,
so nginx's `listen 8080` meets nothing else; a mount namespace with a tmpfs on /run and on
/var/log/nginx, so /run/kiln and nginx's pid and logs leave nothing on the host; a PID namespace,
so nothing outlives the test."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from helpers import KILN_BIN, REPO

MARKER = "<!-- run-it-for-real:"
CHECK = textwrap.dedent('''
    import http.client, io, json, sys, time
    from PIL import Image

    def get(path):
        c = http.client.HTTPConnection("127.0.0.1", 8080, timeout=20)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    deadline = time.monotonic() + 30
    while True:
        try:
            if get("/_kiln/health")[0] == 200:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            print(json.dumps({"error": "no 200 from /_kiln/health through nginx within 30 s"}))
            sys.exit(0)
        time.sleep(0.05)
    url = "/rs:300:200:fill/f:webp/rocket.jpg"
    status, headers, body = get(url)
    out = {"status": status, "type": headers.get("content-type"), "first": headers.get("x-cache")}
    if status == 200:
        im = Image.open(io.BytesIO(body))
        out["format"], out["size"] = im.format, list(im.size)
    seen = []
    for _ in range(60):
        seen.append(get(url)[1].get("x-cache"))
        if seen[-1] == "HIT-DISK":
            break
    out["again"] = seen
    print(json.dumps(out))
''')


def readme_lines() -> list[str]:
    text = (REPO / "README.md").read_text()
    assert MARKER in text, "README.md: the run-it-for-real block is gone"
    block = text.split(MARKER, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 2, lines
    return lines


def test_readme_lines_are_the_shipped_files_and_one_kiln_line():
    nginx, kiln = readme_lines()
    assert nginx.startswith("nginx -c ") and "nginx/nginx.conf" in nginx
    assert kiln.startswith(".build/release/kiln serve ") and "--listen" not in kiln and "disk_path" not in kiln


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare for private namespaces")
def test_readme_run_it_for_real(environment_ok, tmp_path):
    nginx_line, kiln_line = readme_lines()
    folder = tmp_path / "fresh"
    folder.mkdir()
    shutil.copytree(REPO / "nginx", folder / "nginx")
    shutil.copytree(REPO / "demo", folder / "demo")
    release = folder / ".build" / "release"
    release.mkdir(parents=True)
    for name in ("kiln", "kiln-worker"):
        shutil.copy2(KILN_BIN.parent / name, release / name)
    (tmp_path / "check.py").write_text(CHECK)
    log = tmp_path / "kiln.log"
    script = textwrap.dedent(f'''
        set -eu
        ip link set lo up
        mount -t tmpfs -o mode=0755 tmpfs /run
        mount -t tmpfs -o mode=0755 tmpfs /var/log/nginx
        cd "{folder}"
        {nginx_line}
        {kiln_line} > "{log}" 2>&1 &
        kiln=$!
        "{sys.executable}" "{tmp_path / 'check.py'}"
        kill -TERM "$kiln"; wait "$kiln" || true
        nginx -c "$PWD/nginx/nginx.conf" -s stop || true
        ls -ld /run/kiln kiln-cache
    ''')
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "--net", "--pid", "--fork", "--mount-proc",
                        "bash", "-c", script], capture_output=True, text=True, timeout=120)
    kiln_log = log.read_text() if log.exists() else ""
    assert p.returncode == 0, (p.stdout, p.stderr, kiln_log)
    result = json.loads(p.stdout.splitlines()[0])
    assert "error" not in result, (result, kiln_log)
    assert result["status"] == 200 and result["type"] == "image/webp" and result["first"] == "MISS", (result, kiln_log)
    assert result["format"] == "WEBP" and result["size"] == [300, 200], result
    assert result["again"][-1] == "HIT-DISK", (result, kiln_log)
    assert set(result["again"]) <= {"HIT-MEMORY", "HIT-DISK"}, result
    # The defaults the README names: the socket nginx's upstream connects to, with a group that
    # lets www-data in and no warning, and the disk cache in the working folder.
    assert "socket /run/kiln/kiln.sock: owner root, group www-data, mode 0660; nginx's workers (www-data) can connect" in kiln_log
    assert "cannot connect" not in kiln_log
    assert f"disk cache {folder}/kiln-cache (the default" in kiln_log
    assert any(n.endswith("kiln-cache") for n in p.stdout.split()), p.stdout
