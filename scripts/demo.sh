#!/usr/bin/env bash
# demo.sh: a two-minute tour of vigil against a live, busy process.
#
#   scripts/demo.sh [BUILD_DIR]      (default: build; `make demo` calls this)
#
# Starts demo/demo_server (4 worker threads bumping global counters, one of
# them with a bug that corrupts g_config.port on a config reload, which the
# demo asks for with SIGHUP), then observes it with vigil
# without stopping it: its memory map, a global struct, a counter that moves
# between two reads, a read by link-time (static) address, the JSON form of
# the map, addresses turned into functions and lines, where the port number
# lives (vigil scan), who writes g_config.port (vigil watch: the culprit's
# source line), and where the CPU goes (vigil profile: a table, and a flame
# graph written to demo/flamegraph.svg), and how often and how long the
# request handler runs (vigil probe: exact counts, a latency histogram).  Where hardware
# breakpoints never fire (some VMs; vigil watch exits 3 and says so), the
# watch is rerun with the trap emulated by a uprobe right after the buggy
# store (VIGIL_WATCH_EMULATE_TRAPS, src/watch/watch.h), labelled as such.
# The server is killed on exit, whatever happens.
#
# Each step that tells a state waits for it first (the port intact, the
# reload logged, the port broken), with a timeout and a clear failure, so the
# story is the same on every run and machine.  DEMO_SVG=FILE writes the
# flame graph there instead of demo/flamegraph.svg (the e2e test does).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
vigil=$build/vigil
server=$build/demo/demo_server

for f in "$vigil" "$server"; do
    if [[ ! -x $f ]]; then
        echo "demo: $f not found; build first (make, or ninja -C ${1:-build})" >&2
        exit 1
    fi
done

tmp=$(mktemp -d)
pid=
cleanup() {
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bold=; dim=; off=
if [[ -t 1 ]]; then bold=$'\e[1m'; dim=$'\e[2m'; off=$'\e[0m'; fi

heading() { printf '\n%s== %s ==%s\n' "$bold" "$*" "$off"; }
note() { printf '%s# %s%s\n' "$dim" "$*" "$off"; }

failures=0
# run ARGS...: show the command as a user would type it, then run it.
run() {
    printf '%s$ vigil %s%s\n' "$bold" "$*" "$off"
    local rc=0
    "$vigil" "$@" || rc=$?
    if (( rc != 0 )); then
        echo "demo: 'vigil $*' exited with $rc" >&2
        failures=$((failures + 1))
    fi
}

# ---- start the target ------------------------------------------------------
"$server" >"$tmp/server.out" 2>&1 &
pid=$!
for _ in $(seq 100); do
    grep -qx ready "$tmp/server.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/server.out" >&2; echo "demo: demo_server died" >&2; exit 1; }
    sleep 0.05
done
grep -qx ready "$tmp/server.out" || { echo "demo: demo_server not ready after 5 s" >&2; exit 1; }

static_of() { awk -v s="$1" '$1 == s { print $3 }' "$tmp/server.out"; }   # -> @0x....
port_now() { "$vigil" read "$pid" g_config+32 --as i32 2>/dev/null | awk '$2 == "i32" { print $3 }' || true; }
# wait_until WHAT SECONDS COMMAND...: poll COMMAND until it succeeds; else
# the demo stops, saying which state never came.
wait_until() {
    local what=$1 secs=$2 i
    shift 2
    for (( i = 0; i < secs * 20; i++ )); do
        "$@" && return 0
        kill -0 "$pid" 2>/dev/null || { echo "demo: demo_server died while waiting for $what" >&2; exit 1; }
        sleep 0.05
    done
    echo "demo: $what did not happen within $secs s; the story below would be wrong, stopping" >&2
    exit 1
}
port_at_start=$(port_now)
# Step 7 narrows this first scan, taken while the port is intact: the bug
# strikes only after the reload step 7 asks for.
[[ $port_at_start == 8080 ]] || { echo "demo: g_config.port reads '$port_at_start' at start, not 8080" >&2; exit 1; }
scan_first=(scan "$pid" 8080 --type i32 --aligned --save "$tmp/port.set")
"$vigil" "${scan_first[@]}" >"$tmp/scan_first.out" 2>&1 || true
cfg_static=$(static_of g_config)
maxc_static=$(static_of g_config.max_clients)

heading "The target"
note "demo_server: 4 threads \"serving requests\"; it printed its globals' addresses:"
sed 's/^/    /' "$tmp/server.out" | grep -v '^    ready$'

heading "1. The memory map (like /proc/$pid/maps, with images resolved)"
run maps "$pid"

heading "2. A global struct by symbol name"
note "struct config { char name[32]; int port; int max_clients; double timeout_s; } g_config"
note "48 bytes as a hex dump:"
run read "$pid" g_config 48
note "typed fields by SYMBOL+OFFSET and --as: name (char[32]) at +0, port at +32, timeout_s at +40"
run read "$pid" g_config 32 --as str
run read "$pid" g_config+32 --as i32
run read "$pid" g_config+40 --as f64

heading "3. A counter that moves: read it twice, one second apart"
note "the workers increment g_requests_served on every request; vigil never stops them"
run read "$pid" g_requests_served --as u64
sleep 1
run read "$pid" g_requests_served --as u64

heading "4. By link-time (static) address in the main executable"
note "@0x... is the address as in the ELF file (nm, objdump); vigil adds the load bias"
note "g_config.max_clients is $maxc_static (the workers retune it now and then):"
run read "$pid" "$maxc_static" --as i32
note "the whole of g_config by its static address $cfg_static: the same memory as in step 2"
note "(max_clients, at offset 0x24, may have changed in between: the process kept running)"
run read "$pid" "$cfg_static" 48

heading "5. Machine-readable: the map as JSON (first lines)"
printf '%s$ vigil maps %s --json | head -n 25%s\n' "$bold" "$pid" "$off"
rc=0
"$vigil" maps "$pid" --json >"$tmp/maps.json" || rc=$?
head -n 25 "$tmp/maps.json"
if (( rc != 0 )); then
    echo "demo: 'vigil maps $pid --json' exited with $rc" >&2
    failures=$((failures + 1))
fi

heading "6. Addresses to code: function, inline frames, file:line"
note "a symbol of the server, with its source line (DWARF in the binary):"
run sym "$pid" worker
# /proc/TID/syscall ends with the user PC of a thread blocked in a syscall.
pcs=()
for task in /proc/"$pid"/task/*; do
    pc=$(awk '$1 != "running" { print $NF }' "$task/syscall" 2>/dev/null || true)
    [[ $pc == 0x* ]] && pcs+=("$pc")
done
if (( ${#pcs[@]} > 0 )); then
    note "where each thread is now: its user PC from /proc/$pid/task/TID/syscall, in libc"
    note "(debug info from /usr/lib/debug/.build-id when libc6-dbg is installed)"
    run sym "$pid" "${pcs[@]}"
fi

heading "7. Where does a value live?  A scan of the memory"
note "the server listens on 8080, its log said at start; where in memory is that number?"
note "just after the server started, this scan read every writable region (4-byte aligned,"
note "without stopping it) and saved the matches:"
printf '%s$ vigil %s%s\n' "$bold" "${scan_first[*]}" "$off"
cat "$tmp/scan_first.out"
note "then an operator reloads the server's config, as operators do:"
printf '%s$ kill -HUP %s%s\n' "$bold" "$pid" "$off"
kill -HUP "$pid"
wait_until "the server's \"config reloaded\" log line" 5 grep -qx "config reloaded" "$tmp/server.out"
wait_until "the port changing after the reload" 5 eval '[[ $(port_now) != 8080 ]]'
note "the server logged \"config reloaded\"; since then clients fail to connect."
note "narrow the saved matches to those that changed since the first scan:"
run scan "$pid" --from "$tmp/port.set" --changed

heading "8. Who writes g_config.port?  A watch on the memory"
note "port was initialized to 8080 and no code is meant to change it; read it now:"
run read "$pid" g_config+32 --as i32
[[ -z $port_at_start ]] || note "(vigil read it as $port_at_start just after the server started)"
note "vigil watch arms a hardware data breakpoint on those 4 bytes in every thread, for 2 s,"
note "and names the instruction that wrote, its source line and (--regs) the value written:"
watch_args=(watch "$pid" g_config+32 --len 4 --regs --duration 2000)
printf '%s$ vigil %s%s\n' "$bold" "${watch_args[*]}" "$off"
rc=0
"$vigil" "${watch_args[@]}" >"$tmp/watch.out" 2>"$tmp/watch.err" || rc=$?
cat "$tmp/watch.err" "$tmp/watch.out"
if (( rc == 3 )) && grep -q 'do not fire' "$tmp/watch.err"; then
    # The file offset of the instruction right after the buggy store (the
    # label demo_after_stray_store): where a data breakpoint would trap.
    after=$(nm "$server" | awk '$3 == "demo_after_stray_store" { print $1 }')
    fileoff=
    if [[ -n $after ]]; then
        while read -r _ seg_off seg_va _ seg_fsz _; do      # LOAD Offset VirtAddr PhysAddr FileSiz ...
            if (( 16#$after >= seg_va && 16#$after < seg_va + seg_fsz )); then
                fileoff=$(printf '0x%x' $((16#$after - seg_va + seg_off)))
                break
            fi
        done < <(readelf -lW "$server" | awk '$1 == "LOAD"')
    fi
    echo
    note "This machine cannot trap on data writes: the kernel accepts hardware breakpoints but"
    note "they never fire (a VM that does not pass debug registers through), so vigil refused."
    if [[ -z $fileoff ]]; then
        echo "demo: no label demo_after_stray_store in $server, cannot emulate" >&2
        failures=$((failures + 1))
    else
        heading "8b. The same watch, EMULATED (uprobes; not a hardware watch)"
        note "emulation: a uprobe on the instruction right after the buggy store (demo_after_stray_store,"
        note "file offset $fileoff of demo_server) fires exactly when a breakpoint on that store would,"
        note "with the same IP and registers; the rest of vigil watch is the real path.  It covers the"
        note "threads that exist now only, and reports backend uprobe_emulation."
        emu="$server:$fileoff"
        printf '%s$ VIGIL_WATCH_EMULATE_TRAPS=%s vigil %s%s\n' "$bold" "$emu" "${watch_args[*]}" "$off"
        rc=0
        VIGIL_WATCH_EMULATE_TRAPS=$emu "$vigil" "${watch_args[@]}" >"$tmp/watch.out" || rc=$?
        cat "$tmp/watch.out"
        if (( rc != 0 )); then
            echo "demo: emulated 'vigil ${watch_args[*]}' exited with $rc" >&2
            failures=$((failures + 1))
        fi
    fi
elif (( rc != 0 )); then
    echo "demo: 'vigil ${watch_args[*]}' exited with $rc" >&2
    failures=$((failures + 1))
fi
# The writer sites' source lines, as the report names them ("  site IP FILE:LINE ...").
while read -r _ _ where _; do
    src=${where%:*} line=${where##*:}
    if [[ -f $src && $line =~ ^[0-9]+$ ]]; then
        note "${src##*/}:$line, the line that wrote:"
        printf '    %s\n' "$(sed -n "${line}p" "$src" | sed 's/^ *//')"
    fi
done < <(grep '^  site ' "$tmp/watch.out" 2>/dev/null || true)
note "the culprit: set_server_name() writes the name's terminator one past g_config.name[32],"
note "onto the low byte of port (8080 = 0x1f90 becomes 0x1f00 = 7936): an off-by-one"

heading "9. Where does the time go?  A profile"
note "every thread sampled 999 times per second of CPU for 3 s, user stacks unwound by CFI"
note "(through libc's qsort), each frame symbolized with its inline frames:"
run profile "$pid" --duration 3000 --top 8
svg=${DEMO_SVG:-$root/demo/flamegraph.svg}
note "the same as an interactive flame graph (hover, click to zoom, search):"
run profile "$pid" --duration 3000 --format svg -o "$svg"
[[ -s $svg ]] && note "open $svg in a browser"

heading "10. How often and how long?  A probe on the request handler"
note "a kernel uprobe on handle_request's entry and return, every thread, exact counts;"
note "each call timed (paired per thread) and its callers unwound, for 2 s:"
run probe "$pid" handle_request --latency --stacks --top 2 --duration 2000

echo
if (( failures > 0 )); then
    echo "demo: $failures vigil command(s) failed" >&2
    exit 1
fi
note "done; stopping demo_server ($pid)"
