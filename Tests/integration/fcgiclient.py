"""A minimal FastCGI client (responder role), to talk to kiln's socket without nginx."""
from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass
from pathlib import Path


class IncompleteResponse(Exception):
    """The connection closed before FCGI_END_REQUEST."""

    def __init__(self, received: int):
        super().__init__(f"connection closed after {received} bytes, before END_REQUEST")
        self.received = received


@dataclass(repr=False)
class FcgiResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    stderr: bytes = b""
    elapsed: float = 0.0

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    def __repr__(self) -> str:
        body = self.body[:200] if self.content_type.startswith("text/") else f"{len(self.body)} bytes"
        return f"<FcgiResponse {self.status} {self.content_type}: {body!r}>"


def _fcgi_record(rtype: int, content: bytes, request_id: int = 1) -> bytes:
    out = b""
    for i in range(0, max(len(content), 1), 65535):
        chunk = content[i:i + 65535]
        pad = (8 - len(chunk) % 8) % 8
        out += struct.pack("!BBHHBB", 1, rtype, request_id, len(chunk), pad, 0) + chunk + b"\0" * pad
        if not content:
            break
    return out


def _fcgi_len(n: int) -> bytes:
    return bytes([n]) if n < 128 else struct.pack("!I", n | 0x80000000)


def fcgi_params(method: str, request_uri: str, headers: dict[str, str] | None = None,
                document_uri: str | None = None) -> dict[str, str]:
    p = {"REQUEST_METHOD": method, "REQUEST_URI": request_uri,
         "QUERY_STRING": request_uri.partition("?")[2], "SERVER_PROTOCOL": "HTTP/1.1",
         "GATEWAY_INTERFACE": "CGI/1.1", "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "40000",
         "SERVER_ADDR": "127.0.0.1", "SERVER_PORT": "80", "SERVER_NAME": "localhost",
         "CONTENT_LENGTH": "", "CONTENT_TYPE": ""}
    if document_uri is not None:
        p["DOCUMENT_URI"] = document_uri
    for k, v in (headers or {}).items():
        p["HTTP_" + k.upper().replace("-", "_")] = v
    return p


def fcgi_request(sock_path: str | Path | tuple[str, int], params: dict[str, str], timeout: float = 60) -> FcgiResponse:
    """One FastCGI request (responder role, no keep-conn), as nginx sends it, to a unix socket
    or a (host, port) over TCP.
    Raises OSError from connect (FileNotFoundError, ConnectionRefusedError, ...),
    IncompleteResponse when the server closes early, socket.timeout on a hang."""
    start = time.monotonic()
    tcp = isinstance(sock_path, tuple)
    s = socket.socket(socket.AF_INET if tcp else socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock_path if tcp else str(sock_path))
        body = b"".join(_fcgi_len(len(k.encode())) + _fcgi_len(len(v.encode())) + k.encode() + v.encode()
                        for k, v in params.items())
        s.sendall(_fcgi_record(1, struct.pack("!HB5x", 1, 0)) + _fcgi_record(4, body)
                  + _fcgi_record(4, b"") + _fcgi_record(5, b""))
        buf = b""
        stdout, stderr = b"", b""
        ended = False
        while not ended:
            chunk = s.recv(65536)
            if not chunk:
                raise IncompleteResponse(len(stdout))
            buf += chunk
            while len(buf) >= 8:
                _, rtype, _, clen, plen, _ = struct.unpack("!BBHHBB", buf[:8])
                if len(buf) < 8 + clen + plen:
                    break
                content = buf[8:8 + clen]
                buf = buf[8 + clen + plen:]
                if rtype == 6:
                    stdout += content
                elif rtype == 7:
                    stderr += content
                elif rtype == 3:
                    ended = True
                    break
    finally:
        s.close()
    head, sep, payload = stdout.partition(b"\r\n\r\n")
    if not sep:
        head, sep, payload = stdout.partition(b"\n\n")
    headers: dict[str, str] = {}
    for line in head.decode("latin-1").splitlines():
        if ":" in line:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
    status = int(headers.pop("status", "200").split()[0])
    return FcgiResponse(status, headers, payload, stderr, time.monotonic() - start)
