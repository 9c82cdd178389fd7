#!/bin/bash
# profile_push: --every 1s --duration 3s --push http://127.0.0.1:PORT on
# tgt_profile split, --service tgtsvc --label env=test --label zone=a,
# against a Pyroscope-like receiver on loopback (below) that saves every
# request and answers the second one 503:
#   exit 0 (a failed push never stops the profiling); 3 POSTs to /ingest;
#   name = tgtsvc{env=test,zone=a}, format=pprof, spyName=vigil,
#   sampleRate=19 (continuous mode's default), from < until, each
#   period's until the next one's from; the 503 is reported on stderr with
#   its status, and the summary says 3 pushes, 1 failed; each body is a
#   gzipped pprof (decoded here, and by go tool pprof -raw when Go is
#   installed) naming hot_a or hot_b, the target's two hot functions (at
#   19 Hz a loaded machine may leave a period 2 or 3 samples, all of them
#   possibly in hot_b's 30 %), and hot_a in one of them at least.
# Then a push to a port nothing listens on: exit 0, every push reported
# failed (HTTP 0), the profile still ends at its duration.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_profile "$truth" split
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

mkdir "$T/got"
"$PYTHON" -S - "$T/got" <<'PY' &
import http.server, os, sys
out = sys.argv[1]
n = 0
class Ingest(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global n
        n += 1
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(f"{out}/{n}.body", "wb") as f:
            f.write(body)
        with open(f"{out}/{n}.req", "w") as f:
            f.write(self.path + "\n" + self.headers.get("Content-Type", "") + "\n")
        self.send_response(503 if n == 2 else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), Ingest)
with open(f"{out}/port.tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(f"{out}/port.tmp", f"{out}/port")
srv.serve_forever()
PY
track_pid $!
for _ in $(seq 50); do [[ -e $T/got/port ]] && break; sleep 0.1; done
[[ -e $T/got/port ]] || harness_error "the receiver did not start"
port=$(cat "$T/got/port")

vg push profile "$pid" --every 1s --duration 3s --push "http://127.0.0.1:$port" \
	--service tgtsvc --label env=test --label zone=a
assert_rc 0
vg_py "$T" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import os, re, sys
from urllib.parse import urlsplit, parse_qs
from profcheck import *
t = sys.argv[1]
err = open(f"{t}/push.err").read()
reqs = sorted(int(n[:-4]) for n in os.listdir(f"{t}/got") if n.endswith(".req"))
eq("POSTs received", [1, 2, 3], reqs)
check("HTTP status 503" in err, f"the 503 is not reported on stderr:\n{err}")
check(re.search(r"; 3 pushes, 1 failed$", err, re.M), f"no '3 pushes, 1 failed' summary:\n{err}")
prev_until, seen_a = None, False
for n in reqs:
    path, ctype = open(f"{t}/got/{n}.req").read().splitlines()[:2]
    u = urlsplit(path)
    q = {k: v[0] for k, v in parse_qs(u.query).items()}
    eq(f"push {n}: path", "/ingest", u.path)
    eq(f"push {n}: name", "tgtsvc{env=test,zone=a}", q.get("name"))
    eq(f"push {n}: format", "pprof", q.get("format"))
    eq(f"push {n}: spyName", "vigil", q.get("spyName"))
    eq(f"push {n}: sampleRate", "19", q.get("sampleRate"))
    fr, un = int(q.get("from", -1)), int(q.get("until", -1))
    check(0 < un - fr <= 2, f"push {n}: from {fr} until {un}: not a period of about 1 s")
    if prev_until is not None:
        eq(f"push {n}: from = the previous push's until", prev_until, fr)
    prev_until = un
    body = open(f"{t}/got/{n}.body", "rb").read()
    pr = pprof_summary(body, f"push {n}")
    hot = {"hot_a", "hot_b"} & set(pr["strings"] if pr else [])
    check(hot, f"push {n}: neither hot_a nor hot_b in the profile's strings")
    check(pr and pr["samples"] > 0, f"push {n}: no samples")
    seen_a = seen_a or "hot_a" in hot
    raw = pprof_raw(f"{t}/got/{n}.body", t, f"push {n}")
    if raw is not None:
        check(any(h in raw for h in hot),
              f"push {n}: go tool pprof -raw shows neither hot_a nor hot_b:\n{raw[:800]}")
check(seen_a, "no push names hot_a, the function of 70 % of the work")
print(f"{len(reqs)} pushes checked")

done()
PY

# Nothing listens on the port the receiver had after it is gone? Use a
# port of our own socket that is bound and never listening.
dead=$("$PYTHON" -S -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
vg dead profile "$pid" --every 1s --duration 2s --push "http://127.0.0.1:$dead" --service tgtsvc
assert_rc 0
grep -q "push to http://127.0.0.1:$dead failed" "$T/dead.err" || { show_last; fail "the failed push is not reported"; }
grep -q "; 2 pushes, 2 failed$" "$T/dead.err" || { show_last; fail "no '2 pushes, 2 failed' summary"; }
grep -q "^# .* samples in 2\.[0-9] s (duration) over 2 periods" "$T/dead.err" || { show_last; fail "the profile did not run its duration"; }
echo "ok"
