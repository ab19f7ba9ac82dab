"""Configuration through the real binary: `kiln config check | dump | table | example`, the TOML
file, the refusal of the old INI format, precedence, and the generated key table of docs/configuration.md and the example
file (a test fails when either differs from what the declarations generate)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers import KILN_BIN

REPO = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- config-table:begin -->\n", "<!-- config-table:end -->"


def kiln(*args, env=None, timeout=60):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    environment.update(env or {})
    return subprocess.run([str(KILN_BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=environment)


def test_docs_key_table_is_the_generated_one():
    p = kiln("config", "table")
    assert p.returncode == 0, p.stderr
    doc = (REPO / "docs" / "configuration.md").read_text()
    assert BEGIN in doc and END in doc, "docs/configuration.md lost its config-table markers"
    block = doc.split(BEGIN, 1)[1].split(END, 1)[0]
    assert block == p.stdout, ("docs/configuration.md's key table differs from the declarations: run "
                               "`.build/release/kiln config table --update docs/configuration.md`")


def test_example_file_is_generated_and_checks_ok():
    p = kiln("config", "example")
    assert p.returncode == 0, p.stderr
    assert (REPO / "kiln.example.toml").read_text() == p.stdout, \
        "kiln.example.toml differs from the declarations: run `.build/release/kiln config example > kiln.example.toml`"
    check = kiln("config", "check", REPO / "kiln.example.toml")
    assert check.returncode == 0 and check.stdout.strip() == "ok", (check.stdout, check.stderr)


def test_every_key_is_in_serve_help():
    table = kiln("config", "table").stdout
    keys = re.findall(r"^\| `([a-z0-9_]+\.[a-z0-9_<>]+)`", table, re.M)
    assert len(keys) > 30
    help_text = kiln("serve", "--help").stdout
    missing = [k for k in keys if k not in help_text]
    assert not missing, f"kiln serve --help does not list {missing}"


@pytest.mark.parametrize("text, line, words", [
    ('[server]\nworkers = 2\nbacklog = = 3\n', 3, []),
    ('[server]\nworkers = 2\nwokers = 3\n', 3, ["unknown setting server.wokers"]),
    ('[limits]\n\nmax_pixels = "50m"\n', 3, ["limits.max_pixels", "whole number"]),
    ('[server]\nshutdown_timeout = "10"\n', 2, ["server.shutdown_timeout", "unit"]),
    ('[server]\nsocket_mode = 0o660\n', 2, ["server.socket_mode", "string"]),
    ('[presets]\nbad = "nonsense:1"\n', 2, ["presets.bad"]),
    ('workers = 2\n', 1, ["[server]"]),
])
def test_check_names_the_file_line_and_key(tmp_path, text, line, words):
    conf = tmp_path / "kiln.toml"
    conf.write_text(text)
    p = kiln("config", "check", conf)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert f"{conf}:{line}" in lines[0], lines[0]
    for w in words:
        assert w in lines[0], lines[0]


def test_old_ini_files_are_refused_with_what_to_write(tmp_path):
    conf = tmp_path / "kiln.conf"
    conf.write_text("[server]\nworkers = 4          # comment\nlisten = unix:/tmp/kiln.sock\n")
    for args in (["config", "check", conf], ["cache", "stats", "--config", conf]):
        p = kiln(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert "old INI format" in p.stderr and 'listen = "unix:/tmp/kiln.sock"' in p.stderr, p.stderr
        assert f"{conf}:3" in p.stderr, p.stderr


def test_a_quoted_hash_is_not_a_comment(tmp_path):
    conf = tmp_path / "kiln.toml"
    conf.write_text('[http]\ncache_control = "public, max-age=60 # kept"  # a comment\n')
    p = kiln("config", "dump", "--config", conf)
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if l.startswith("http.cache_control "))
    assert '"public, max-age=60 # kept"' in line and f"file {conf}:2" in line, line


def test_dump_shows_values_and_origins_with_precedence(tmp_path):
    conf = tmp_path / "kiln.toml"
    conf.write_text('[server]\nbacklog = 100\nmax_requests = 5\nworkers = 3\n[limits]\nmax_pixels = 1_000_000\n'
                    '[presets]\navatar = "rs:96:96:fill"\n')
    p = kiln("config", "dump", "--config", conf, "--set", "server.max_requests=7", "--workers", "2",
             "--set", "server.workers=4",
             env={"KILN_SERVER_MAX_REQUESTS": "6", "KILN_LIMITS_MAX_PIXELS": "2_000_000"})
    assert p.returncode == 0, p.stderr
    rows = {}
    for l in p.stdout.splitlines():
        key, rest = l.split(" = ", 1)
        value, origin = rest.split("  # ", 1)
        rows[key.strip()] = (value.strip(), origin.strip())
    assert rows["server.backlog"] == ("100", f"file {conf}:2")                        # file over default
    assert rows["limits.max_pixels"] == ("2_000_000", "environment KILN_LIMITS_MAX_PIXELS")  # env over file
    assert rows["server.max_requests"] == ("7", "flag --set")                      # flag over env
    assert rows["server.workers"] == ("2", "flag --workers")                       # named flag over --set
    assert rows["cache.store"] == ('"final"', "default")
    assert rows["presets.avatar"] == ('"rs:96:96:fill"', f"file {conf}:8")
    assert len(rows) == len(re.findall(r"^\| `[a-z0-9_]+\.[a-z0-9_]+`", kiln("config", "table").stdout, re.M)) + 1


def test_units_are_checked_the_same_in_every_layer(tmp_path):
    ok = kiln("config", "dump", "--set", "limits.max_file_bytes=10MiB", "--set", "cache.memory_ttl=90s",
              env={"KILN_CACHE_DISK_SIZE_LIMIT": "2GB"})
    assert ok.returncode == 0, ok.stderr
    for args, env, key in [(["--set", "limits.max_pixels=50m"], {}, "limits.max_pixels"),
                           ([], {"KILN_CACHE_MEMORY_TTL": "600"}, "cache.memory_ttl"),
                           (["--set", "cache.disk_size_limit=1G"], {}, "cache.disk_size_limit")]:
        p = kiln("config", "dump", *args, env=env)
        assert p.returncode == 2 and key in p.stderr, (args, env, p.stderr)


def test_check_runs_what_start_and_reload_run(tmp_path):
    """Issue 41: `kiln config check` said ok for a missing watermark file, which the reload then
    refused. It now reads and decodes every configured file as start does; a root that is not a
    folder on this machine is a note, and the rest is still checked."""
    mark = REPO.parent / "shared" / "corpus" / "pillow_transparent.webp"
    cases = [
        (f'[watermarks]\nlogo = "{tmp_path}/missing.png"\n', 2, "watermarks.logo"),
        (f'[fallback]\nimage = "{tmp_path}/missing.png"\n', 2, "fallback.image"),
        (f'[presets]\navatar = "rs:96:96:fill"\n[watermarks]\nlogo = "{mark}"\n', 0, ""),
    ]
    for text, status, key in cases:
        conf = tmp_path / "kiln.toml"
        conf.write_text(f'[source]\nroot = "{tmp_path / "no-such-root"}"\n' + text)
        p = kiln("config", "check", conf)
        assert p.returncode == status, (text, p.stdout, p.stderr)
        assert "note: source.root" in p.stdout and "is not a folder here" in p.stdout, p.stdout
        if status:
            assert key in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
        else:
            assert p.stdout.strip().endswith("ok"), p.stdout
