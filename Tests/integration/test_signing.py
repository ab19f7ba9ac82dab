"""Signed URLs, trusted rewrites, presets-only and allowed operations (issue 9), through nginx
with the real binary.

Three stacks besides the shared one (which has no keys):
  signed    two key/salt pairs inline (rotation), security.allowed_operations = resize,crop,
            one worker (so a repeated request is a memory-cache hit)
  filed     the first pair only, from key/salt files, signature_size 16, allow_unsigned on
  presets   no keys, security.presets_only with f:auto and dpr allowed
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

from helpers import KILN_BIN, REPO, assert_plain_error, sign_path
from stack import KilnStack, started_stack, stop_stack

K1 = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
S1 = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
K2 = "5d1f0e3ab2c4e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
S2 = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
IMG = "pillow_hopper.jpg"


def sign(path: str, key: str = K1, salt: str = S1, size: int = 32) -> str:
    return sign_path(path, key, salt, size)


def start(root, **kw) -> KilnStack:
    return started_stack(root=root, **kw)


finish = stop_stack


@pytest.fixture(scope="module")
def signed(root):
    s = start(root, workers=1, extra_args=[
        "--set", f"security.keys={K1},{K2}", "--set", f"security.salts={S1},{S2}",
        "--set", "security.allowed_operations=resize,crop",
        "--set", "presets.small=rs:20:20:fill"])
    yield s
    finish(s)


@pytest.fixture(scope="module")
def filed(root, tmp_path_factory):
    d = tmp_path_factory.mktemp("secrets")
    (d / "keys").write_text(K1 + "\n")
    (d / "salts").write_text(S1 + "\n")
    s = start(root, workers=1, env={"KILN_SECURITY_KEY_FILE": str(d / "keys"), "KILN_SECURITY_SALT_FILE": str(d / "salts")},
              extra_args=["--set", "security.signature_size=16", "--set", "security.allow_unsigned=true"])
    yield s
    finish(s)


@pytest.fixture(scope="module")
def presets(root):
    s = start(root, workers=1, extra_args=[
        "--set", "security.presets_only=true", "--set", "security.presets_only_allow=f:auto,dpr",
        "--set", "presets.thumb=rs:50:50:fill/f:png"])
    yield s
    finish(s)


def refused(r, status: int, path: str, reason: str) -> None:
    assert r.status == status, f"{path}: expected {status}, got {r.describe()}"
    assert_plain_error(r, path)
    assert reason in r.body.decode(), f"{path}: {r.body!r} lacks {reason!r}"
    assert r.header("cache-control") == "no-store", f"{path}: {status} cached: {r.header('cache-control')}"


# -- valid, forged, truncated ------------------------------------------------------------------

def test_valid_signature_renders(signed):
    c = signed.client()
    path = sign(f"/rs:40:30:fill/{IMG}")
    r, im = c.image(path)
    assert im.size == (40, 30)
    r2, _ = c.image(path + "?utm=1")  # the query string is neither signed nor used
    assert r2.body == r.body


def test_forged_and_unsigned_are_403(signed):
    c = signed.client()
    good = sign(f"/rs:40:30/{IMG}")
    sig, rest = good[1:].split("/", 1)
    flipped = sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]
    refused(c.get(f"/{flipped}/{rest}"), 403, "forged", "invalid signature")
    refused(c.get(f"/rs:40:30/{IMG}"), 403, "no signature", "this server requires signed URLs")
    refused(c.get(f"/{IMG}"), 403, "a bare file", "this server requires signed URLs")
    refused(c.get(f"/unsafe/rs:40:30/{IMG}"), 403, "unsafe with keys", "this server requires signed URLs")
    # Signed with a key kiln does not know.
    refused(c.get(sign(f"/rs:40:30/{IMG}", key=K2, salt=S1)), 403, "other key", "invalid signature")


def test_truncated_signature_is_403(signed):
    c = signed.client()
    good = sign(f"/rs:40:30/{IMG}")
    sig, rest = good[1:].split("/", 1)
    for cut in (sig[:-1], sig[:22], sig[:11]):
        refused(c.get(f"/{cut}/{rest}"), 403, f"truncated to {len(cut)}", "malformed signature")
    # A signature truncated to 16 bytes by the signer is not valid where the size is 32.
    refused(c.get(sign(f"/rs:40:30/{IMG}", size=16)), 403, "16-byte signature", "malformed signature")


# -- re-pointed and re-encoded -----------------------------------------------------------------

def test_repointed_paths_are_403(signed):
    c = signed.client()
    good = sign(f"/rs:40:30/{IMG}")
    sig, rest = good[1:].split("/", 1)
    attempts = {
        "other file": f"/{sig}/rs:40:30/sub/{IMG}",
        "other size": f"/{sig}/rs:4000:3000/{IMG}",
        "option added": f"/{sig}/rs:40:30/bl:50/{IMG}",
        "option before": f"/{sig}/crop:5:5/rs:40:30/{IMG}",
        "signature moved later": f"/rs:40:30/{sig}/{IMG}",
        "signature at the end": f"/rs:40:30/{IMG}/{sig}",
        # thumbor's bypass: the hash repeated elsewhere in the path must not be stripped.
        "hash repeated first": f"/{sig}/{sig}/rs:40:30/{IMG}",
        "hash repeated inside": f"/{sig}/rs:40:30/{sig}/{IMG}",
        "hash repeated, new options": f"/{sig}/rs:4000:3000/{sig}/rs:40:30/{IMG}",
    }
    for what, path in attempts.items():
        r = c.get(path)
        assert r.status == 403, f"{what}: {path} -> {r.describe()}"
        assert_plain_error(r, path)


def test_reencoded_paths_are_403(signed):
    c = signed.client()
    good = sign(f"/rs:40:30/{IMG}")
    sig, rest = good[1:].split("/", 1)
    variants = [
        rest.replace("rs:40:30", "rs%3A40%3A30"),
        rest.replace("pillow", "pill%6Fw"),
        rest.replace("/", "//", 1),
        rest.replace(IMG, f"./{IMG}"),
        rest.replace(IMG, f"sub/../{IMG}"),
        rest.replace("rs:40:30", "RS:40:30"),
    ]
    for v in variants:
        r = c.get(f"/{sig}/{v}")
        assert r.status == 403, f"/{sig}/{v}: {r.describe()}"


def test_signed_raw_path_is_decoded_by_kiln(signed):
    """The signature covers the raw path, and exactly that path is parsed (percent-decoded by kiln)."""
    c = signed.client()
    _, im = c.image(sign(f"/rs:40:30/sub/pill%6Fw_hopper.jpg"))
    assert im.size[0] <= 40 and im.size[1] <= 30
    r = c.get(sign("/rs:40:30/sub%2Fpillow_hopper.jpg"))
    assert r.status == 403 and "encoded slash" in r.body.decode(), r.describe()
    r = c.get(sign(f"/rs:40:30/..%2F..%2Fetc/passwd"))
    assert r.status in (400, 403), r.describe()


# -- expiry ------------------------------------------------------------------------------------

def test_expiry(signed):
    c = signed.client()
    now = int(time.time())
    fresh = sign(f"/exp:{now + 3600}/rs:44:33:fill/{IMG}")
    r, im = c.image(fresh)
    assert im.size == (44, 33)
    m = re.search(r"max-age=(\d+)", r.header("cache-control") or "")
    assert m and 3500 <= int(m.group(1)) <= 3600, f"max-age beyond the expiry: {r.header('cache-control')}"
    # Another expiry for the same image is the same cache entry (one worker: a memory hit).
    later = c.get(sign(f"/exp:{now + 7200}/rs:44:33:fill/{IMG}"))
    assert later.status == 200 and later.header("x-cache") == "HIT-MEMORY", later.headers
    assert later.body == r.body and later.header("etag") == r.header("etag")
    # Expired: 410 although the image is in the cache.
    expired = sign(f"/exp:{now - 5}/rs:44:33:fill/{IMG}")
    refused(c.get(expired), 410, "expired", "expired")
    # The expiry is signed: changing it breaks the signature.
    sig, rest = expired[1:].split("/", 1)
    forged = f"/{sig}/" + rest.replace(f"exp:{now - 5}", f"exp:{now + 99999}")
    refused(c.get(forged), 403, "expiry changed", "invalid signature")


# -- rotation, key files, signature size ------------------------------------------------------

def test_rotation_both_pairs_accepted(signed):
    # The start's log says signing is on, how many keys (never the keys themselves).
    log = signed.kiln_log.read_text(errors="replace")
    assert "URL signing on: 2 keys, 32-byte signatures, unsigned URLs refused" in log, log[-2000:]
    assert K1 not in log and K2 not in log
    c = signed.client()
    for key, salt in ((K1, S1), (K2, S2)):
        _, im = c.image(sign(f"/rs:30:30:fill/{IMG}", key, salt))
        assert im.size == (30, 30)


def test_removed_key_refused_and_key_files(filed):
    c = filed.client()
    _, im = c.image(sign(f"/rs:30:30:fill/{IMG}", size=16))
    assert im.size == (30, 30)
    refused(c.get(sign(f"/rs:30:30:fill/{IMG}", K2, S2, size=16)), 403, "removed key", "invalid signature")
    refused(c.get(sign(f"/rs:30:30:fill/{IMG}")), 403, "32 bytes where 16", "malformed signature")
    # allow_unsigned = true with keys: /unsafe/ works, a path without a signature does not.
    _, im = c.image(f"/unsafe/rs:30:30:fill/{IMG}")
    assert im.size == (30, 30)
    assert c.get(f"/rs:30:30:fill/{IMG}").status == 403
    # A reload says it again.
    os.kill(filed.master_pid, signal.SIGHUP)
    deadline = time.monotonic() + 10
    want = "reloaded: URL signing on: 1 key, 16-byte signatures, unsigned URLs allowed under /unsafe/"
    while want not in filed.kiln_log.read_text(errors="replace"):
        assert time.monotonic() < deadline, filed.kiln_log.read_text(errors="replace")[-2000:]
        time.sleep(0.05)


def test_unsafe_without_keys(client):
    _, im = client.image(f"/unsafe/rs:30:20:fill/{IMG}")
    assert im.size == (30, 20)
    _, im = client.image(f"/rs:30:20:fill/{IMG}")
    assert im.size == (30, 20)


# -- trusted rewrites --------------------------------------------------------------------------

def test_trusted_rewrite_needs_no_signature(signed):
    c = signed.client()
    _, im = c.image(f"/thumb/40x30/{IMG}")
    assert im.size == (40, 30)
    # What follows /thumb/WxH/ is a source path, never another option.
    r = c.get(f"/thumb/40x30/bl:20/{IMG}")
    assert r.status == 404, r.describe()


def test_client_cannot_fake_trust(signed):
    c = signed.client()
    path = f"/rs:40:30/{IMG}"
    for headers in ({"Kiln-Trusted": "1"}, {"KILN_TRUSTED": "1"}, {"Kiln_Trusted": "1"},
                    {"X-Kiln-Trusted": "1"}, {"Kiln-Trusted": "1", "X-Forwarded-For": "127.0.0.1"}):
        r = c.get(path, headers=headers)
        assert r.status == 403, f"{headers}: {r.describe()}"
    r = c.get(path + "?KILN_TRUSTED=1&kiln_trusted=1")
    assert r.status == 403, r.describe()
    # The trusted rewrite's own URI asked for directly is not trusted.
    assert c.get(f"/rs:40:30:fill/-/{IMG}", headers={"Kiln-Trusted": "1"}).status == 403


# -- allowed operations and presets-only -------------------------------------------------------

def test_allowed_operations(signed):
    c = signed.client()
    _, im = c.image(sign(f"/rs:40:30/q:70/f:webp/{IMG}"))
    assert im.size[0] <= 40
    _, im = c.image(sign(f"/crop:20:20/{IMG}"))
    assert im.size == (20, 20)
    _, im = c.image(sign(f"/pr:small/{IMG}"))
    assert im.size == (20, 20)
    for opt in ("bl:2", "blur:2", "circle", "sh:1", "rot:90"):
        path = sign(f"/rs:40:30/{opt}/{IMG}")
        refused(c.get(path), 403, path, "not allowed")


def test_presets_only(presets):
    c = presets.client()
    _, im = c.image(f"/pr:thumb/{IMG}")
    assert im.size == (50, 50)
    r, _ = c.image(f"/pr:thumb/f:auto/dpr:2/{IMG}", headers={"Accept": "image/webp"})
    assert r.content_type == "image/webp"
    for path in (f"/rs:40:30/{IMG}", f"/pr:thumb/f:webp/{IMG}", f"/pr:thumb/bl:3/{IMG}",
                 f"/w:10/pr:thumb/{IMG}", f"/pr:thumb/rs%3A10%3A10/{IMG}", f"/unsafe/rs:40:30/{IMG}",
                 f"/circle/{IMG}"):
        refused(c.get(path), 403, path, "not allowed")
    # The trusted rewrite is the operator's URL.
    _, im = c.image(f"/thumb/40x30/{IMG}")
    assert im.size == (40, 30)


# -- the one-liners of docs/security.md (Signed URLs) and kiln sign --------------------------

def docs_block(name: str) -> str:
    text = (REPO / "docs" / "security.md").read_text()
    m = re.search(rf"<!-- {name}:begin -->\n```\w*\n(.*?)```\n<!-- {name}:end -->", text, re.S)
    assert m, f"docs/security.md lacks the {name} block"
    return m.group(1)


def test_docs_openssl_one_liner(signed):
    script = docs_block("sign-openssl")
    path = f"/rs:36:24:fill/{IMG}"
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30,
                         env={**os.environ, "KEY": K1, "SALT": S1, "URL_PATH": path})
    assert out.returncode == 0, out.stderr
    signed_path = out.stdout.strip()
    assert signed_path == sign(path)
    _, im = signed.client().image(signed_path)
    assert im.size == (36, 24)


def test_docs_python(signed):
    ns: dict = {}
    exec(docs_block("sign-python"), ns)  # noqa: S102 - our own docs/security.md
    path = f"/rs:38:26:fill/{IMG}"
    signed_path = ns["sign"](path, K2, S2)
    _, im = signed.client().image(signed_path)
    assert im.size == (38, 26)


def kiln(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(KILN_BIN), *args], capture_output=True, text=True, timeout=30)


def test_kiln_sign(signed):
    c = signed.client()
    keys = ["--set", f"security.keys={K1},{K2}", "--set", f"security.salts={S1},{S2}"]
    out = kiln("sign", f"/rs:42:28:fill/{IMG}", *keys)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == sign(f"/rs:42:28:fill/{IMG}"), "kiln sign uses the first pair"
    _, im = c.image(out.stdout.strip())
    assert im.size == (42, 28)
    out = kiln("sign", f"/rs:42:28:fill/{IMG}", "--expires", "1h", *keys)
    assert out.returncode == 0 and "/exp:" in out.stdout, out.stdout + out.stderr
    exp = int(re.search(r"/exp:(\d+)/", out.stdout).group(1))
    assert abs(exp - (time.time() + 3600)) < 60
    assert c.get(out.stdout.strip()).status == 200
    out = kiln("sign", f"/rs:42:28:fill/{IMG}", "--expires", str(int(time.time()) - 100), *keys)
    assert out.returncode == 0, out.stderr
    assert c.get(out.stdout.strip()).status == 410
    # Without keys, or with a path kiln cannot parse: exit 2 and one line.
    out = kiln("sign", f"/rs:42:28/{IMG}")
    assert out.returncode == 2 and "security.keys" in out.stderr
    out = kiln("sign", f"/rs:x:28/{IMG}", *keys)
    assert out.returncode == 2 and "rs:x:28" in out.stderr


def test_security_configuration_errors(tmp_path):
    out = kiln("config", "dump", "--set", f"security.keys={K1},{K2}", "--set", f"security.salts={S1}")
    assert out.returncode == 2 and "security.salts" in out.stderr and "2 key(s)" in out.stderr, out.stderr
    out = kiln("config", "dump", "--set", "security.keys=abc", "--set", "security.salts=00")
    assert out.returncode == 2 and "security.keys" in out.stderr, out.stderr
    out = kiln("config", "dump", "--set", f"security.keys={K1}", "--set", f"security.key_file={tmp_path}/k",
               "--set", f"security.salts={S1}")
    assert out.returncode == 2 and "security.key_file" in out.stderr, out.stderr
    out = kiln("config", "dump", "--set", f"security.keys={K1}", "--set", f"security.salts={S1}")
    assert out.returncode == 0, out.stderr
    assert K1 not in out.stdout and S1 not in out.stdout, "config dump shows a secret"
