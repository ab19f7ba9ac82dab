"""S3 origins (issue 13): `source.origins = "name=s3://bucket/prefix/"` reads objects with AWS
Signature Version 4 GETs, path-style at `source.s3_endpoint`. The S3 here is moto's server on
loopback (`python -m moto.server`), with its IAM authentication on: a request signed with a wrong
secret, a wrong session token or no signature at all is refused (checked below, so a passing render
proves the signature), and the real kiln behind nginx reads the bucket."""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers import CORPUS, KILN_BIN, SetupError
from stack import KilnStack, free_port

BUCKET = "kiln-media"
HOPPER = "pillow_hopper.jpg"      # 128x128
OTHER = "ljt_testorig.jpg"        # 227x149
ODD_KEY = "photos/with space/ünïcödé +(1).jpg"
ODD_PATH = "with%20space/%C3%BCn%C3%AFc%C3%B6d%C3%A9%20%2B%281%29.jpg"


class MotoS3:
    """moto's server with an IAM user allowed to read the bucket, an assumed role (temporary
    credentials with a session token), the objects, and then authentication switched on."""

    def __init__(self, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._log = open(log, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise SetupError(f"moto server did not start on {self.url}: {log.read_text(errors='replace')[-2000:]}")
                time.sleep(0.1)
        try:
            self._populate()
        except BaseException:
            self.stop()
            raise

    def _populate(self) -> None:
        import boto3

        setup = dict(endpoint_url=self.url, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
        iam = boto3.client("iam", **setup)
        iam.create_user(UserName="kiln")
        key = iam.create_access_key(UserName="kiln")["AccessKey"]
        self.key_id, self.secret = key["AccessKeyId"], key["SecretAccessKey"]
        everything = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": ["s3:*", "sts:AssumeRole"], "Resource": "*"}]})
        iam.put_user_policy(UserName="kiln", PolicyName="s3", PolicyDocument=everything)
        trust = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}]})
        iam.create_role(RoleName="reader", AssumeRolePolicyDocument=trust)
        iam.put_role_policy(RoleName="reader", PolicyName="read", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}))
        temporary = boto3.client("sts", **setup).assume_role(
            RoleArn="arn:aws:iam::123456789012:role/reader", RoleSessionName="kiln")["Credentials"]
        self.temporary = (temporary["AccessKeyId"], temporary["SecretAccessKey"], temporary["SessionToken"])
        s3 = boto3.client("s3", **setup)
        s3.create_bucket(Bucket=BUCKET)
        for key_name, file in [(f"photos/{HOPPER}", HOPPER), (ODD_KEY, HOPPER), ("top.jpg", OTHER),
                               ("photos/changing.jpg", HOPPER)]:
            s3.put_object(Bucket=BUCKET, Key=key_name, Body=(CORPUS / file).read_bytes())
        # From here on every request must be signed by a known key.
        urllib.request.urlopen(urllib.request.Request(self.url + "/moto-api/reset-auth", data=b"0", method="POST",
                                                      headers={"Content-Type": "text/plain"}),
                               timeout=5).close()
        self.s3 = boto3.client("s3", endpoint_url=self.url, region_name="us-east-1",
                               aws_access_key_id=self.key_id, aws_secret_access_key=self.secret)

    def answered(self, status: int, key: str, timeout: float = 2) -> int:
        """How many GETs of `key` moto's request log shows answered with `status`."""
        pattern = re.compile(rf'GET /{BUCKET}/{re.escape(key)} HTTP/1\.1\S*" {status} ')
        deadline = time.monotonic() + timeout
        while True:
            n = len(pattern.findall(self.log.read_text(errors="replace")))
            if n or time.monotonic() > deadline:
                return n
            time.sleep(0.05)

    def put(self, key: str, file: str) -> None:
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=(CORPUS / file).read_bytes())

    def stop(self) -> None:
        if self._log.closed:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = MotoS3(tmp_path_factory.mktemp("moto") / "moto.log")
    yield server
    server.stop()


def s3_stack(make_stack, moto, *extra, key_id=None, secret=None, token="", workers=1):
    env = {"AWS_ACCESS_KEY_ID": moto.key_id if key_id is None else key_id,
           "AWS_SECRET_ACCESS_KEY": moto.secret if secret is None else secret,
           "AWS_SESSION_TOKEN": token}
    args = ["--set", f"source.origins=p=s3://{BUCKET}/photos/, r=s3://{BUCKET}",
            "--set", f"source.s3_endpoint={moto.url}", "--set", "source.allowed_networks=127.0.0.1",
            "--set", "source.fetch_timeout=5s"]
    return make_stack(workers=workers, env=env, extra_args=args + list(extra))


def _size(body: bytes):
    from PIL import Image
    return Image.open(io.BytesIO(body)).size


def test_moto_refuses_unsigned_and_badly_signed_requests(moto):
    """Without this, the renders below would prove nothing about the signatures."""
    import boto3
    import botocore.exceptions

    with pytest.raises(urllib.error.HTTPError) as unsigned:
        urllib.request.urlopen(f"{moto.url}/{BUCKET}/photos/{HOPPER}", timeout=5)
    assert unsigned.value.code == 403
    wrong = boto3.client("s3", endpoint_url=moto.url, region_name="us-east-1",
                         aws_access_key_id=moto.key_id, aws_secret_access_key="not-the-secret")
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        wrong.get_object(Bucket=BUCKET, Key=f"photos/{HOPPER}")
    assert refused.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
    assert moto.s3.get_object(Bucket=BUCKET, Key=f"photos/{HOPPER}")["Body"].read() == (CORPUS / HOPPER).read_bytes()


def test_a_variant_renders_from_the_bucket_under_the_prefix(make_stack, moto):
    s = s3_stack(make_stack, moto, workers=2)
    client = s.client()
    r = client.get(f"/w:64/f:png/p/{HOPPER}")
    assert r.status == 200 and r.content_type == "image/png" and _size(r.body) == (64, 64), r.describe()
    # The whole bucket through the origin without a prefix: the same object, the same rendering.
    whole = client.get(f"/w:64/f:png/r/photos/{HOPPER}")
    assert whole.status == 200 and whole.body == r.body, whole.describe()
    top = client.get("/w:100/f:png/r/top.jpg")
    assert top.status == 200 and _size(top.body) == (100, 66), top.describe()
    # The prefix confines: top.jpg is not under photos/, and .. does not climb out of it.
    assert client.get("/w:100/f:png/p/top.jpg").status == 404
    assert client.get("/w:100/f:png/p/%2E%2E/top.jpg").status in (400, 404)
    # A key with spaces, non-ASCII letters, + and parentheses is signed as sent.
    odd = client.get(f"/w:64/f:png/p/{ODD_PATH}")
    assert odd.status == 200 and odd.body == r.body, odd.describe()
    # Local files are still served from the root.
    assert client.get(f"/w:20/f:jpeg/{HOPPER}").status == 200


def test_a_missing_key_is_a_404_with_a_one_line_reason(make_stack, moto):
    s = s3_stack(make_stack, moto)
    r = s.client().get("/w:64/f:png/p/missing.jpg")
    assert r.status == 404 and "no source at p/missing.jpg" in r.body.decode(), r.describe()
    assert b"\n" not in r.body.rstrip(b"\n"), "one line"


def test_a_wrong_secret_is_a_502_and_never_shown(make_stack, moto):
    secret = "WRONGsecretWRONGsecretWRONGsecret0123456"
    s = s3_stack(make_stack, moto, secret=secret)
    client = s.client()
    r = client.get(f"/w:64/f:png/p/{HOPPER}")
    assert r.status == 502 and "origin p answered 403 (SignatureDoesNotMatch)" in r.body.decode(), r.describe()
    assert b"\n" not in r.body.rstrip(b"\n"), "one line"
    assert client.get(f"/w:20/f:jpeg/{HOPPER}").status == 200, "the worker still serves"
    logs = s.kiln_log.read_text(errors="replace")
    assert secret not in logs and secret not in r.body.decode()
    # A right secret in the same place renders: the 403 came from the signature.
    ok = s3_stack(make_stack, moto)
    assert ok.client().get(f"/w:64/f:png/p/{HOPPER}").status == 200
    assert moto.secret not in ok.kiln_log.read_text(errors="replace")


def test_temporary_credentials_send_their_session_token(make_stack, moto):
    key_id, secret, token = moto.temporary
    s = s3_stack(make_stack, moto, key_id=key_id, secret=secret, token=token)
    r = s.client().get(f"/w:64/f:png/p/{HOPPER}")
    assert r.status == 200 and _size(r.body) == (64, 64), r.describe()
    bad = s3_stack(make_stack, moto, key_id=key_id, secret=secret, token=token[:-4] + "AAAA")
    r = bad.client().get(f"/w:64/f:png/p/{HOPPER}")
    # S3 (and moto) answer 400 InvalidToken.
    assert r.status == 502 and "(InvalidToken)" in r.body.decode(), r.describe()
    assert token not in bad.kiln_log.read_text(errors="replace")


def test_the_etag_revalidates_and_a_changed_object_renders_anew(make_stack, moto):
    moto.put("photos/changing.jpg", HOPPER)
    s = s3_stack(make_stack, moto, "--set", "source.revalidate_after=0")
    client = s.client()
    first = client.get("/w:100/f:png/p/changing.jpg")
    assert first.status == 200 and _size(first.body) == (100, 100), first.describe()
    # Unchanged: a conditional GET (If-None-Match, unsigned next to the signed headers), the same answer.
    again = client.get("/w:100/f:png/p/changing.jpg")
    assert again.status == 200 and again.body == first.body and again.header("ETag") == first.header("ETag")
    assert moto.answered(304, "photos/changing.jpg") == 1, "the signed conditional GET got S3's 304"
    moto.put("photos/changing.jpg", OTHER)
    changed = client.get("/w:100/f:png/p/changing.jpg")
    assert changed.status == 200 and _size(changed.body) == (100, 66), changed.describe()
    assert changed.header("ETag") != first.header("ETag")


def test_credentials_from_a_shared_credentials_file(make_stack, moto, tmp_path):
    file = tmp_path / "credentials"
    file.write_text(f"[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n"
                    f"[kiln]\naws_access_key_id = {moto.key_id}\naws_secret_access_key = {moto.secret}\n")
    os.chmod(tmp_path, 0o755)
    s = s3_stack(make_stack, moto, "--set", f"source.s3_credentials_file={file}", "--set", "source.s3_profile=kiln",
                 key_id="", secret="", workers=2)
    r = s.client().get(f"/w:64/f:png/p/{HOPPER}")
    assert r.status == 200 and _size(r.body) == (64, 64), r.describe()
    # The settings name the file, never what is in it.
    dump = subprocess.run([str(KILN_BIN), "config", "dump", "--set", f"source.s3_credentials_file={file}",
                           "--set", "source.s3_profile=kiln", "--set", f"source.origins=p=s3://{BUCKET}/photos/"],
                          capture_output=True, text=True, timeout=30,
                          env={**os.environ, "KILN_SOURCE_ROOT": str(s.root), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""})
    assert dump.returncode == 0 and str(file) in dump.stdout, dump.stderr
    assert moto.secret not in dump.stdout + dump.stderr and moto.key_id not in dump.stdout


def test_no_credentials_is_a_configuration_error_at_start(root, moto):
    s = KilnStack(root=root, workers=1, with_nginx=False,
                  env={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": ""},
                  extra_args=["--set", f"source.origins=p=s3://{BUCKET}/photos/", "--set", f"source.s3_endpoint={moto.url}"])
    try:
        with pytest.raises(SetupError) as failed:
            s.start(ready_timeout=15)
        assert "no credentials" in str(failed.value) and "AWS_ACCESS_KEY_ID" in str(failed.value), str(failed.value)
    finally:
        s.stop(check=False)
        s.cleanup()


def test_what_kiln_sends_and_that_redirects_are_not_followed(make_stack, moto):
    """A fake endpoint records the request and redirects to moto: the signed headers are there, the
    secret is not, and the redirect is refused (a signature is for one host)."""
    import http.server
    import threading

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            seen.append((self.path, dict(self.headers)))
            self.send_response(307)
            self.send_header("Location", f"{moto.url}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        s = s3_stack(make_stack, moto, "--set", f"source.s3_endpoint=http://127.0.0.1:{port}", "--set", "source.s3_region=eu-west-1")
        r = s.client().get(f"/w:64/f:png/p/{ODD_PATH}")
        assert r.status == 502 and "redirect" in r.body.decode(), r.describe()
        assert len(seen) == 1, seen
        path, headers = seen[0]
        assert path == f"/{BUCKET}/photos/with%20space/%C3%BCn%C3%AFc%C3%B6d%C3%A9%20%2B%281%29.jpg"
        assert headers["Host"] == f"127.0.0.1:{port}"
        day = time.strftime("%Y%m%d", time.gmtime())
        assert headers["Authorization"].startswith(
            f"AWS4-HMAC-SHA256 Credential={moto.key_id}/{day}/eu-west-1/s3/aws4_request,"
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature="), headers["Authorization"]
        assert headers["x-amz-date"].startswith(day + "T") and headers["x-amz-date"].endswith("Z")
        assert headers["x-amz-content-sha256"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        assert moto.secret not in repr(headers)
    finally:
        server.shutdown()
        server.server_close()
