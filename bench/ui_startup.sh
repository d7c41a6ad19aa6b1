#!/usr/bin/env bash
# Time from starting `toolgate ui` to its first page served, against
# Python's `http.server` serving a static page from the same machine in
# the same run (a reference for "a process that starts and answers one
# HTTP request"). Target (issue 18): <= 100 ms for toolgate.
#
#   bench/ui_startup.sh [ROUNDS]
#
# Each round starts the process, reads the URL toolgate prints (Python's
# port is chosen up front), and polls until `GET /` answers 200 — for
# toolgate after signing in with the printed token, as a browser does
# (303 with the cookie, then the page). The two alternate, so other load
# on the machine slows both alike. Reported: median and worst per server,
# and the ratio of the medians. Also prints the embedded assets' size
# (target: <= 200 KB).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-20}
cargo build -q --release --locked -p toolgate-cli
TOOLGATE=$PWD/target/release/toolgate
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/ws" "$DIR/home" "$DIR/static"
cp crates/toolgate-ui/assets/index.html "$DIR/static/index.html"
echo "assets: $(cat crates/toolgate-ui/assets/* | wc -c) bytes (index.html, app.js, app.css)"
python3 - "$TOOLGATE" "$DIR" "$ROUNDS" <<'PY'
import http.client, os, socket, statistics, subprocess, sys, time

toolgate, root, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLGATE_")}
env["HOME"] = os.path.join(root, "home")

def get(port, path, cookie=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    headers = {"Cookie": cookie} if cookie else {}
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    r.read()
    return r

def toolgate_once():
    start = time.perf_counter()
    p = subprocess.Popen([toolgate, "ui", "--addr", "127.0.0.1:0"], cwd=os.path.join(root, "ws"),
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = p.stdout.readline().strip()
        port = int(url.split(":")[2].split("/")[0])
        r = get(port, "/?" + url.split("?", 1)[1])
        assert r.status == 303, r.status
        cookie = r.getheader("Set-Cookie").split(";")[0]
        r = get(port, "/", cookie)
        assert r.status == 200, r.status
        return (time.perf_counter() - start) * 1000
    finally:
        p.kill(); p.wait()

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

def python_once():
    port = free_port()
    start = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                          "--directory", os.path.join(root, "static")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                if get(port, "/").status == 200:
                    return (time.perf_counter() - start) * 1000
            except OSError:
                time.sleep(0.001)
    finally:
        p.kill(); p.wait()

t, py = [], []
toolgate_once(); python_once()  # warm the page cache
for _ in range(rounds):
    t.append(toolgate_once()); py.append(python_once())
mt, mp = statistics.median(t), statistics.median(py)
print(f"toolgate ui -> first page:  median {mt:.1f} ms, worst {max(t):.1f} ms ({rounds} rounds; target <= 100 ms)")
print(f"python http.server -> page: median {mp:.1f} ms, worst {max(py):.1f} ms")
print(f"ratio toolgate/python: {mt/mp:.2f}")
PY
