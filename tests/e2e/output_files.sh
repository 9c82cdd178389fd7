#!/bin/bash
# output_files: every file vigil writes for the user (scan --save, scan
# --snapshot, profile -o, probe -o) follows one rule (src/util/outfile.h).
#   - A device node (the null device, c 1 3, as root), a FIFO, a symlink (to a
#     regular file, and dangling), a hard-linked file and a directory at
#     the path are refused with exit 2 and one error line, and survive
#     untouched (same inode, type, device number, content); the refusal
#     comes before the observation (a 20 s profile or probe is refused at
#     once), and no temporary file is left behind.
#   - Scan sets and snapshots (the target's memory) are created 0600 under
#     umask 022, also over an existing 0644 file; profile -o is 0644.
#   - A full file system (a 64 KiB tmpfs filled up, in a private mount
#     namespace) is reported as "No space left on device" (exit 1) and the
#     existing file there is kept.
source "$(dirname "$0")/lib.sh"

umask 022
truth=$T/truth
start_target tgt_scan "$truth" 8
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

D=$T/dst
mkdir "$D"
echo keep >"$D/real"
ln -s "$D/real" "$D/symlink"
ln -s "$D/nowhere" "$D/dangling"
echo keep >"$D/orig"
ln "$D/orig" "$D/hardlink"
mkfifo "$D/fifo"
mkdir "$D/dir"
# The null device, but a node of its own: a vigil that fails this test
# must not replace the system's /dev/null (an old one did, as root).  A
# user who cannot mknod cannot replace /dev/null either: it is used then.
if mknod -m 0666 "$D/null" c 1 3 2>/dev/null; then
	null=$D/null
else
	null=/dev/null
fi

# The identity of what is at a path: type, inode, device number, links,
# mode, mtime, and for a regular file its content.
ident() {
	local s
	s=$(stat -c '%F %i %t:%T %h %a' "$1")
	[[ -f $1 ]] && s+=" $(stat -c %Y "$1")"
	[[ -L $1 ]] && s+=" -> $(readlink "$1")"
	[[ -f $1 && ! -L $1 ]] && s+=" [$(cat "$1")]"
	printf '%s\n' "$s"
}

refused() {  # refused NAME PATH WORD ARGS...
	local name=$1 path=$2 word=$3 before after t0 t1
	shift 3
	before=$(ident "$path")
	t0=$(date +%s%N)
	vg "$name" "$@"
	t1=$(date +%s%N)
	assert_rc 2 "$LAST_CMD (path $path)"
	assert_one_error_line
	grep -q "$word" "$T/$name.err" || { show_last; fail "$LAST_CMD: the error does not say '$word'"; }
	after=$(ident "$path")
	assert_eq "$LAST_CMD: what is at $path" "$before" "$after"
	(((t1 - t0) < 5000000000)) || fail "$LAST_CMD: refused only after $(((t1 - t0) / 1000000)) ms (after the run)"
}

n=0
for cmd in save snapshot profile probe; do
	for spec in "$null:character device" "$D/fifo:FIFO" "$D/symlink:symbolic link" \
		"$D/dangling:symbolic link" "$D/hardlink:hard links" "$D/orig:hard links" "$D/dir:directory"; do
		path=${spec%%:*}
		word=${spec#*:}
		n=$((n + 1))
		case $cmd in
		save) refused "r$n" "$path" "$word" scan "$pid" 1 --type i32 --save "$path" ;;
		snapshot) refused "r$n" "$path" "$word" scan "$pid" --snapshot "$path" ;;
		profile) refused "r$n" "$path" "$word" profile "$pid" --duration 20000 -o "$path" ;;
		probe) refused "r$n" "$path" "$word" probe "$pid" main --duration 20000 -o "$path" ;;
		esac
	done
	echo "ok: $cmd: $null (c 1 3), FIFO, symlinks, hard links and a directory refused (exit 2) and untouched"
done
[[ $(cat "$D/real") == keep && $(cat "$D/orig") == keep ]] || fail "a file behind a link changed"
left=$(find "$D" -name '.*' -newer "$D/dir" | head -n 3)
[[ -z $left ]] || fail "temporary files left behind: $left"

# A directory that does not exist: exit 2 before the run, too.
vg nodir profile "$pid" --duration 20000 -o "$D/none/p.txt"
assert_rc 2
assert_one_error_line

# Modes: 0600 for what holds target memory, even over a 0644 file.
echo old >"$D/set"
chmod 0644 "$D/set"
vg save scan "$pid" 1 --type i32 --save "$D/set"
assert_rc 0
assert_eq "mode of the scan set (replacing a 0644 file)" 600 "$(stat -c %a "$D/set")"
vg snap scan "$pid" --snapshot "$D/snap"
assert_rc 0
assert_eq "mode of the snapshot" 600 "$(stat -c %a "$D/snap")"
vg narrow scan "$pid" --from "$D/set" --unchanged --save "$D/set2"
assert_rc 0
assert_eq "mode of the narrowed scan set" 600 "$(stat -c %a "$D/set2")"
echo old >"$D/prof.txt"
vg prof profile "$pid" --duration 200 -o "$D/prof.txt"
assert_rc 0
assert_eq "mode of profile -o" 644 "$(stat -c %a "$D/prof.txt")"
grep -q . "$D/prof.txt" && ! grep -qx old "$D/prof.txt" || fail "profile -o did not replace the old file"
echo "ok: scan sets and snapshots 0600, profile -o 0644, a regular file replaced"

# A full disk says so, and the file already there is kept.
require_mount_namespace
full() {  # full NAME ARGS... (FULL stands for the full directory)
	local name=$1
	shift
	LAST=$name
	LAST_CMD="vigil $* (on a full tmpfs)"
	set +e
	unshare -m --propagation private bash -c '
		F=$1; shift
		mount -t tmpfs -o size=64k vgfull "$F" || exit 99
		echo keep >"$F/out"
		dd if=/dev/zero of="$F/fill" bs=4k 2>/dev/null
		args=(); for a in "$@"; do args+=("${a//FULL/$F}"); done
		"${args[@]}"; rc=$?
		[[ $(cat "$F/out") == keep ]] || { echo "HARNESS: out changed" >&2; exit 98; }
		[[ -z $(find "$F" -name ".*" -newer "$F/fill") ]] || { echo "HARNESS: temporary file left" >&2; exit 97; }
		exit $rc' bash "$T/full" "$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
	set -e
}
mkdir "$T/full"
for c in snapshot profile; do
	case $c in
	snapshot) full "f_$c" scan "$pid" --snapshot FULL/out ;;
	profile) full "f_$c" profile "$pid" --duration 200 -o FULL/out ;;
	esac
	[[ $RC != 99 ]] || skip "cannot mount a tmpfs in a mount namespace: $(cat "$T/f_$c.err")"
	assert_rc 1 "$LAST_CMD"
	grep -q '^vigil: error: .*No space left on device' "$T/f_$c.err" ||
		{ show_last; fail "$LAST_CMD: the error does not say 'No space left on device'"; }
	echo "ok: $c on a full file system: exit 1, ENOSPC, the old file kept"
done

# probe -o: a real run writes its report (where uprobes work).
vg probe_ok probe "$pid" libc.so.6:read --duration 200 -o "$D/probe.json" --json
if [[ $RC == 3 ]]; then
	echo "note: probe not run here: $(head -n1 "$T/probe_ok.err")"
else
	assert_rc 0
	jget "$D/probe.json" 'd["operation"]' | grep -qx live_probe || fail "probe -o: no report in the file"
	echo "ok: probe -o wrote its report"
fi
