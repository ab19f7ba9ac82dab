"""The layer rule as a test (issue 35): scripts/check-layers compares every Swift import, C
modules included, with the direct dependencies Package.swift declares. On the tree it passes; on a
copy with deliberate violations (KilnPipeline importing KilnHTTP, which sits above it, and
KilnProcessing importing the TurboJPEG C module it only reaches through nothing) it names each one
and fails. Needs no build: `swift package dump-package` reads the manifest."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check-layers"


def run(package_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(CHECK), "--package-dir", str(package_dir)], capture_output=True, text=True, timeout=300)


def test_the_tree_keeps_its_layers():
    r = run(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all declared in Package.swift" in r.stdout


def test_a_deliberate_violation_is_named(tmp_path):
    copy = tmp_path / "kiln"
    copy.mkdir()
    shutil.copy2(ROOT / "Package.swift", copy / "Package.swift")
    if (ROOT / "Package.resolved").exists():
        shutil.copy2(ROOT / "Package.resolved", copy / "Package.resolved")
    for folder in ("Sources", "Tests"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("*.py", "__pycache__", "Golden"))
    upward = copy / "Sources" / "KilnPipeline" / "Pipeline" / "ImagePipeline.swift"
    upward.write_text("import KilnHTTP\n" + upward.read_text())
    c_module = copy / "Sources" / "KilnProcessing" / "Processors" / "Resize.swift"
    c_module.write_text("@preconcurrency import CTurboJPEG\n" + c_module.read_text())
    r = run(copy)
    print(r.stdout)   # the closing note quotes it
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines == [
        "Sources/KilnPipeline/Pipeline/ImagePipeline.swift:1: KilnPipeline imports KilnHTTP, which Package.swift "
        "does not list as a dependency of KilnPipeline",
        "Sources/KilnProcessing/Processors/Resize.swift:1: KilnProcessing imports CTurboJPEG, which Package.swift "
        "does not list as a dependency of KilnProcessing",
    ], r.stdout
