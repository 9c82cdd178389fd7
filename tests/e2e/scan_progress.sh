#!/usr/bin/env bash
# scan_progress: long work shows its progress on a terminal and nothing
# elsewhere.  On a pty (script(1)): a 4 GiB snapshot prints "# snapshot:
# X of Y (N%)" lines, a pointer scan "memory read: X" lines, a 2 GiB
# `read --raw` to a file "# read: X of Y (N%)"; the same runs with stderr
# a file print none of them, and the outputs are the same.  4 GiB, not 2:
# a machine that reads 8 GB/s snapshotted 2 GiB in 0.27 s, barely past
# the first 250 ms progress interval, and printed no line.
source "$(dirname "$0")/lib.sh"
command -v script >/dev/null || skip "script(1) is not installed (bsdutils): no pty to test on"

truth=$T/truth
start_target tgt_scan "$truth" 4096
# Writing 4 GiB of zeros takes the target a few seconds.
for ((i = 0; i < 300; i++)); do
	[[ -f $truth ]] && grep -qx "state ready" "$truth" && break
	sleep 0.1
done
wait_truth "$truth" ready
heap=$(truth_get "$truth" heap_block | cut -d' ' -f1)

# on_pty NAME COMMAND: run COMMAND (a shell line) on a pty; its terminal
# output, \r turned into line ends, in $T/NAME.tty.
on_pty() {
	script -qec "$2" /dev/null </dev/null | tr '\r' '\n' >"$T/$1.tty" ||
		{ cat "$T/$1.tty" >&2; fail "$1 on a pty exited with an error"; }
}

on_pty snap "'$VIGIL' scan $TPID --snapshot '$T/a.snap'"
grep -Eq '^# snapshot: [0-9.]+ [KMG]i?B of [0-9.]+ GiB \([0-9]+%\), [0-9.]+ GB/s' "$T/snap.tty" ||
	{ cat "$T/snap.tty" >&2; fail "no progress line for a 4 GiB snapshot on a terminal"; }
grep -q '^# saved to' "$T/snap.tty" || fail "the snapshot's report is missing on the terminal"

on_pty ptr "'$VIGIL' scan $TPID --pointers-to $heap --depth 1"
grep -Eq '^# searching pointer chains to 0x[0-9a-f]+, memory read: [0-9.]+ [KMG]i?B, [0-9.]+ GB/s' "$T/ptr.tty" ||
	{ cat "$T/ptr.tty" >&2; fail "no progress line for a pointer scan of 4 GiB on a terminal"; }

on_pty read "'$VIGIL' read $TPID $heap $((2047 << 20)) --raw > '$T/raw.bin'"
grep -Eq '^# read: [0-9.]+ [KMG]i?B of 2\.0 GiB \([0-9]+%\)' "$T/read.tty" ||
	{ cat "$T/read.tty" >&2; fail "no progress line for a 2 GiB read --raw to a file on a terminal"; }
[[ $(stat -c %s "$T/raw.bin") == $((2047 << 20)) ]] || fail "read --raw wrote $(stat -c %s "$T/raw.bin") bytes"

# Not a terminal: silent.
vg snap_file scan "$TPID" --snapshot "$T/b.snap"
assert_rc 0
vg ptr_file scan "$TPID" --pointers-to "$heap" --depth 1
assert_rc 0
"$VIGIL" read "$TPID" "$heap" $((2047 << 20)) --raw 2>"$T/read_file.err" >/dev/null || fail "read --raw exited $?"
for f in snap_file.err ptr_file.err read_file.err; do
	grep -q 'snapshot:\|memory read:\|# read:\|searching' "$T/$f" &&
		fail "progress written with stderr not a terminal ($f): $(head -c 300 "$T/$f")"
done
echo "PASS: progress lines on a terminal for snapshot, pointer scan and read; none elsewhere"
