#!/usr/bin/env python3
"""Builds Troupe's Debian packages with cpack, checks what each holds and
depends on (dpkg-deb), unpacks them into a scratch root as a host that
installs them would, and uses them: docs/api.md's smallest program built
against the unpacked libtroupe-dev trains here, and on the unpacked
troupe-node, started as its systemd unit would start it.

usage: deb_package_test.py CPACK CMAKE BUILD_DIR SOURCE_DIR TEST_DATA_DIR
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from custom_model_test import docs_program, free_port, run, start_node  # noqa: E402

# What each package must hold (paths as dpkg-deb -c prints them) and a
# dependency it must declare.
EXPECTED = {
    "libtroupe0.1": (["./usr/lib/libtroupe.so.0.1"], "libcaf-core0.17"),
    "libtroupe-dev": (["./usr/include/troupe/troupe.hpp", "./usr/lib/libtroupe.so",
                       "./usr/lib/cmake/Troupe/TroupeConfig.cmake"], "libtroupe0.1 (="),
    "troupe-node": (["./usr/bin/troupe-node", "./usr/bin/troupe-model",
                     "./usr/lib/systemd/system/troupe-node.service"], "libtroupe0.1 (="),
    # Built with CUDA only: the module libtroupe loads for cuda:N.
    "libtroupe-cuda0.1": (["./usr/lib/libtroupe_cuda.so.0.1"], "libtroupe0.1 (="),
}


def field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).strip()


def check_package(deb):
    package = field(deb, "Package")
    if package not in EXPECTED:
        sys.exit(f"FAIL: unexpected package {package} ({deb})")
    paths, dependency = EXPECTED[package]
    contents = [line.split(None, 5)[5] for line in run(["dpkg-deb", "-c", deb]).splitlines()]
    for path in paths:
        if not any(entry == path or entry.startswith(path + " ") for entry in contents):
            sys.exit(f"FAIL: {package} lacks {path}; it holds:\n" + "\n".join(contents))
    for internal in ("actors", "model", "messages", "common"):
        if any(entry.startswith(f"./usr/include/{internal}/") for entry in contents):
            sys.exit(f"FAIL: {package} installs internal headers: include/{internal}")
    depends = field(deb, "Depends")
    if package == "libtroupe0.1" and "cuda" in depends:
        sys.exit(f"FAIL: the runtime library depends on CUDA: Depends: {depends}")
    if dependency not in depends:
        sys.exit(f"FAIL: {package} does not depend on {dependency}: Depends: {depends}")
    print(f"{package}: {len(contents)} entries, Depends: {depends}")
    return package


def check_unit(root):
    with open(os.path.join(root, "usr/lib/systemd/system/troupe-node.service")) as f:
        unit = f.read()
    exec_start = re.search(r"^ExecStart=(\S+)", unit, re.M)
    if not exec_start or exec_start.group(1) != "/usr/bin/troupe-node":
        sys.exit(f"FAIL: the unit does not start /usr/bin/troupe-node:\n{unit}")
    for needed in ("EnvironmentFile=-/etc/default/troupe-node", "WantedBy=multi-user.target"):
        if needed not in unit:
            sys.exit(f"FAIL: the unit lacks {needed}:\n{unit}")


def main():
    cpack, cmake, build_dir, source_dir, data_dir = sys.argv[1:6]
    with tempfile.TemporaryDirectory() as scratch:
        debs = os.path.join(scratch, "debs")
        run([cpack, "-G", "DEB", "-B", debs, "--config",
             os.path.join(build_dir, "CPackConfig.cmake")])
        built = sorted(glob.glob(os.path.join(debs, "*.deb")))
        packages = {check_package(deb) for deb in built}
        wanted = set(EXPECTED)
        if not glob.glob(os.path.join(build_dir, "api", "libtroupe_cuda.so*")):
            wanted.discard("libtroupe-cuda0.1")
        if packages != wanted:
            sys.exit(f"FAIL: cpack made {sorted(packages)}, not {sorted(wanted)}")
        root = os.path.join(scratch, "root")
        for deb in built:
            run(["dpkg-deb", "-x", deb, root])
        check_unit(root)
        prefix = os.path.join(root, "usr")
        docs_program(cmake, source_dir, prefix, scratch, data_dir)
        # The unpacked daemon, as its unit starts it, serves a coordinator.
        port = free_port()
        node = start_node(os.path.join(prefix, "bin", "troupe-node"), port)
        try:
            hello = os.path.join(scratch, "hello", "build", "hello")
            output = run([hello, f"--data-dir={data_dir}", "--epochs=1", "--progress=off",
                          f"--nodes=127.0.0.1:{port}", "--replicas-per-node=1"],
                         cwd=os.path.join(scratch, "hello"))
        finally:
            node.terminate()
            served = node.communicate(timeout=30)[0]
        if "test accuracy" not in output or "accepted coordinator" not in served:
            sys.exit(f"FAIL: the program did not train on the packaged node:\n{output}\n"
                     f"the node printed:\n{served}")
        print("on the packaged troupe-node: " + output.strip().splitlines()[-1])
        print("PASS")


if __name__ == "__main__":
    main()
