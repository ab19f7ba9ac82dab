"""Hostile FastCGI connections (issue 9): half-sent requests, a byte-at-a-time sender and idle
kept connections hold a worker for `server.request_read_timeout` / `server.keepalive_timeout`
at most; AUTHORIZER and FILTER get FCGI_UNKNOWN_ROLE; FCGI_GET_VALUES is answered; a request
ends with STDIN's empty record. Raw sockets straight at the worker's unix socket, as nginx
would connect, with a normal request through nginx alongside."""
from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from fcgiclient import _fcgi_len, _fcgi_record, fcgi_params
from helpers import PHOTO_HD
from stack import running_stack

READ_TIMEOUT = 1.0
KEEPALIVE_TIMEOUT = 1.0
WORKERS = 2
BEGIN, ABORT, END, PARAMS, STDIN, STDOUT, STDERR = 1, 2, 3, 4, 5, 6, 7
GET_VALUES, GET_VALUES_RESULT, UNKNOWN_TYPE = 9, 10, 11
UNKNOWN_ROLE = 3
OK_PATH = "/w:32/f:png/pillow_hopper.jpg"


@pytest.fixture(scope="module")
def fstack(root):
    yield from running_stack(root=root, workers=WORKERS, extra_args=[
        "--set", f"server.request_read_timeout={int(READ_TIMEOUT * 1000)}ms",
        "--set", f"server.keepalive_timeout={int(KEEPALIVE_TIMEOUT * 1000)}ms"])


def begin(role: int = 1, keep: bool = False, request_id: int = 1) -> bytes:
    return _fcgi_record(BEGIN, struct.pack("!HB5x", role, 1 if keep else 0), request_id)


def params_body(params: dict[str, str]) -> bytes:
    return b"".join(_fcgi_len(len(k.encode())) + _fcgi_len(len(v.encode())) + k.encode() + v.encode()
                    for k, v in params.items())


def full_request(path: str = OK_PATH, role: int = 1, keep: bool = False, request_id: int = 1) -> bytes:
    return (begin(role, keep, request_id) + _fcgi_record(PARAMS, params_body(fcgi_params("GET", path)), request_id)
            + _fcgi_record(PARAMS, b"", request_id) + _fcgi_record(STDIN, b"", request_id))


def connect(stack, timeout: float = 10) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(str(stack.sock))
    return s


def read_records(s: socket.socket, until_end: bool = True) -> list[tuple[int, int, bytes]]:
    """(type, request id, content) of every record up to FCGI_END_REQUEST (or EOF)."""
    buf, out = b"", []
    while True:
        while len(buf) >= 8:
            _, rtype, rid, clen, plen, _ = struct.unpack("!BBHHBB", buf[:8])
            if len(buf) < 8 + clen + plen:
                break
            out.append((rtype, rid, buf[8:8 + clen]))
            buf = buf[8 + clen + plen:]
            if until_end and rtype == END:
                return out
        chunk = s.recv(65536)
        if not chunk:
            return out
        buf += chunk


def wait_closed(s: socket.socket, limit: float) -> float | None:
    """Seconds until the peer closed the connection (EOF or reset), None if still open at `limit`."""
    start = time.monotonic()
    s.settimeout(limit)
    try:
        while True:
            if not s.recv(4096):
                return time.monotonic() - start
    except (ConnectionResetError, BrokenPipeError):
        return time.monotonic() - start
    except socket.timeout:
        return None


def assert_served_through_nginx_despite(fstack, hostile: list[socket.socket], started: float) -> None:
    """Every worker holds one hostile connection: a normal request through nginx waits for them
    to be dropped (so it cannot be fast), then succeeds about request_read_timeout after they
    connected; each hostile connection is closed by then."""
    r = fstack.client().get(OK_PATH, timeout=15)
    waited = time.monotonic() - started
    assert r.status == 200, r.describe()
    assert waited >= READ_TIMEOUT * 0.7, f"answered after {waited:.2f}s: the workers were not held at all"
    assert waited < READ_TIMEOUT + 1.5, f"answered only after {waited:.2f}s"
    for s in hostile:
        closed = wait_closed(s, READ_TIMEOUT + 1.5)
        assert closed is not None, "a hostile connection is still open well past request_read_timeout"
        s.close()
    assert "request_read_timeout" in fstack.kiln_log.read_text(errors="replace")


def test_begin_request_only_does_not_hold_the_workers(fstack):
    started = time.monotonic()
    hostile = [connect(fstack) for _ in range(WORKERS)]
    for s in hostile:
        s.sendall(begin())
    assert_served_through_nginx_despite(fstack, hostile, started)


def test_part_of_the_params_does_not_hold_the_workers(fstack):
    started = time.monotonic()
    hostile = [connect(fstack) for _ in range(WORKERS)]
    body = params_body(fcgi_params("GET", OK_PATH))
    record = _fcgi_record(PARAMS, body)
    for s in hostile:
        # A whole params record without the empty one after it, then half of a second record.
        s.sendall(begin() + record + record[:len(record) // 2])
    assert_served_through_nginx_despite(fstack, hostile, started)


def test_a_byte_at_a_time_does_not_hold_the_workers(fstack):
    """A sender that never stalls (a byte every 0.2 s, so a per-read timeout would never fire)
    is still bound by the deadline of the whole request."""
    request = full_request()
    stop = threading.Event()
    closed_after: list[float | None] = [None] * WORKERS
    started = time.monotonic()
    socks = [connect(fstack) for _ in range(WORKERS)]

    def drip(i: int) -> None:
        for b in request:
            if stop.is_set():
                return
            try:
                socks[i].send(bytes([b]))
            except OSError:
                closed_after[i] = time.monotonic() - started
                return
            time.sleep(0.2)

    threads = [threading.Thread(target=drip, args=(i,), daemon=True) for i in range(WORKERS)]
    for t in threads:
        t.start()
    try:
        assert len(request) * 0.2 > READ_TIMEOUT * 5  # the drip would outlast the bound by far
        assert_served_through_nginx_despite(fstack, socks, started)
    finally:
        stop.set()
        for t in threads:
            t.join(5)


@pytest.mark.parametrize("role, name", [(2, "AUTHORIZER"), (3, "FILTER")])
def test_authorizer_and_filter_get_unknown_role(fstack, role, name):
    s = connect(fstack)
    try:
        s.sendall(full_request(role=role, request_id=5))
        records = read_records(s)
        assert records, f"{name}: no answer"
        rtype, rid, content = records[-1]
        assert (rtype, rid) == (END, 5), records
        app_status, protocol_status = struct.unpack("!IB3x", content)
        assert protocol_status == UNKNOWN_ROLE and app_status == 0, content
        assert not [r for r in records if r[0] in (STDOUT, STDERR)], f"{name} was served: {records}"
        assert wait_closed(s, 3) is not None, "no FCGI_KEEP_CONN: the connection must close"
    finally:
        s.close()
    assert fstack.client().get(OK_PATH, timeout=10).status == 200


def test_the_request_ends_with_the_empty_stdin_record(fstack):
    s = connect(fstack)
    try:
        request = full_request()
        s.sendall(request[:-8])  # everything but STDIN's empty record
        s.settimeout(0.5)
        with pytest.raises(socket.timeout):
            s.recv(1)  # no answer before the request is complete
        s.settimeout(10)
        s.sendall(request[-8:])
        records = read_records(s)
        stdout = b"".join(c for t, _, c in records if t == STDOUT)
        assert records[-1][0] == END, records[-1]
        assert b"\r\n\r\n\x89PNG" in stdout, stdout[:200]
    finally:
        s.close()


def test_kept_connection_serves_requests_and_is_closed_when_idle(fstack):
    s = connect(fstack)
    try:
        for request_id in (1, 2):
            s.sendall(full_request(keep=True, request_id=request_id))
            records = read_records(s)
            assert records[-1][:2] == (END, request_id), records[-1]
            assert b"\x89PNG" in b"".join(c for t, _, c in records if t == STDOUT)
        # Idle now: the worker gives it up after keepalive_timeout, not never.
        closed = wait_closed(s, KEEPALIVE_TIMEOUT + 2)
        assert closed is not None, "an idle kept connection holds its worker"
        assert closed >= KEEPALIVE_TIMEOUT * 0.7, f"closed after {closed:.2f}s, before keepalive_timeout"
    finally:
        s.close()
    assert fstack.client().get(OK_PATH, timeout=10).status == 200


def test_get_values_and_unknown_management_records(fstack):
    s = connect(fstack)
    try:
        query = params_body({"FCGI_MAX_CONNS": "", "FCGI_MAX_REQS": "", "FCGI_MPXS_CONNS": ""})
        s.sendall(_fcgi_record(GET_VALUES, query, 0) + _fcgi_record(42, b"", 0))
        records: list[tuple[int, int, bytes]] = []
        buf = b""
        s.settimeout(5)
        while len(records) < 2:
            buf += s.recv(4096)
            while len(buf) >= 8:
                _, rtype, rid, clen, plen, _ = struct.unpack("!BBHHBB", buf[:8])
                if len(buf) < 8 + clen + plen:
                    break
                records.append((rtype, rid, buf[8:8 + clen]))
                buf = buf[8 + clen + plen:]
        (t1, id1, values), (t2, id2, unknown) = records
        assert (t1, id1, t2, id2) == (GET_VALUES_RESULT, 0, UNKNOWN_TYPE, 0), records
        pairs, i = {}, 0
        while i < len(values):
            nl, vl = values[i], values[i + 1]
            pairs[values[i + 2:i + 2 + nl].decode()] = values[i + 2 + nl:i + 2 + nl + vl].decode()
            i += 2 + nl + vl
        assert pairs == {"FCGI_MAX_CONNS": "1", "FCGI_MAX_REQS": "1", "FCGI_MPXS_CONNS": "0"}
        assert unknown[0] == 42
        # The same connection then serves a normal request.
        s.sendall(full_request())
        assert read_records(s)[-1][0] == END
    finally:
        s.close()


def test_garbage_is_closed_at_once_and_the_worker_survives(fstack):
    workers = sorted(fstack.worker_pids())
    s = connect(fstack)
    try:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        closed = wait_closed(s, 3)
        assert closed is not None and closed < 1, closed
    finally:
        s.close()
    assert fstack.client().get(f"/w:64/{PHOTO_HD}", timeout=10).status == 200
    assert sorted(fstack.worker_pids()) == workers


def test_a_raw_nul_in_document_uri_is_400_not_a_truncated_path(fstack):
    """Params are bytes now: a NUL that reaches DOCUMENT_URI (even with a clean REQUEST_URI)
    is seen and refused, where libfcgi's C strings served the path cut at the NUL."""
    from fcgiclient import fcgi_request
    clean = f"/w:100/{PHOTO_HD}"
    ok = fcgi_request(fstack.sock, fcgi_params("GET", clean, document_uri=clean), timeout=10)
    assert ok.status == 200, ok
    r = fcgi_request(fstack.sock, fcgi_params("GET", clean, document_uri=f"{clean}\0.png"), timeout=10)
    assert r.status == 400, r
    assert b"NUL" in r.body, r.body
    # Invalid UTF-8 in a param cannot crash the worker either.
    workers = sorted(fstack.worker_pids())
    s = connect(fstack)
    try:
        bad = fcgi_params("GET", clean, document_uri=clean)
        body = params_body(bad) + _fcgi_len(11) + _fcgi_len(2) + b"HTTP_ACCEPT" + b"\xff\xfe"
        s.sendall(begin() + _fcgi_record(PARAMS, body) + _fcgi_record(PARAMS, b"") + _fcgi_record(STDIN, b""))
        records = read_records(s)
        assert records[-1][0] == END
        stdout = b"".join(c for t, _, c in records if t == STDOUT)
        assert b"\r\n\r\n\xff\xd8" in stdout, stdout[:200]  # the JPEG, served as without the header
    finally:
        s.close()
    assert sorted(fstack.worker_pids()) == workers
