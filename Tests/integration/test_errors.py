"""Bad URLs and bad files: 4xx with a one-line reason, never a 5xx, never a file outside the root."""
from __future__ import annotations

import pytest

from fcgiclient import fcgi_params, fcgi_request
from helpers import assert_plain_error

PASSWD_MARK = b"root:x:0:0"


def test_unknown_option_names_the_segment(client):
    r = client.get("/foo:1/pillow_hopper.jpg")
    assert r.status == 400, r.describe()
    assert_plain_error(r)
    assert b"foo:1" in r.body, f"the reason should name the segment: {r.body!r}"


@pytest.mark.parametrize("spec", [
    "rs:abc:1", "rs:10", "rs:10:10:bogus", "rs:-5:10", "w:abc", "h:", "q:0", "q:101", "quality:abc",
    "f:svg", "format:bmp", "el:2", "resize:1:2:3:4",
])
def test_bad_option_400(client, spec):
    r = client.get(f"/{spec}/pillow_hopper.jpg")
    assert r.status == 400, f"/{spec}: {r.describe()}"
    assert_plain_error(r, spec)


def test_no_source_path_400(client):
    r = client.get("/w:10/")
    assert r.status == 400, r.describe()
    assert_plain_error(r)


def test_missing_file_404(client):
    for path in ("/w:10/nope.jpg", "/nope.jpg", "/w:10/sub/nope.jpg", "/w:10/nofolder/x.jpg"):
        r = client.get(path)
        assert r.status == 404, f"{path}: {r.describe()}"
        assert_plain_error(r, path)


def test_folder_is_not_a_source(client):
    r = client.get("/w:10/sub")
    assert 400 <= r.status < 500, r.describe()


# `..` in every spelling: nginx normalises the decoded path and refuses to climb above the
# root with a 400 (docs/operations.md "Errors"); every path below climbs, so nginx answers them all.
TRAVERSALS = [
    "/%2e%2e/%2e%2e/etc/passwd",
    "/rs:10:10/..%2f..%2fetc/passwd",
    "/../../etc/passwd",
    "/w:10/../../../../etc/passwd",
    "/w:10/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/-/..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/w:10/sub/%2E%2E/%2E%2E/%2E%2E/etc/passwd",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_dot_dot_paths_refused(client, path):
    r = client.get(path)
    assert r.status == 400, f"{path}: {r.describe()}"
    assert PASSWD_MARK not in r.body


def test_backslash_paths_refused(client):
    r = client.get("/w:10/..%5c..%5c..%5cetc%5cpasswd")
    # nginx decodes %5c to a backslash, which is not a separator; kiln refuses the encoded
    # separator like an encoded slash (403, docs/operations.md "Errors").
    assert r.status == 403, r.describe()
    assert PASSWD_MARK not in r.body


def test_encoded_slash_absolute_path(client):
    r = client.get("/w:10/%2fetc%2fpasswd")
    assert 400 <= r.status < 500 and PASSWD_MARK not in r.body, r.describe()


@pytest.mark.parametrize("request_uri,document_uri,status", [
    ("/%2e%2e/%2e%2e/etc/passwd", None, 403),
    ("/w:10/..%2f..%2fetc%2fpasswd", None, 403),
    ("/w:10/../../etc/passwd", None, 403),
    ("/w:10/x", "/w:10/../../etc/passwd", 403),
    # DOCUMENT_URI is already decoded by nginx: "%2e%2e" there is a folder of that name, not a
    # climb, and there is none.
    ("/w:10/x", "/w:10/%2e%2e/%2e%2e/etc/passwd", 404),
])
def test_traversal_without_nginx(stack, request_uri, document_uri, status):
    """Straight to kiln's socket, past nginx's normalisation: kiln refuses `..` segments on its
    own with a 403 (docs/operations.md "Errors")."""
    r = fcgi_request(stack.sock, fcgi_params("GET", request_uri, document_uri=document_uri), timeout=30)
    assert r.status == status, f"{request_uri} / {document_uri}: {r.status} {r.body[:200]!r}"
    assert PASSWD_MARK not in r.body


def test_symlink_leaving_root_403(client):
    for path in ("/-/escape_passwd", "/w:10/escape_passwd", "/w:10/escape_dir/passwd"):
        r = client.get(path)
        assert r.status == 403, f"{path}: {r.describe()}"
        assert PASSWD_MARK not in r.body
        assert_plain_error(r, path)


def test_text_named_png_415(client):
    r = client.get("/w:10/plain_text_named.png")
    assert r.status == 415, r.describe()
    assert_plain_error(r)
    # A whole sentence (it ended "...AVIF and HEIC are").
    assert r.body == b"not a supported image (content is text/plain): Kiln reads JPEG, PNG, WebP, GIF, AVIF, HEIC, SVG, TIFF, BMP, ICO and JPEG XL images\n", r.body


def test_control_characters_in_a_404_body_are_escaped(client):
    """nginx decodes %0D%0A and %1B into the path (DOCUMENT_URI); the 404 quotes the path, escaped,
    so the body stays one line (it echoed them raw)."""
    r = client.get("/w:10/no%0D%0AX-Injected:%201%1B[31m.jpg")
    assert r.status == 404, r.describe()
    assert_plain_error(r)
    assert b"\r" not in r.body and b"\x1b" not in r.body, r.body
    assert r.body.count(b"\n") == 1 and r.body.endswith(b"\n"), r.body
    assert b"no\\r\\nX-Injected: 1\\u001b[31m.jpg" in r.body, r.body
    assert r.header("x-injected") is None


def test_a_path_that_is_not_utf8_is_400(make_stack, tmp_path):
    """%FF decodes to a byte that is no UTF-8: a 400 with a one-line reason. Before, it was read
    as U+FFFD, so /x%FF.jpg and /x%FE.jpg were both the file named x\uFFFD.jpg (one cache key)."""
    import os
    import shutil
    from helpers import CORPUS
    root = tmp_path / "root"
    root.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(root, 0o755)
    shutil.copy2(CORPUS / "pillow_hopper.jpg", root / "pillow_hopper.jpg")
    shutil.copy2(CORPUS / "pillow_hopper.jpg", root / "x\ufffd.jpg")
    s = make_stack(root=root)
    c = s.client()
    assert c.get("/w:20/f:png/x%EF%BF%BD.jpg").status == 200  # the file's real name
    for path in ("/w:20/f:png/x%FF.jpg", "/w:20/f:png/x%FE.jpg", "/w:20/f:png/x%C3.jpg", "/w:20/f:png/x%ED%A0%80.jpg"):
        r = c.get(path)
        assert r.status == 400, f"{path}: {r.describe()}"
        assert_plain_error(r, path)
        assert r.body == b"the path is not valid UTF-8 (after percent-decoding)\n", r.body


def test_webp_named_png_is_decoded_by_content(client):
    r, im = client.image("/f:png/coffee_webp_named.png")
    assert im.size == (600, 400)


@pytest.mark.parametrize("name", ["png_bomb_12000x12000_gray8.png", "jpeg_dims_patched_40000x20000.jpg",
                                  "webp_bomb_12000x12000_lossy.webp", "webp_anim_bomb_4000x4000_500frames.webp"])
def test_bombs_413_fast(client, name):
    r = client.get(f"/w:100/{name}", timeout=30)
    assert r.status == 413, f"{name}: {r.describe()}"
    assert_plain_error(r, name)
    assert r.elapsed < 5, f"{name}: {r.elapsed:.1f}s; limits must be checked from the header, before decoding"


def test_scan_bomb_bounded(client):
    r = client.get("/w:100/jpeg_scan_bomb_2000x2000_1000scans.jpg", timeout=30)
    assert 400 <= r.status < 500, r.describe()
    assert r.elapsed < 5, f"{r.elapsed:.1f}s for the progressive-scan bomb"


def test_huge_dimensions_in_url(client):
    r = client.get("/rs:100000:100000/el:1/pillow_hopper.jpg")
    assert 400 <= r.status < 500, r.describe()
    # 16000 x 16000 = 256 MP of output from a 128 x 128 source: over the output budget
    r = client.get("/el:1/rs:16000:16000:force/pillow_hopper.jpg", timeout=30)
    assert r.status == 413, f"256 MP output: {r.describe()}"
