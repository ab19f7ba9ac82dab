"""Logs (issue 10): one access line per request in logfmt (default) or JSON lines
(log.format=json) with the request id the response's X-Request-Id shows (nginx's $request_id,
a client's X-Request-Id only with log.trust_request_id), method, URI, status, bytes, cache
outcome, duration, stage durations and the worker's pid; an error answer has one line with its
reason and no other; log.access=off writes no line per request at info. Server-Timing on 304 and
error answers where a phase ran; Timing-Allow-Origin only when configured."""
from __future__ import annotations

import json
import re
import time

NGINX_ID = re.compile(r"^[0-9a-f]{32}$")


def parse_logfmt(line: str) -> dict[str, str]:
    """key=value pairs; a value may be "double-quoted" with backslash escapes. Fails on anything
    else, so a line that is not logfmt fails the test."""
    out: dict[str, str] = {}
    i, n = 0, len(line)
    while i < n:
        m = re.compile(r"([A-Za-z0-9_.\-]+)=").match(line, i)
        assert m, f"not logfmt at column {i}: {line!r}"
        key, i = m.group(1), m.end()
        if i < n and line[i] == '"':
            i += 1
            value = []
            while True:
                assert i < n, f"unterminated quoted value in {line!r}"
                c = line[i]
                if c == "\\":
                    e = line[i + 1]
                    if e == "u":
                        value.append(chr(int(line[i + 2:i + 6], 16)))
                        i += 6
                        continue
                    value.append({"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}[e])
                    i += 2
                elif c == '"':
                    i += 1
                    break
                else:
                    value.append(c)
                    i += 1
            out[key] = "".join(value)
        else:
            j = line.find(" ", i)
            j = n if j < 0 else j
            out[key] = line[i:j]
            assert '"' not in out[key] and "=" not in out[key], f"unquoted value with a quote or = in {line!r}"
            i = j
        if i < n:
            assert line[i] == " ", f"expected a space at column {i}: {line!r}"
            i += 1
    return out


def flatten(d: dict, prefix: str = "") -> dict[str, str]:
    """JSON object -> the logfmt view (nested keys joined with '.', values as text)."""
    out: dict[str, str] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v if isinstance(v, str) else json.dumps(v)
    return out


def log_records(stack, fmt: str) -> list[dict[str, str]]:
    """Every line of the kiln log parsed (all of them must parse)."""
    records = []
    for line in stack.kiln_log.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        if fmt == "json":
            obj = json.loads(line)
            assert isinstance(obj, dict), line
            records.append(flatten(obj))
        else:
            records.append(parse_logfmt(line))
    return records


def lines_for(stack, fmt: str, request_id: str, timeout: float = 5, at_least: int = 1) -> list[dict[str, str]]:
    """The log records with this request id (the access line is written right after the answer)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [r for r in log_records(stack, fmt) if r.get("request_id") == request_id]
        if len(found) >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def check_access(stack, fmt: str, r, method: str, uri: str) -> dict[str, str]:
    rid = r.header("x-request-id")
    assert rid, f"no X-Request-Id on {method} {uri}: {r.describe()}"
    found = lines_for(stack, fmt, rid)
    access = [x for x in found if x.get("msg") == "access"]
    assert len(access) == 1, f"{method} {uri}: expected one access line for {rid}, got {found}"
    a = access[0]
    assert a["method"] == method and a["uri"] == uri, a
    assert int(a["status"]) == r.status, (a, r.describe())
    expected_bytes = 0 if method == "HEAD" or r.status == 304 else len(r.body)
    assert int(a["bytes"]) == expected_bytes, (a, len(r.body))
    assert a["cache"] == (r.header("x-cache") or "-"), (a, r.header("x-cache"))
    assert float(a["duration_ms"]) >= 0, a
    stages = {k[len("stage_ms."):]: float(v) for k, v in a.items() if k.startswith("stage_ms.")}
    assert "total" in stages and len(stages) >= 2, f"no stage durations: {a}"
    assert int(a["pid"]) in stack.worker_pids(), (a["pid"], stack.worker_pids())
    assert a["level"] in ("info", "error") and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", a["time"]), a
    return a


def server_timing(r) -> dict[str, float]:
    st = r.header("server-timing") or ""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"([\w-]+);dur=([0-9.]+)", st)}


def exercise(stack, fmt: str, tag: str) -> None:
    """A mix of answers; each has exactly one access line with the right fields."""
    c = stack.client()
    miss_uri = f"/w:{41 if fmt == 'json' else 43}/q:61/f:webp/pillow_hopper.jpg"
    miss = c.get(miss_uri)
    assert miss.status == 200 and miss.header("x-cache") == "MISS", miss.describe()
    a = check_access(stack, fmt, miss, "GET", miss_uri)
    for stage in ("decode", "encode"):
        assert f"stage_ms.{stage}" in a, f"the miss lacks its {stage} stage: {a}"
    assert "reason" not in a, a

    hit = c.get(miss_uri)
    assert hit.status == 200, hit.describe()
    check_access(stack, fmt, hit, "GET", miss_uri)
    head = c.head(miss_uri)
    assert head.status == 200, head.describe()
    check_access(stack, fmt, head, "HEAD", miss_uri)
    nm = c.get(miss_uri, headers={"If-None-Match": miss.header("etag")})
    assert nm.status == 304, nm.describe()
    check_access(stack, fmt, nm, "GET", miss_uri)

    ims_uri = "/w:37/f:png/pillow_hopper.jpg"
    ims = c.get(ims_uri, headers={"If-Modified-Since": miss.header("last-modified")})
    assert ims.status == 304, ims.describe()
    check_access(stack, fmt, ims, "GET", ims_uri)
    assert "spec" in server_timing(ims) and "total" in server_timing(ims), ims.header("server-timing")

    for uri, status, words in ((f"/w:10/no-such-{tag}.jpg", 404, "no-such"),
                               ("/foo:1/pillow_hopper.jpg", 400, "foo"),
                               ("/w:100/rocket_truncated_50pct.jpg", 422, "")):
        r = c.get(uri)
        assert r.status == status, r.describe()
        a = check_access(stack, fmt, r, "GET", uri)
        assert a.get("reason"), f"no reason on the {status} line: {a}"
        assert words in a["reason"], a
        assert a["reason"] == r.body.decode().strip(), (a["reason"], r.body)
        # One line about this request: the access line, no separate error line.
        found = lines_for(stack, fmt, r.header("x-request-id"), timeout=0.3)
        assert len(found) == 1, found
        assert "total" in server_timing(r), f"{status} without Server-Timing: {r.header('server-timing')}"


def test_access_lines_logfmt_with_nginx_request_id(make_stack):
    s = make_stack(workers=2)
    exercise(s, "logfmt", "a")
    c = s.client()
    r = c.get("/w:12/f:png/pillow_hopper.jpg", headers={"X-Request-Id": "client-chosen-id"})
    assert r.status == 200
    rid = r.header("x-request-id")
    assert NGINX_ID.match(rid), f"not nginx's $request_id: {rid}"
    assert lines_for(s, "logfmt", "client-chosen-id", timeout=0.3) == []
    assert len(lines_for(s, "logfmt", rid)) == 1
    # 404: Server-Timing with the phases that ran; no Timing-Allow-Origin unless configured.
    nf = c.get("/w:10/nothing-here.jpg")
    assert nf.status == 404 and "spec" in server_timing(nf) and "pipeline" in server_timing(nf), \
        nf.header("server-timing")
    assert nf.header("timing-allow-origin") is None and r.header("timing-allow-origin") is None
    # Every line of the master and the workers is logfmt.
    records = log_records(s, "logfmt")
    assert any(x.get("logger") == "kiln.master" for x in records), records[:3]
    assert all("time" in x and "level" in x and "msg" in x for x in records)


def test_access_lines_json_and_trusted_request_id(make_stack):
    s = make_stack(workers=2, extra_args=["--set", "log.format=json", "--set", "log.trust_request_id=true",
                                          "--set", "http.timing_allow_origin=*"])
    exercise(s, "json", "b")
    c = s.client()
    r = c.get("/w:13/f:png/pillow_hopper.jpg", headers={"X-Request-Id": "edge-4711.a:b_c"})
    assert r.status == 200 and r.header("x-request-id") == "edge-4711.a:b_c", r.headers
    assert len(lines_for(s, "json", "edge-4711.a:b_c")) == 1
    # Not a valid id (a space): nginx's is used.
    bad = c.get("/w:13/f:png/pillow_hopper.jpg", headers={"X-Request-Id": "two words"})
    assert NGINX_ID.match(bad.header("x-request-id")), bad.headers
    assert r.header("timing-allow-origin") == "*"
    nf = c.get("/w:10/nothing-here.jpg")
    assert nf.status == 404 and nf.header("timing-allow-origin") == "*"
    # Numbers are JSON numbers; every line is one object.
    raw = [json.loads(line) for line in s.kiln_log.read_text().splitlines() if line.strip()]
    access = [o for o in raw if o.get("msg") == "access"]
    assert access and all(isinstance(o["status"], int) and isinstance(o["bytes"], int)
                          and isinstance(o["stage_ms"], dict) for o in access), access[:2]


def test_log_access_off_writes_no_line_per_request(make_stack):
    s = make_stack(workers=1, extra_args=["--set", "log.access=off"])
    c = s.client()
    ok = c.get("/w:14/f:png/pillow_hopper.jpg")
    nf = c.get("/w:10/missing-too.jpg")
    assert ok.status == 200 and nf.status == 404
    assert ok.header("x-request-id") and nf.header("x-request-id")
    time.sleep(0.5)
    records = log_records(s, "logfmt")
    assert not [x for x in records if x.get("msg") == "access"], records
    assert not [x for x in records if x.get("request_id") in (ok.header("x-request-id"), nf.header("x-request-id"))]
    assert "missing-too" not in s.kiln_log.read_text()
