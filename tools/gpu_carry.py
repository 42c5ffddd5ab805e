"""Prepare ``.gpu/``: what ``benchmarks/gpu.py`` needs on a GPU machine that has no internet.

Run from the repository root, on a machine with ``pip`` access and example-robot-data
installed (the ``test`` extra)::

    python tools/gpu_carry.py            # writes .gpu/pinsite.tgz and .gpu/robots/
    python tools/gpu_carry.py --python 3.12

It writes, into ``.gpu/`` (ignored by git):

* ``pinsite.tgz``: Pinocchio and the libraries it loads, for CPython ``--python`` on
  manylinux x86-64 (downloaded as wheels, installed into a folder, cut to the shared
  libraries that Pinocchio's extension modules load, stripped): about 23 MB instead of the
  wheels' 200 MB;
* ``robots/``: the Panda, Talos and Solo-12 URDFs of the installed example-robot-data, laid
  out as its ``robots/`` folder (``gpu.py --robots``, ``bench_fd_routes.py --robots-dir``).

On the GPU machine, from the copy of the repository (``.gpu`` carried)::

    mkdir -p /tmp/site && tar xzf .gpu/pinsite.tgz -C /tmp/site
    export PYTHONPATH=$PWD:/tmp/site/cmeel.prefix/lib/python3.12/site-packages
    python3 benchmarks/gpu.py --robots .gpu/robots --out $OUT --budget 390
    python3 benchmarks/bench_fd_routes.py --robots solo12,talos --batches 100,1000,10000 \
        --robots-dir .gpu/robots --out $OUT --name fd_routes_gpu

(together about 8 minutes: one ``run`` call within its 10-minute limit).

The GPU machine's own JAX (with CUDA), NumPy, SciPy, optax and matplotlib are used;
spatialjax runs from the source tree.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Pinocchio's wheels and their dependencies (``pip show`` ``Requires-Dist``), pinned to
#: the versions the test extra resolves to
WHEELS = ("pin", "libpinocchio", "coal", "libcoal", "eigenpy", "cmeel", "cmeel-boost",
          "cmeel-urdfdom", "cmeel-console-bridge", "cmeel-tinyxml2", "cmeel-assimp",
          "cmeel-octomap", "cmeel-qhull", "cmeel-zlib")  # fmt: skip
ROBOT_FILES = (
    "panda_description/urdf/panda.urdf",
    "talos_data/robots/talos_reduced.urdf",
    "solo_description/robots/solo12.urdf",
)
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def pinned(name: str) -> str:
    """``name==version`` as installed here, else ``name`` (the newest)."""
    try:
        return f"{name}=={importlib.metadata.version(name)}"
    except importlib.metadata.PackageNotFoundError:
        return name


def loaded_libraries(prefix: Path) -> set[Path]:
    """The shared libraries under ``prefix`` that its Python extension modules load (``ldd``)."""
    env = {"LD_LIBRARY_PATH": f"{prefix / 'lib'}:{prefix / 'lib64'}", "PATH": "/usr/bin:/bin"}
    found = set()
    for ext in prefix.rglob("*.so"):
        if "site-packages" not in ext.parts:
            continue
        out = subprocess.run(["ldd", str(ext)], capture_output=True, text=True, env=env).stdout
        for line in out.splitlines():
            parts = line.split("=>")
            if len(parts) == 2 and str(prefix) in parts[1]:
                found.add(Path(parts[1].split("(")[0].strip()))
    return found


def pinocchio_site(python: str, out: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="gpu_carry_") as tmp:
        wheels, site = Path(tmp) / "wheels", Path(tmp) / "site"
        plat = [a for p in PLATFORMS for a in ("--platform", p)]
        target = ["--python-version", python, "--implementation", "cp", "--only-binary=:all:"]
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *target, *plat,
             "-d", str(wheels), *(pinned(w) for w in WHEELS)])  # fmt: skip
        run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
             "--no-index", "--target", str(site), *target, *plat,
             *map(str, sorted(wheels.glob("*.whl")))])  # fmt: skip
        prefix = site / "cmeel.prefix"
        keep = Path(tmp) / "keep" / "cmeel.prefix"
        py = next((prefix / "lib").glob("python3*"))
        shutil.copytree(py, keep / "lib" / py.name)
        libs = loaded_libraries(prefix) | set((prefix / "lib").glob("libpinocchio*.so"))
        for lib in libs:
            dst = keep / lib.relative_to(prefix)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(lib.resolve(), dst)
        for so in keep.rglob("*.so*"):
            subprocess.run(["strip", "--strip-unneeded", str(so)], check=False)
        for cache in keep.rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
        path = out / "pinsite.tgz"
        with tarfile.open(path, "w:gz") as tar:
            tar.add(keep, arcname="cmeel.prefix")
    return path


def robots(out: Path) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_dynamics  # NumPy only: where example-robot-data keeps its robots/

    src, dst = bench_dynamics.robots_dir(), out / "robots"
    for rel in ROBOT_FILES:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dst / rel)
    return dst


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--python", default="3.12", help="the GPU machine's CPython (major.minor)")
    p.add_argument("--out", default=str(ROOT / ".gpu"))
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tgz = pinocchio_site(a.python, out)
    rob = robots(out)
    size = tgz.stat().st_size / 2**20
    print(f"wrote {tgz} ({size:.1f} MB) and {rob}; carry '.gpu' (run's carry=['.gpu'])")
    return 0


if __name__ == "__main__":
    sys.exit(main())
