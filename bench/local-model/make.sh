#!/usr/bin/env bash
# Builds a fresh copy of the small project for task $1 in $OUT/run-$1 (a git repository).
set -euo pipefail
d=${OUT:-/tmp/toolgate-tasks}/run-$1; rm -rf "$d"; mkdir -p "$d/src" "$d/tests"; cd "$d"
cat > pyproject.toml <<'T'
[project]
name = "inventory"
version = "2.7.1"
description = "A tiny inventory tool"
T
cat > src/calc.py <<'T'
def add(a, b):
    """Return the sum of a and b."""
    return a - b


def total_price(items):
    # TODO: support discounts
    return sum(i["price"] * i["qty"] for i in items)
T
cat > src/users.py <<'T'
USERS = {1: "ada", 2: "grace"}


def get_user(user_id):
    # TODO: raise a clear error for unknown ids
    return USERS.get(user_id)
T
cat > src/report.py <<'T'
from users import get_user


def greeting(user_id):
    return "hello " + get_user(user_id)
T
cat > src/cli.py <<'T'
import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="inventory")
    parser.add_argument("name")
    args = parser.parse_args(argv)
    print("item:", args.name)
    return args


if __name__ == "__main__":
    main()
T
cat > src/config.py <<'T'
HOST = "127.0.0.1"
PORT = 8472
TIMEOUT = 30
T
cat > tests/test_calc.py <<'T'
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
from calc import add

assert add(2, 3) == 5, "add(2, 3) should be 5"
print("ok")
T
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init
