#!/usr/bin/env bash
# demo.sh: a two-minute tour of vigil against a live, busy process.
#
#   scripts/demo.sh [BUILD_DIR]      (default: build; `make demo` calls this)
#
# Starts demo/demo_server (4 worker threads bumping global counters), then
# observes it with vigil without stopping it: its memory map, a global struct,
# a counter that moves between two reads, a read by link-time (static) address,
# the JSON form of the map, and addresses turned into functions and lines. The server is killed on exit, whatever happens.
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

echo
if (( failures > 0 )); then
    echo "demo: $failures vigil command(s) failed" >&2
    exit 1
fi
note "done; stopping demo_server ($pid)"
