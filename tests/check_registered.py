#!/usr/bin/env python3
"""check_registered.py: every named test of a test program that CTest runs test by test is
registered. A program whose CMake registration is `foreach(t NAME...) add_test(... COMMAND prog
${t})` runs only the names listed there, so a test added to the program's NamedTest table (see
tests/testing.h) and not to that list never runs in CI. This finds such tests, and names listed
in CMake that the program does not have.

    usage: python3 tests/check_registered.py SOURCE_DIR
"""
import os
import re
import sys

EXECUTABLE = re.compile(r"add_executable\(\s*(\w+)([^)]*)\)")
FOREACH = re.compile(r"foreach\(\s*(\w+)\s+([^)]*)\)(.*?)endforeach\(\)", re.S)
TABLE = re.compile(r"NamedTest\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\};", re.S)
ENTRY = re.compile(r"\{\s*\"(\w+)\"\s*,\s*\w+\s*\}")


def table_names(paths):
    """The names of the NamedTest tables in the given C files."""
    names = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for table in TABLE.findall(f.read()):
                names.update(ENTRY.findall(table))
    return names


def check_dir(cmake_path):
    """Problems found in one CMakeLists.txt: (program, message) pairs."""
    here = os.path.dirname(cmake_path)
    with open(cmake_path, encoding="utf-8") as f:
        text = f.read()
    sources = {}
    for exe, args in EXECUTABLE.findall(text):
        srcs = [os.path.join(here, a) for a in args.split() if a.endswith(".c")]
        sources[exe] = [s for s in srcs if os.path.exists(s)]
    listed = {}
    for var, items, body in FOREACH.findall(text):
        for exe in re.findall(r"COMMAND\s+(\w+)\s+\$\{%s\}" % var, body):
            listed.setdefault(exe, set()).update(items.split())
    problems = []
    for exe, names in sorted(listed.items()):
        have = table_names(sources.get(exe, []))
        if not have:
            problems.append((exe, "no NamedTest table found in %s" % sources.get(exe)))
            continue
        for n in sorted(have - names):
            problems.append((exe, "test '%s' is in the program but not registered in %s"
                             % (n, cmake_path)))
        for n in sorted(names - have):
            problems.append((exe, "'%s' is registered in %s but the program has no such test"
                             % (n, cmake_path)))
    return problems, len(listed)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    root = os.path.join(sys.argv[1], "tests")
    problems, programs = [], 0
    for d, _, files in sorted(os.walk(root)):
        if "CMakeLists.txt" in files:
            p, n = check_dir(os.path.join(d, "CMakeLists.txt"))
            problems += p
            programs += n
    for exe, msg in problems:
        print("FAIL: %s: %s" % (exe, msg))
    print("%d programs registered test by test, %d problems" % (programs, len(problems)))
    return 1 if problems or programs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
