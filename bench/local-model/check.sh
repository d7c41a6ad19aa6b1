#!/usr/bin/env bash
# check.sh N: exit 0 when task N (line N of tasks.txt) is solved in $OUT/run-N.
# Grade 1 (1-5): one named file, a question or one change. Grade 2 (6-10):
# several files or a change that must be designed.
d=${OUT:-/tmp/toolgate-tasks}/run-$1; cd "$d" || exit 1
case $1 in
1) grep -q '2\.7\.1' answer.txt ;;
2) grep -q '8472' answer.txt ;;
3) grep -qx 'TIMEOUT = 60' src/config.py && grep -qx 'PORT = 8472' src/config.py ;;
4) grep -qw '2' answer.txt ;;
5) python3 tests/test_calc.py | grep -qx ok ;;
6) ! grep -rq get_user src && grep -q 'def fetch_user' src/users.py && grep -q fetch_user src/report.py && (cd src && python3 -c 'import report; assert report.greeting(1) == "hello ada"') ;;
7) grep -qi 'support discounts' TODO.md && grep -qi 'clear error' TODO.md ;;
8) (cd src && python3 -c 'import cli; assert cli.main(["x", "--verbose"]).verbose is True; assert cli.main(["x"]).verbose is False') >/dev/null ;;
9) (cd src && python3 -c 'from calc import multiply, add; assert multiply(2, 3) == 6; assert multiply(-1, 4) == -4') ;;
10) git diff --quiet -- src/users.py && (cd src && python3 -c 'import report; assert report.greeting(3) == "hello stranger"; assert report.greeting(1) == "hello ada"') ;;
*) exit 2 ;;
esac
