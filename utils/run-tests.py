#!/usr/bin/env python3
"""Runs Loom's whole test suite and prints one summary.

Four runners, each writing JUnit XML under build/test-results/:
  lit     test/ (FileCheck tests of ops, passes, tools)
  unit    build/bin/LoomUnitTests (GoogleTest)
  runtime build/bin/LoomRuntimeTests (GoogleTest, the runtime library)
  python  test/python (pytest)
The last line is `loom: N passed, M failed, K skipped`; the exit status is
non-zero when anything failed or a runner could not report.
"""

import argparse
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def count_junit(path):
    """(passed, failed, skipped, names of failed tests) from a JUnit file."""
    tree = ET.parse(path)
    passed = failed = skipped = 0
    failures = []
    for case in tree.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(name)
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.environ.get("LOOM_BUILD_DIR", ROOT / "build"),
                        type=Path, help="the CMake build directory (default: build/)")
    args = parser.parse_args()
    build = args.build_dir.resolve()
    results = build / "test-results"
    results.mkdir(parents=True, exist_ok=True)

    env = dict(os.environ, LOOM_BUILD_DIR=str(build))
    runners = [
        ("lit", results / "lit.xml",
         ["/usr/lib/llvm-22/bin/lit", "-sv", "--xunit-xml-output", str(results / "lit.xml"),
          str(build / "test")]),
        ("unit", results / "unit.xml",
         [str(build / "bin" / "LoomUnitTests"), f"--gtest_output=xml:{results / 'unit.xml'}"]),
        ("runtime", results / "runtime.xml",
         [str(build / "bin" / "LoomRuntimeTests"),
          f"--gtest_output=xml:{results / 'runtime.xml'}"]),
        ("python", results / "python.xml",
         [sys.executable, "-m", "pytest", "-q", "-rs", f"--junitxml={results / 'python.xml'}",
          str(ROOT / "test" / "python")]),
    ]

    total_p = total_f = total_s = 0
    all_failures = []
    summary = []
    for name, xml, cmd in runners:
        print(f"==> {name}: {' '.join(cmd)}", flush=True)
        if xml.exists():
            xml.unlink()
        code = subprocess.call(cmd, cwd=ROOT, env=env)
        if not xml.exists():
            print(f"error: the {name} runner exited with {code} and wrote no report", flush=True)
            total_f += 1
            all_failures.append(f"{name} (runner did not report)")
            summary.append(f"{name}: runner failed")
            continue
        p, f, s, failures = count_junit(xml)
        if code != 0 and f == 0:
            # The runner failed without naming a test (e.g. a collection error).
            f = 1
            failures.append(f"{name} (runner exited with {code})")
        total_p, total_f, total_s = total_p + p, total_f + f, total_s + s
        all_failures += failures
        summary.append(f"{name}: {p} passed, {f} failed, {s} skipped")

    print()
    for line in summary:
        print("  " + line)
    for failure in all_failures:
        print(f"  FAILED {failure}")
    print(f"loom: {total_p} passed, {total_f} failed, {total_s} skipped")
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main())
