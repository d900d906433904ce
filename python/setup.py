"""Build step of the bandsolve Python package: builds libbandsolve with the
Go toolchain into the package (bandsolve/lib/).

Environment:
  BANDSOLVE_LIB         a prebuilt library (file or folder) to use at run
                        time instead: nothing is built.
  BANDSOLVE_BUILD_CUDA  "1": build the CUDA variant too and fail if it
                        cannot be built; "0": do not; unset: try, and go on
                        without it when it cannot be built (no libcuda).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the Go module


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: it is platform-specific."""

    def has_ext_modules(self):
        return True


def go_build(out, tags):
    cmd = ["go", "build", "-buildmode=c-shared", "-trimpath", "-o", str(out)]
    if tags:
        cmd += ["-tags", tags]
    cmd.append("./capi")
    print("bandsolve: " + " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


class BuildWithGo(build_py):
    """build_py that also builds libbandsolve.so (and libbandsolve_cuda.so)."""

    def run(self):
        super().run()
        if os.environ.get("BANDSOLVE_LIB"):
            print("bandsolve: BANDSOLVE_LIB is set: not building the library", file=sys.stderr)
            return
        if shutil.which("go") is None:
            raise SystemExit(
                "bandsolve: the Go toolchain (go) is not on PATH, and it builds libbandsolve. "
                "Install Go (https://go.dev/dl/), or build the library elsewhere "
                "(go build -buildmode=c-shared -o libbandsolve.so ./capi) and set "
                "BANDSOLVE_LIB to its path."
            )
        if not (ROOT / "go.mod").exists() or not (ROOT / "capi").is_dir():
            raise SystemExit(
                f"bandsolve: {ROOT} is not a bandsolve checkout (no go.mod, capi/): "
                "install from the repository's python/ folder, or set BANDSOLVE_LIB."
            )
        libdir = (Path(self.build_lib) / "bandsolve" / "lib").resolve()
        libdir.mkdir(parents=True, exist_ok=True)
        r = go_build(libdir / "libbandsolve.so", "")
        if r.returncode != 0:
            raise SystemExit("bandsolve: go build of libbandsolve failed:\n" + r.stdout + r.stderr)
        want = os.environ.get("BANDSOLVE_BUILD_CUDA", "")
        r = go_build(libdir / "libbandsolve_cuda.so", "cuda") if want != "0" else None
        if r is not None and r.returncode != 0:
            if want == "1":
                raise SystemExit("bandsolve: go build -tags cuda failed:\n" + r.stdout + r.stderr)
            print("bandsolve: the CUDA variant was not built (go build -tags cuda failed; "
                  "set BANDSOLVE_BUILD_CUDA=1 to see why); the package solves on the CPU",
                  file=sys.stderr)
        for h in libdir.glob("*.h"):
            h.unlink()  # cgo's headers: the C header is capi/bandsolve.h


setup(cmdclass={"build_py": BuildWithGo}, distclass=BinaryDistribution)
