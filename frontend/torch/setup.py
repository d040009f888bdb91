"""Bundles libsymc.so into the wheel when it can be found at build time.

Approach: a build_py step copies SYMC_LIB, else <repo>/build/lib/libsymc.so
(relative to this file), into the package as symc/libsymc.so, which
symc._lib finds before anything but SYMC_LIB. Without either, the package
installs without it and finds the library at run time (SYMC_LIB), saying so
if it cannot. Everything else is in pyproject.toml.
"""
import os
import pathlib
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithLib(build_py):
    def run(self):
        super().run()
        here = pathlib.Path(__file__).resolve().parent
        src = os.environ.get("SYMC_LIB") or str(here.parent.parent / "build" / "lib" / "libsymc.so")
        if os.path.isfile(src):
            dst = pathlib.Path(self.build_lib) / "symc" / "libsymc.so"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            print(f"symc: bundled {src}")
        else:
            print(f"symc: {src} not found; set SYMC_LIB at run time")


setup(cmdclass={"build_py": BuildPyWithLib})
