"""Builds the package through CMake, for `pip install .` (pyproject.toml).

The wheel is self-contained: backplane/_C finds backplane/lib/libbackplane.so.0 through an
RPATH relative to itself, and libbackplane its plugins in backplane/lib/backplane/plugins, as
it does in any prefix. Extra CMake arguments come from BACKPLANE_CMAKE_ARGS (for example
"-DBACKPLANE_CUDA=OFF"); CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def run(self):
        temp = Path(self.build_temp).resolve()
        build_dir = temp / "cmake"
        stage = temp / "stage"
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DBACKPLANE_PYTHON=ON",
            "-DBACKPLANE_BUILD_TESTS=OFF",
            "-DBACKPLANE_BUILD_BENCH=OFF",
            "-DBACKPLANE_TORCH=OFF",
            f"-DCMAKE_INSTALL_PREFIX={stage}",
            # The package folder is the prefix's whole runtime: libraries and plugins inside it.
            "-DCMAKE_INSTALL_LIBDIR=backplane/lib",
            "-DBACKPLANE_PYTHON_INSTALL_DIR=.",
        ]
        configure += shlex.split(os.environ.get("BACKPLANE_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        build = ["cmake", "--build", str(build_dir)]
        if "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
            build += ["-j", str(os.cpu_count() or 1)]
        subprocess.run(build, check=True)
        if stage.exists():
            shutil.rmtree(stage)
        subprocess.run(["cmake", "--install", str(build_dir)], check=True)

        # Only the package: not the headers, tools and CMake files that the same install makes
        # for C++ users, nor the links that only the linker uses (libbackplane.so and the
        # fully versioned name; the loader asks for libbackplane.so.0).
        target = Path(self.build_lib) / "backplane"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(stage / "backplane", target, symlinks=False,
                        ignore=shutil.ignore_patterns("cmake", "libbackplane.so",
                                                      "libbackplane.so.*.*"))


setup(
    ext_modules=[Extension("backplane._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Not build/: that is the CMake presets' build folder.
    options={"build": {"build_base": "build-python"}},
)
