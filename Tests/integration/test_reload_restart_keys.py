"""SIGHUP and the settings only a restart changes (issue 25, item 6): a changed `server.listen` or
`server.backlog` is kept and the log says so, naming the new value, also when a flag
(`--listen`, as every test stack passes) outranks the file that was edited. Before, that edit
left no line at all."""
from __future__ import annotations

import os
import signal
import time


def wait_for_line(s, text: str, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = s.kiln_log.read_text(errors="replace")
        if text in log:
            return log
        time.sleep(0.05)
    raise AssertionError(f"no line with {text!r} within {timeout} s\n{s.logs()}")


def test_sighup_says_listen_and_backlog_need_a_restart(make_stack, tmp_path):
    conf = tmp_path / "kiln.toml"
    conf.write_text('[server]\nlisten = "unix:/tmp/kiln-file-a.sock"\nbacklog = 200\n')
    s = make_stack(workers=1, with_nginx=False, extra_args=["--config", str(conf)])
    wait_for_line(s, f"listening on unix:{s.sock} mode 0666, backlog 200")
    # The file's listen changes, but --listen decides; the file's backlog decides.
    conf.write_text('[server]\nlisten = "unix:/tmp/kiln-file-b.sock"\nbacklog = 300\n')
    os.kill(s.master_pid, signal.SIGHUP)
    log = wait_for_line(s, "generation 2 started")
    assert ("server.listen changed to unix:/tmp/kiln-file-b.sock in the file or environment, but flag --listen sets "
            f"unix:{s.sock}, which stays") in log, log[-3000:]
    assert (f"server.backlog = 300: listen, backlog, socket_mode, socket_owner and socket_group change only on restart; "
            f"still listening on unix:{s.sock}, backlog 200") in log, log[-3000:]
    # Still there, still serving.
    assert s.sock.exists() and s.kiln.poll() is None
    # A reload that changes nothing of them says nothing of them.
    conf.write_text('[server]\nlisten = "unix:/tmp/kiln-file-b.sock"\nbacklog = 200\n')
    os.kill(s.master_pid, signal.SIGHUP)
    log = wait_for_line(s, "generation 3 started")
    assert log.count("server.listen changed to") == 1 and log.count("change only on restart") == 1, log[-3000:]
