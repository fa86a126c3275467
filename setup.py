# SPDX-License-Identifier: Apache-2.0
"""Builds the `hurray` Python package with this repository's CMake build.

pyproject.toml holds the metadata; this file adds what setuptools cannot declare:
the version (read from CMakeLists.txt, so that `hurray.__version__`, the C++ library's
version and the distribution's agree) and a `build_ext` that configures, builds and
installs the CMake project into a staging folder, then copies into the package:

    hurray/_hurray.*.so        the extension (RPATH $ORIGIN)
    hurray/libhurray*.so.N     the shared libraries it needs, under their SONAMEs
    hurray/bin/hurray          the command-line tool (RPATH $ORIGIN/..), run by
                               `python3 -m hurray` and the `hurray` console script

The system libraries they link (libcurl, libzip, ISA-L, libstdc++) come from the
distribution (Debian 12: libcurl4, libzip4, libisal2): the wheel is for this platform,
not a manylinux wheel.

Environment:
    HURRAY_CMAKE_ARGS        more configure arguments (split like a shell would), e.g.
                             "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DHURRAY_WERROR=ON"
    HURRAY_WHEEL_BUILD_DIR   the CMake build folder (default: build/wheel beside this file)
    CMAKE_BUILD_PARALLEL_LEVEL  compile jobs (default: the number of CPUs)
"""

import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    """The VERSION of `project(hurray ...)` in CMakeLists.txt."""
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    match = re.search(r"project\(\s*hurray\s+VERSION\s+([0-9][0-9.]*)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no `project(hurray VERSION x.y.z)` found")
    return match.group(1)


class CMakeExtension(Extension):
    """The `_hurray` extension, built by CMake rather than by setuptools."""

    def __init__(self, name):
        super().__init__(name, sources=[])


def _soname_copies(folder):
    """(source, name) for each shared library in `folder`, named by its SONAME.

    CMake installs libX.so -> libX.so.SOVERSION -> libX.so.VERSION; the loader looks for
    the SONAME (the middle link), and a wheel stores no links: copy each real file once,
    under the name of the link that is neither the real file nor the bare `.so`.
    """
    out = []
    for link in sorted(folder.glob("lib*.so.*")):
        if link.is_symlink() and link.resolve().is_file():
            out.append((link.resolve(), link.name))
    if not out:
        # Libraries without SOVERSION links: copy what is there.
        out = [(p, p.name) for p in sorted(folder.glob("lib*.so*")) if p.is_file() and not p.is_symlink()]
    return out


class CMakeBuild(build_ext):
    """Configures, builds and installs the CMake project, then copies its parts into
    the package folder of the build (or of the source tree with --inplace)."""

    def build_extension(self, ext):
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("building hurray needs CMake >= 3.25 (Debian: cmake) on PATH")
        build_dir = pathlib.Path(os.environ.get("HURRAY_WHEEL_BUILD_DIR", ROOT / "build" / "wheel"))
        stage = build_dir / "stage"
        if stage.exists():
            shutil.rmtree(stage)
        configure = [
            cmake, "-S", str(ROOT), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_SHARED_LIBS=ON",
            "-DHURRAY_BUILD_PYTHON=ON",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DHURRAY_BUILD_TOOLS=ON",
            "-DHURRAY_BUILD_TESTS=OFF",
            "-DHURRAY_BUILD_BENCH=OFF",
            "-DHURRAY_BUILD_EXAMPLES=OFF",
            "-DHURRAY_BUILD_NET=OFF",
            "-DHURRAY_INSTALL=ON",
            # A user's compiler may warn where GCC 12 does not: warnings stay warnings.
            "-DHURRAY_WERROR=OFF",
            # The package layout: everything in hurray/, the tool in hurray/bin.
            f"-DCMAKE_INSTALL_PREFIX={stage}",
            "-DCMAKE_INSTALL_LIBDIR=hurray",
            "-DCMAKE_INSTALL_BINDIR=hurray/bin",
            "-DHURRAY_PYTHON_INSTALL_DIR=.",
            # Libraries find each other next to themselves.
            "-DCMAKE_INSTALL_RPATH=$ORIGIN",
        ]
        if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("HURRAY_CMAKE_ARGS", ""))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        self.announce(f"hurray: CMake build in {build_dir}", level=2)
        subprocess.run(configure, check=True)
        subprocess.run([cmake, "--build", str(build_dir), "-j", jobs], check=True)
        subprocess.run([cmake, "--install", str(build_dir)], check=True, stdout=subprocess.DEVNULL)

        installed = stage / "hurray"
        extensions = sorted(installed.glob("_hurray*.so"))
        if len(extensions) != 1:
            raise RuntimeError(f"the CMake build installed {len(extensions)} _hurray extensions into {installed}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        package = target.parent
        package.mkdir(parents=True, exist_ok=True)
        shutil.copy2(extensions[0], target)
        for source, name in _soname_copies(installed):
            shutil.copy2(source, package / name)
        tool = stage / "hurray" / "bin" / "hurray"
        if tool.is_file():
            (package / "bin").mkdir(exist_ok=True)
            shutil.copy2(tool, package / "bin" / "hurray")
        # The pure-Python files come from python/hurray through `packages`; the stubs
        # and py.typed through package-data.


setup(
    version=project_version(),
    ext_modules=[CMakeExtension("hurray._hurray")],
    cmdclass={"build_ext": CMakeBuild},
)
