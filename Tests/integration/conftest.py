"""Session fixtures: the test root, one kiln + nginx stack shared by most tests, and a factory
for separate stacks (process-model tests that stop or reconfigure kiln).

Builds nothing: scripts/test runs `swift build -c release` first. KILN_BIN overrides the
binary (default .build/release/kiln); KILN_SHARED overrides where shared/ is (default
<repo>/../shared).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

import helpers
import hostfleet
from helpers import SetupError
from hostfleet import distribution, fleet  # noqa: F401 (the test_hosts_*.py files' one fleet)
from stack import KilnStack


@pytest.fixture(scope="session", autouse=True)
def environment_ok() -> None:
    """Every test needs the shared corpus and bench images, the binary and nginx: a missing one
    fails every test with the reason (never a skip)."""
    try:
        helpers.check_environment()
    except SetupError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def root(environment_ok) -> Path:
    """Copies of the corpus and bench images plus the folders and symlinks of build_root."""
    base = Path(tempfile.mkdtemp(prefix="kiln-it-root-", dir=os.environ.get("TMPDIR", "/tmp")))
    os.chmod(base, 0o755)
    r = helpers.build_root(base / "root")
    yield r
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def stack(root):
    """kiln serve (2 workers, unix socket mode 0666) behind nginx on a free port. On teardown,
    SIGTERM; the master must exit with status 0."""
    s = KilnStack(root=root, workers=2, extra_args=[
        "--set", "presets.thumb=rs:50:50:fill/f:png",
        "--set", "presets.avatar=rs:96:96:fill/circle/f:png"])
    try:
        s.start()
    except SetupError as e:
        s.stop(check=False)
        pytest.fail(str(e), pytrace=False)
    yield s
    try:
        code = s.stop()
        assert code == 0, f"kiln master exited with {code} after SIGTERM\n{s.logs()}"
    finally:
        s.cleanup()


@pytest.fixture
def client(stack):
    return stack.client()


@pytest.fixture
def make_stack(root):
    """Starts separate stacks for tests that stop, kill or reconfigure kiln; stops them after."""
    made: list[KilnStack] = []

    def factory(**kw) -> KilnStack:
        kw.setdefault("root", root)
        s = KilnStack(**kw)
        made.append(s)
        try:
            return s.start()
        except SetupError as e:
            pytest.fail(str(e), pytrace=False)

    yield factory
    for s in made:
        s.stop(check=False)
        s.cleanup()


def pytest_runtest_teardown(item, nextitem):
    """The fleet of test_hosts_*.py stops after its last test, not at the end of the session."""
    hostfleet.close_after_last_use(item, nextitem)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, attach the tails of the kiln and nginx logs to the report."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and rep.when in ("call", "teardown"):
        for name in ("stack",):
            s = item.funcargs.get(name) if hasattr(item, "funcargs") else None
            if isinstance(s, KilnStack):
                rep.sections.append((f"logs of the {name} fixture", s.logs()))


@pytest.fixture
def disk(tmp_path) -> Path:
    """An empty cache folder in a 0755 per-test folder (nginx's and kiln's workers reach it)."""
    d = tmp_path / "cache"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    return d
