"""Builds libFrameKitC.so with the Swift toolchain (swift build, the Swift runtime linked in
statically) and puts it and the shipped model into the package: `pip install ./python` from a
checkout, and scripts/build-wheel. The metadata is in pyproject.toml."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # setuptools >= 70 carries it
    from setuptools.command.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
# Its own build folder: the runtime linked in statically means other flags than the CLI's.
SCRATCH = CHECKOUT / ".build" / "python"


def swift_static_libraries() -> Path:
    swift = shutil.which("swift")
    if swift is None:
        raise SystemExit(
            "framekit: building the package needs the Swift toolchain (swift on PATH); "
            "to install without it, use a wheel (scripts/build-wheel on a machine that has it)"
        )
    return Path(swift).resolve().parent.parent / "lib" / "swift_static" / "linux"


def build_library() -> Path:
    if not (CHECKOUT / "Package.swift").is_file():
        raise SystemExit(f"framekit: {CHECKOUT} is not a FrameKit checkout (no Package.swift); build from the repository")
    command = [
        "swift", "build", "-c", "release", "--product", "FrameKitC", "--scratch-path", str(SCRATCH),
        # The Swift runtime and Foundation inside the library: the wheel needs no toolchain.
        "-Xswiftc", "-static-stdlib", "-Xlinker", "-L" + str(swift_static_libraries()),
        # Only framekit.h's functions exported.
        "-Xlinker", "--version-script=" + str(CHECKOUT / "Sources" / "CFrameKitAPI" / "exports.map"),
    ]
    library = SCRATCH / "release" / "libFrameKitC.so"
    # Linked afresh each time: swift build does not see a change to the version script.
    library.unlink(missing_ok=True)
    print("framekit: " + " ".join(command), flush=True)
    subprocess.run(command, cwd=CHECKOUT, check=True)
    return library


class BuildWithLibrary(build_py):
    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "framekit"
        library = build_library()
        (package / "_lib").mkdir(parents=True, exist_ok=True)
        shutil.copy2(library, package / "_lib" / "libFrameKitC.so")
        if os.environ.get("FRAMEKIT_KEEP_SYMBOLS") != "1":
            subprocess.run(["strip", "--strip-debug", str(package / "_lib" / "libFrameKitC.so")], check=True)
        (package / "include").mkdir(exist_ok=True)
        shutil.copy2(CHECKOUT / "Sources" / "CFrameKitAPI" / "include" / "framekit.h", package / "include" / "framekit.h")
        models = package / "models"
        models.mkdir(exist_ok=True)
        shutil.copy2(CHECKOUT / "Models" / "centerface.onnx", models / "centerface.onnx")
        shutil.copy2(CHECKOUT / "Models" / "MANIFEST.json", models / "MANIFEST.json")
        for licence in (CHECKOUT / "Models" / "Licences").iterdir():
            shutil.copy2(licence, models / licence.name)


class BinaryDistribution(Distribution):
    """The package carries a shared library: a platform wheel, not a pure one."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    """Any Python 3 on Linux x86-64 (the library is loaded through ctypes: no CPython ABI)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel})
