"""Bundles libsymc.so into the wheel when it can be found at build time.

Approach: a build_py step copies SYMC_LIB, else <repo>/build/lib/libsymc.so
(relative to this file), into the package as symc/libsymc.so, which
symc._lib finds before anything but SYMC_LIB. Without either, the package
installs without it and finds the library at run time (SYMC_LIB), saying so
if it cannot. A wheel that bundles the library is tagged for the platform
(py3-none-linux_x86_64), since it holds native code. Everything else is in
pyproject.toml.
"""
import os
import pathlib
import shutil

import setuptools
from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithLib(build_py):
    def run(self):
        super().run()
        src = _bundled_lib()
        dst = pathlib.Path(self.build_lib) / "symc" / "libsymc.so"
        if os.path.isfile(src):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            print(f"symc: bundled {src}")
        else:
            if dst.exists():
                dst.unlink()  # a copy an earlier build left in build/: not this wheel's
            print(f"symc: {src} not found; set SYMC_LIB at run time")


def _bundled_lib():
    here = pathlib.Path(__file__).resolve().parent
    return os.environ.get("SYMC_LIB") or str(here.parent.parent / "build" / "lib" / "libsymc.so")


cmdclass = {"build_py": BuildPyWithLib}
try:  # setuptools >= 70.1 has its own; older ones take wheel's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None
if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """A wheel that bundles libsymc.so holds native code: tagged py3-none-<platform> (e.g.
        linux_x86_64), not py3-none-any, so pip never installs it on another platform."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = not os.path.isfile(_bundled_lib())

        def get_tag(self):
            python, abi, plat = super().get_tag()
            return ("py3", "none", plat) if not self.root_is_pure else (python, abi, plat)

    cmdclass["bdist_wheel"] = PlatformWheel

class Distribution(setuptools.Distribution):
    """With the library bundled the package is not pure: its files go to platlib, not purelib."""

    def has_ext_modules(self):
        return os.path.isfile(_bundled_lib())


setup(cmdclass=cmdclass, distclass=Distribution)
