#!/usr/bin/env bash
# check.sh N: exit 0 when task N is solved in $OUT/run-N.
d=${OUT:-/tmp/toolgate-tasks}/run-$1; cd "$d" || exit 1
case $1 in
1) grep -q '2\.7\.1' answer.txt ;;
2) python3 tests/test_calc.py | grep -qx ok ;;
3) ! grep -rq get_user src && grep -q 'def fetch_user' src/users.py && grep -q fetch_user src/report.py && (cd src && python3 -c 'import report; assert report.greeting(1) == "hello ada"') ;;
4) grep -qi 'support discounts' TODO.md && grep -qi 'clear error' TODO.md ;;
5) (cd src && python3 -c 'import cli; assert cli.main(["x", "--verbose"]).verbose is True; assert cli.main(["x"]).verbose is False') >/dev/null ;;
esac
