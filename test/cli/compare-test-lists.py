#!/usr/bin/env python3
"""Checks that two configured build trees define the same CTest tests.

Used to show that moving the CLI tests into the tables of test/cli/ changed
no test (issue 21); not run in CI. Standard library only.

    python3 test/cli/compare-test-lists.py BEFORE AFTER [--moved OLD=NEW ...]

BEFORE and AFTER are build trees (configured, not necessarily built) or the
saved output of `ctest --show-only=json-v1` in one. For a build tree the
script runs that ctest command itself. CTest gives a test's command only
when its executable exists: in a tree that is configured but not built,
create a placeholder first (the content does not matter, it is never run):

    mkdir -p BUILD/bin && printf '#!/bin/sh\\nexit 1\\n' > BUILD/bin/cudaimagefilters
    chmod +x BUILD/bin/cudaimagefilters

Every test is compared, not only the cli.* ones: its name, command,
working directory and every property (LABELS, FIXTURES_*, DEPENDS,
SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION, ...). The order of the tests and
of the properties does not matter; the backtrace (where in CMake a test was
defined) is ignored. Before comparing, each tree's build directory is
replaced by <build>, and each --moved OLD=NEW replaces the path OLD by NEW
in BEFORE (a file that moved, e.g. a helper script). Exits 0 when the lists
are the same, 1 otherwise.
"""
import argparse
import collections
import json
import os
import subprocess
import sys


def load(path):
    """Returns (tests, build directory or None) of a build tree or a json file."""
    if os.path.isdir(path):
        output = subprocess.run(["ctest", "--show-only=json-v1"], cwd=path, check=True,
                                stdout=subprocess.PIPE).stdout
        return json.loads(output)["tests"], os.path.realpath(path)
    with open(path) as f:
        return json.load(f)["tests"], None


def normalise(value, replacements):
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [normalise(v, replacements) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v, replacements) for k, v in value.items()}
    return value


def canonical(tests, replacements, label):
    """name -> sorted list of the tests of that name, as comparable JSON text."""
    by_name = collections.defaultdict(list)
    missing_command = []
    for test in tests:
        # (the *_NOT_BUILT placeholders of gtest_discover_tests have none)
        if "command" not in test and not test["name"].endswith("_NOT_BUILT"):
            missing_command.append(test["name"])
        entry = {
            "command": normalise(test.get("command"), replacements),
            "properties": {p["name"]: normalise(p["value"], replacements)
                           for p in test.get("properties", [])},
        }
        by_name[test["name"]].append(json.dumps(entry, sort_keys=True))
    if missing_command:
        print(f"{label}: {len(missing_command)} tests without a command "
              f"(executable not found; see the placeholder in --help), e.g. {missing_command[:3]}")
    return {name: sorted(entries) for name, entries in by_name.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", help="build tree or ctest --show-only=json-v1 output")
    parser.add_argument("after", help="build tree or ctest --show-only=json-v1 output")
    parser.add_argument("--before-build", help="BEFORE's build directory (default: BEFORE when a tree)")
    parser.add_argument("--after-build", help="AFTER's build directory (default: AFTER when a tree)")
    parser.add_argument("--moved", action="append", default=[], metavar="OLD=NEW",
                        help="a path that moved: OLD in BEFORE is NEW in AFTER")
    args = parser.parse_args()

    before_tests, before_build = load(args.before)
    after_tests, after_build = load(args.after)
    before_build = args.before_build or before_build
    after_build = args.after_build or after_build
    if not before_build or not after_build:
        parser.error("give --before-build/--after-build for a json file")

    moved = [tuple(m.split("=", 1)) for m in args.moved]
    for old, new in moved:
        print(f"moved: {old} -> {new}")
    before = canonical(before_tests, moved + [(before_build, "<build>")], "before")
    after = canonical(after_tests, [(after_build, "<build>")], "after")

    differences = 0
    for name in sorted(set(before) | set(after)):
        if name not in after:
            print(f"only before: {name}")
        elif name not in before:
            print(f"only after: {name}")
        elif before[name] != after[name]:
            print(f"differs: {name}\n  before: {before[name]}\n  after:  {after[name]}")
        else:
            continue
        differences += 1

    def count(tests, prefix=""):
        return sum(1 for t in tests if t["name"].startswith(prefix))
    print(f"before: {count(before_tests)} tests ({count(before_tests, 'cli.')} cli.*), "
          f"after: {count(after_tests)} tests ({count(after_tests, 'cli.')} cli.*)")
    if differences:
        print(f"DIFFERENT: {differences} test names differ")
        return 1
    print("IDENTICAL: same tests, commands, working directories and properties")
    return 0


if __name__ == "__main__":
    sys.exit(main())
