#!/usr/bin/env python3
"""Benchmark: the GEMM libraries the CPU backend could use (not a test).

Builds bench/gemm_libraries.cpp once per library found on this machine and
times the single-precision GEMMs of a GPT-2-style block (projections
forward, input and weight gradients, the LM head, attention's 32 heads one
GEMM per thread) at each --hidden size on --tokens tokens, with --threads OpenMP
threads. Libraries:

* openblas: Debian's OpenMP build of OpenBLAS (libopenblas0-openmp);
* blis:     Debian's OpenMP build of BLIS (libblis-openmp-dev), if present;
* onednn:   Debian's oneDNN (libdnnl-dev), dnnl_sgemm;
* mkl:      Intel MKL from the PyPI wheel `mkl` (GNU OpenMP threading), if
            installed in the venv or found under --mkl-dir.

Prints GFLOP/s per shape and library and, per library, the geometric mean
ratio against OpenBLAS. cmake/LoomCpu.cmake records the choice these
figures made. Never fails on a timing.
"""

import argparse
import math
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "bench" / "gemm_libraries.cpp"
ARCH = "x86_64-linux-gnu"


def mkl_dir(hint):
    """The directory of the MKL wheel's libraries, or None."""
    candidates = [Path(hint)] if hint else []
    data = Path(sysconfig.get_paths()["data"]) / "lib"
    candidates.append(data)
    for d in candidates:
        if (d / "libmkl_core.so.3").exists() or (d / "libmkl_core.so.2").exists():
            return d
    return None


def mkl_link(d):
    version = "3" if (d / "libmkl_core.so.3").exists() else "2"
    return [f"-L{d}", f"-l:libmkl_gf_lp64.so.{version}",
            f"-l:libmkl_gnu_thread.so.{version}", f"-l:libmkl_core.so.{version}",
            f"-Wl,-rpath,{d}"]


def libraries(args):
    found = {}
    # Linked by path, a library still loads by its soname, which Debian's
    # alternatives may point at another build (libopenblas.so.0 at the
    # pthread build, whose threads spin against the OpenMP pool): the rpath
    # makes the loader find the named build first.
    openblas = Path(f"/usr/lib/{ARCH}/openblas-openmp/libopenblas.so.0")
    if openblas.exists():
        found["openblas"] = [str(openblas), f"-Wl,-rpath,{openblas.parent}"]
    blis = Path(f"/usr/lib/{ARCH}/blis-openmp/libblis.so.4")
    if blis.exists():
        found["blis"] = [str(blis), f"-Wl,-rpath,{blis.parent}"]
    if Path("/usr/include/dnnl.h").exists():
        found["onednn"] = ["-DLOOM_BENCH_DNNL", "-ldnnl"]
    d = mkl_dir(args.mkl_dir)
    if d:
        found["mkl"] = mkl_link(d)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", default="256,768",
                        help="comma-separated hidden sizes (default: 256,768)")
    parser.add_argument("--tokens", type=int, default=1024,
                        help="tokens per step: batch x sequence (default 1024)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--seconds", type=float, default=0.5,
                        help="time per shape and library (default 0.5)")
    parser.add_argument("--mkl-dir", help="directory of MKL's libmkl_*.so")
    args = parser.parse_args()

    found = libraries(args)
    if "openblas" not in found:
        sys.exit("error: OpenBLAS (libopenblas0-openmp) is the baseline and is not "
                 "installed; run make build")
    missing = [n for n in ("blis", "onednn", "mkl") if n not in found]
    if missing:
        print(f"not measured (not installed): {', '.join(missing)} "
              "(apt-get install libblis-openmp-dev libdnnl-dev; pip install mkl)")
    cxx = shutil.which("g++") or "c++"
    work = Path(tempfile.mkdtemp(prefix="loom-bench-gemm-"))
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               BLIS_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    binaries = {}
    for name, link in found.items():
        exe = work / f"gemm_{name}"
        defines = [f for f in link if f.startswith("-D")]
        libs = [f for f in link if not f.startswith("-D")]
        subprocess.run([cxx, "-O2", "-fopenmp", *defines, str(SOURCE), *libs,
                        "-o", str(exe)], check=True)
        binaries[name] = exe

    names = list(binaries)
    for hidden in (int(h) for h in args.hidden.split(",") if h):
        results = {}
        for name, exe in binaries.items():
            out = subprocess.run([str(exe), str(hidden), str(args.tokens),
                                  str(args.seconds)], check=True, capture_output=True,
                                 text=True, env=env).stdout
            for row in out.splitlines():
                shape, m, n, k, ta, tb, threaded, gflops = row.split()
                key = (shape, f"{m}x{n}x{k}" + (" TA" if ta == "1" else "")
                       + (" TB" if tb == "1" else "")
                       + ("" if threaded == "1" else " 1 thread each"))
                results.setdefault(key, {})[name] = float(gflops)
        print(f"\nGEMMs of a GPT-2-style step, hidden {hidden}, {args.tokens} tokens, "
              f"{args.threads} threads: GFLOP/s")
        print(f"  {'shape':<12} {'M x N x K':<32}" + "".join(f"{n:>10}" for n in names))
        for (shape, dims), row in results.items():
            print(f"  {shape:<12} {dims:<32}"
                  + "".join(f"{row.get(n, float('nan')):10.1f}" for n in names))
        print(f"  {'geomean ratio vs openblas':<45}" + "".join(
            f"{math.exp(sum(math.log(r[n] / r['openblas']) for r in results.values()) / len(results)):9.2f}x"
            for n in names))


if __name__ == "__main__":
    main()
