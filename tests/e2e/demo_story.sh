#!/usr/bin/env bash
# demo_story: `make demo` (scripts/demo.sh), run as a user would but without
# a terminal, tells its story: each step's key lines are there, in order,
# and say what the narration says.  Above all step 7: the first scan finds
# the port at 8080, the narrowed scan after the reload finds it at 7936
# (not "0 matches" under "clients now fail to connect"), and step 8 reads
# 7936 and names set_server_name's line as the writer.
source "$(dirname "$0")/lib.sh"

src=$(cd "$E2E_DIR/../.." && pwd)
build=$(cd "$(dirname "$VIGIL")" && pwd)
[[ -x $build/demo/demo_server ]] || harness_error "$build/demo/demo_server not built"

rc=0
DEMO_SVG=$T/flame.svg "$src/scripts/demo.sh" "$build" >"$T/demo.out" 2>"$T/demo.err" </dev/null || rc=$?
if (( rc != 0 )); then
	tail -n 30 "$T/demo.out" >&2
	cat "$T/demo.err" >&2
	fail "scripts/demo.sh exited $rc"
fi
out=$T/demo.out

# step N: the lines from heading "== N. " to the next heading.
step() { awk -v n="== $1. " 'index($0, n) == 1 { on = 1; print; next } on && /^== / { exit } on' "$out"; }
has() {   # has STEP REGEX WHAT
	step "$1" | grep -Eq -- "$2" || { step "$1" >&2; fail "step $1: $3"; }
}

# Every heading, in order.
headings=$(grep -Eo '^== [0-9]+b?\. ' "$out" | tr -d '=. ' | tr '\n' ' ')
[[ $headings == "1 2 3 4 5 6 7 8 9 10 " || $headings == "1 2 3 4 5 6 7 8 8b 9 10 " ]] ||
	fail "headings '$headings', want 1 to 10 in order"
# Where hardware breakpoints do not fire, step 8 shows vigil's refusal
# (exit 3, "do not fire") and step 8b the emulated watch: that one error
# line is the story; any other is not.
watch_step=8
errs=$(grep 'vigil: error\|demo: ' "$out" || true)
if [[ $headings == *" 8b "* ]]; then
	watch_step=8b
	step 8 | grep -q 'vigil: error: hardware breakpoints do not fire' ||
		fail "step 8b shown, but step 8 does not say that hardware breakpoints do not fire"
	errs=$(grep -v 'vigil: error: hardware breakpoints do not fire' <<<"$errs" || true)
fi
[[ -z $errs ]] || fail "an error in the demo's output: $(head -n1 <<<"$errs")"

has 1 '\[main\]  bias 0x[0-9a-f]+ \(exact\)' "maps names the main image with its exact bias"
has 2 'str  "demo-server"' "g_config.name reads \"demo-server\""
has 2 'i32  8080$' "g_config.port reads 8080 before the reload"
has 2 'f64  2\.5$' "g_config.timeout_s reads 2.5"

mapfile -t served < <(step 3 | awk '$2 == "u64" { print $3 }')
(( ${#served[@]} == 2 )) || fail "step 3: want two reads of g_requests_served, got ${#served[@]}"
(( served[1] > served[0] )) || fail "step 3: the counter did not move: ${served[*]}"

has 5 '"operation":	"maps"' "the JSON map"
has 6 'worker  .*demo_server\.c:[0-9]+' "sym worker names its source line"

# Step 7: the port intact in the first scan, broken after the reload.
s7=$(step 7)
first=$(sed -n '/vigil scan .* 8080 /,/saved to/p' <<<"$s7")
grep -Eq '^0x[0-9a-f]+  8080 .* g_config\.port$' <<<"$first" || { echo "$s7" >&2; fail "step 7: the first scan does not find the port at 8080"; }
after=$(sed -n '/clients fail to connect/,$p' <<<"$s7")
[[ -n $after ]] || { echo "$s7" >&2; fail "step 7: no 'clients fail to connect' narration"; }
grep -q 'config reloaded' <<<"$(sed -n '/kill -HUP/,/clients fail/p' <<<"$s7")" ||
	fail "step 7: the narration does not follow the server's reload"
grep -qx '1 match' <<<"$after" || { echo "$s7" >&2; fail "step 7: the narrowed scan is not '1 match'"; }
grep -Eq '^0x[0-9a-f]+  7936 .* g_config\.port$' <<<"$after" || { echo "$s7" >&2; fail "step 7: the narrowed scan does not show the port at 7936"; }

has 8 'i32  7936$' "g_config.port reads 7936 after the reload"
has "$watch_step" 'site  0x[0-9a-f]+  .*demo_server\.c:[0-9]+  set_server_name  .*exact' "the watch names set_server_name's store"
has "$watch_step" "cfg->name\[n\] = '\\\\0';" "the line that wrote is quoted"

has 9 'handle_request' "the profile names handle_request"
[[ -s $T/flame.svg ]] && grep -q '<svg' "$T/flame.svg" || fail "step 9: no flame graph in DEMO_SVG"
has 10 'handle_request' "the probe names handle_request"
tail -n 1 "$out" | grep -q '^# done; stopping demo_server' || fail "the demo does not end with its closing line"
echo "PASS: the demo's ten steps tell their story (port 8080, reload, 7936, set_server_name)"
