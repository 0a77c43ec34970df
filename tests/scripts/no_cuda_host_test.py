#!/usr/bin/env python3
"""One build, any node: installs Troupe into a scratch prefix, builds
docs/api.md's smallest program against it, and runs it, troupe-node and
troupe-model in a mount namespace (unshare -m) where the folders of the
CUDA runtime and cuBLAS are hidden, as on a host without CUDA: libtroupe
does not link them, every program starts and trains on the CPU, and a
cuda:N device is refused with a sentence naming the CUDA module and the
library it misses.

usage: no_cuda_host_test.py CMAKE BUILD_DIR SOURCE_DIR TEST_DATA_DIR
Prints "troupe-test-skipped: ..." (and exits 0) where the build has no CUDA
module or mount namespaces are not permitted.
"""
import glob
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from custom_model_test import docs_program, run  # noqa: E402


def skip(why):
    print(f"troupe-test-skipped: {why}")
    sys.exit(0)


def cuda_folders(module):
    """The real folders of the CUDA libraries the module links."""
    folders = set()
    for line in run(["ldd", module]).splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].startswith(("libcudart", "libcublas")) and parts[2] != "not":
            folders.add(os.path.dirname(os.path.realpath(parts[2])))
    return sorted(folders)


def in_namespace(folders, commands):
    """Runs shell `commands` where tmpfs hides `folders`; returns (code, output)."""
    hide = "; ".join(f"mount -t tmpfs none {shlex.quote(f)}" for f in folders)
    result = subprocess.run(["unshare", "-m", "sh", "-c", f"{hide} && {commands}"],
                            capture_output=True, text=True, timeout=240)
    return result.returncode, result.stdout + result.stderr


def main():
    cmake, build_dir, source_dir, data_dir = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as scratch:
        prefix = os.path.join(scratch, "prefix")
        run([cmake, "--install", build_dir, "--prefix", prefix])
        modules = glob.glob(os.path.join(prefix, "lib*", "libtroupe_cuda.so*"))
        if not modules:
            skip("this build has no CUDA module")
        libtroupe = glob.glob(os.path.join(prefix, "lib*", "libtroupe.so"))[0]
        linked = run(["ldd", libtroupe])
        if "libcuda" in linked or "libcublas" in linked:
            sys.exit(f"FAIL: libtroupe links CUDA's libraries:\n{linked}")
        folders = cuda_folders(modules[0])
        if not folders:
            sys.exit(f"FAIL: no CUDA library found for {modules[0]}")
        probe, said = in_namespace(folders, "true")
        if probe != 0:
            skip(f"no mount namespace here ({said.strip()})")
        docs_program(cmake, source_dir, prefix, scratch, data_dir)
        hello = shlex.quote(os.path.join(scratch, "hello", "build", "hello"))
        data = shlex.quote(data_dir)
        code, output = in_namespace(folders, f"ldd {shlex.quote(modules[0])} | grep 'not found'")
        if code != 0:
            sys.exit(f"FAIL: the CUDA libraries are still found where they are hidden:\n{output}")
        code, output = in_namespace(folders, f"{hello} --data-dir={data} --epochs=1 --progress=off")
        if code != 0 or "test accuracy" not in output:
            sys.exit(f"FAIL: the program did not train without CUDA's libraries:\n{output}")
        print("without CUDA: " + output.strip().splitlines()[-1])
        node = shlex.quote(os.path.join(prefix, "bin", "troupe-node"))
        code, output = in_namespace(folders, f"{node} --help")
        if code != 0 or "Usage" not in output:
            sys.exit(f"FAIL: troupe-node does not start without CUDA's libraries:\n{output}")
        code, output = in_namespace(
            folders, f"{hello} --data-dir={data} --epochs=1 --progress=off --devices=cuda:0")
        wanted = "the CUDA backend (libtroupe_cuda.so"
        if code == 0 or wanted not in output or "libcu" not in output:
            sys.exit(f"FAIL: --devices=cuda:0 without CUDA's libraries was not refused "
                     f"naming the module and the library:\n{output}")
        print("--devices=cuda:0 without CUDA: " + output.strip().splitlines()[-1])
        print("PASS")


if __name__ == "__main__":
    main()
