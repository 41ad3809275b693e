"""framekit.h as a C program sees it: compiled with -Werror against the header the package
ships, linked with its library, every function called."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import framekit
from framekit import _capi

from conftest import FIXTURES


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_every_function_from_c(tmp_path: Path) -> None:
    package = Path(framekit.__file__).resolve().parent
    library = Path(_capi._library_path())
    program = tmp_path / "capi_check"
    subprocess.run(
        ["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(package / "include"),
         str(Path(__file__).with_name("capi_check.c")), str(library), f"-Wl,-rpath,{library.parent}", "-o", str(program)],
        check=True,
    )
    result = subprocess.run(
        [str(program), str(package / "models" / "centerface.onnx"), str(FIXTURES / "astronaut.jpg")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "capi_check: ok" in result.stdout


def test_the_library_carries_its_swift_runtime() -> None:
    """The wheel's library needs no Swift toolchain: nothing it loads comes from one."""
    ldd = subprocess.run(["ldd", _capi._library_path()], capture_output=True, text=True, check=True).stdout
    assert "not found" not in ldd, ldd
    assert "libswiftCore" not in ldd and "libFoundation" not in ldd, ldd


def test_versions_agree() -> None:
    assert _capi.lib.fk_api_version() == _capi.API_VERSION
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    assert f'version = "{framekit.__version__}"' in pyproject.read_text()


def test_xnnpack_runs_on_framekits_thread_pool() -> None:
    """libXNNPACK's pthreadpool calls bind to FrameKit's pool (threads that sleep while they
    wait, Sources/CXNNPack/thread_pool.c), not to libpthreadpool's spinning one: in a library
    loaded by Python, only its exported symbols can win that lookup."""
    import os
    import sys

    program = "import framekit, numpy as np; framekit.FaceDetector().detect(np.zeros((480, 640, 3), np.uint8))"
    result = subprocess.run(
        [sys.executable, "-c", program], env={**os.environ, "LD_DEBUG": "bindings"}, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    bindings = [line for line in result.stderr.splitlines() if "libXNNPACK" in line and "`pthreadpool_" in line]
    assert bindings, "XNNPACK made no pthreadpool call"
    elsewhere = [line for line in bindings if "libFrameKitC.so" not in line.split(" to ")[1]]
    assert elsewhere == []
