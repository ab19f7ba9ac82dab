"""A real OTLP/HTTP trace receiver for the tracing tests: `POST /v1/traces` with a protobuf
`ExportTraceServiceRequest`, decoded by the official classes of PyPI `opentelemetry-proto`
(not by anything of Kiln's), answered 200 with an empty `ExportTraceServiceResponse`. It can
hang: every POST then waits, unanswered, until `release()` (the collector that is down in the
worst way: the connection is open and nothing comes back)."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                      ExportTraceServiceResponse)


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start: int
    end: int
    attributes: dict
    status_code: int
    status_message: str
    flags: int
    trace_state: str
    resource: dict = field(default_factory=dict)


def _value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Receiver:
    def __init__(self, decode: bool = True):
        self.spans: list[Span] = []
        self.requests: list[dict] = []  # headers and size of every POST
        self.lock = threading.Lock()
        self.gate = threading.Event()
        self.gate.set()
        self.pending = 0  # POSTs waiting at the gate
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.requests.append({"path": self.path, "headers": dict(self.headers.items()), "bytes": len(body)})
                    receiver.pending += 1
                receiver.gate.wait()
                with receiver.lock:
                    receiver.pending -= 1
                if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_response(415)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest.FromString(body) if decode else ExportTraceServiceRequest()
                spans = []
                for rs in request.resource_spans:
                    resource = {a.key: _value(a.value) for a in rs.resource.attributes}
                    for ss in rs.scope_spans:
                        assert ss.scope.name == "kiln"
                        for s in ss.spans:
                            spans.append(Span(s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.name, s.kind,
                                              s.start_time_unix_nano, s.end_time_unix_nano,
                                              {a.key: _value(a.value) for a in s.attributes}, s.status.code,
                                              s.status.message, s.flags, s.trace_state, resource))
                with receiver.lock:
                    receiver.spans += spans
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"

    def start(self) -> "Receiver":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def hang(self) -> None:
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    def trace(self, trace_id: str) -> list[Span]:
        with self.lock:
            return [s for s in self.spans if s.trace_id == trace_id]

    def wait_trace(self, trace_id: str, done=lambda spans: any(s.kind == 2 for s in spans), timeout: float = 20) -> list[Span]:
        """The spans of `trace_id` once `done(spans)` holds (default: its request span came), or
        what came by `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            spans = self.trace(trace_id)
            if done(spans) or time.monotonic() > deadline:
                return spans
            time.sleep(0.02)

    def wait_pending(self, n: int = 1, timeout: float = 20) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.pending >= n:
                    return True
            time.sleep(0.02)
        return False
