#!/bin/bash
# json_schema: every kind of JSON document vigil prints validates against
# its schema in docs/json-schema/ (maps.json, read.json, error.json,
# symbolize.json, live_watch.json, live_scan.json, live_profile.json,
# live_probe.json, live_stack.json, version.json; common.json holds the
# shared parts).  The schemas close
# their objects (additionalProperties: false), so a key the code adds
# without documenting it fails here: the documentation stays true.
# Documents come from real targets: maps by text and by PROCMAP_QUERY, a
# deleted library, a TID, a program whose file name is not UTF-8 and holds a
# newline (KEY_hex, name_ambiguous); read with every --as type, arrays, a
# remainder, --bin, each source, a read stopped by an unmapped page; sym on
# a live target (own symbols, libc, the kernel, unmapped and anonymous
# memory, a TID, a deleted library, the odd name, standard input with lines
# that are not addresses) and offline (DWARF with inlining and padding, a
# debuglink, stripped: symtab, dynsym, nothing); watch (live_watch) on an
# idle target and on tgt_watch, which
# stores (register, immediate, lock add, rep movsb, read(2); a followed
# pointer re-pointed twice; an expression of three hops), with hardware
# breakpoints where they fire and
# VIGIL_WATCH_EMULATE_TRAPS (uprobes) where they do not; probe (live_probe)
# on tgt_probe, which calls its functions on SIGUSR1: --per-thread,
# --latency, --args, --stacks, FILE:LINE (two inlined sites), SYMBOL+OFF
# (latency_note, args_note: raw registers), the target exiting mid-probe
# (code_restored null), and a --duration run with no calls; errors of every
# stage; print (tgt_print: every kind of value, hops, unreadable bytes);
# --version.
source "$(dirname "$0")/lib.sh"

SCHEMA_DIR=$(cd "$E2E_DIR/../../docs/json-schema" && pwd) ||
	harness_error "docs/json-schema not found next to tests/e2e"

# jsonschema is not stdlib, and vg_py runs Python with -S (no site-packages):
# use the first interpreter that has it, lib.sh's own first.
SCHEMA_PY=
for py in "$PYTHON" /usr/bin/python3; do
	if [[ -x $py ]] && "$py" -c 'import jsonschema' 2>/dev/null; then
		SCHEMA_PY=$py
		break
	fi
done
[[ -n $SCHEMA_PY ]] ||
	harness_error "python3-jsonschema is not installed: run scripts/install-deps.sh (tried $PYTHON and /usr/bin/python3)"

start_target tgt_globals_pie "$T/pie.truth"
start_target tgt_globals_nonpie "$T/nonpie.truth"
start_target tgt_deleted "$T/del.truth" "$TARGETS/libvgtestlib.so" "$T/libvgcopy.so"
start_target tgt_threads "$T/thr.truth"
# The same program under a file name that is not UTF-8 and holds a newline:
# comm_hex, path_hex, opened_path_hex, image_hex; "\012" in the maps text.
odd=$T/$'vg\xff\nodd'
cp "$TARGETS/tgt_globals_pie" "$odd"
"$odd" "$T/odd.truth" </dev/null &
track_pid $!
wait_truth "$T/pie.truth" ready
wait_truth "$T/nonpie.truth" ready
wait_truth "$T/del.truth" deleted
wait_truth "$T/thr.truth" ready
wait_truth "$T/odd.truth" ready

pid=$(truth_get "$T/pie.truth" pid)
# shellcheck disable=SC2034  # read through ${!p} below
nonpie=$(truth_get "$T/nonpie.truth" pid)
delpid=$(truth_get "$T/del.truth" pid)
thrpid=$(truth_get "$T/thr.truth" pid)
tid=$(truth_get "$T/thr.truth" tid)
oddpid=$(truth_get "$T/odd.truth" pid)
exe=$(truth_sym "$T/pie.truth" vg_magic path)
other_exe=$(truth_sym "$T/nonpie.truth" vg_magic path)
st=$(truth_sym "$T/pie.truth" vg_magic static)
[[ $tid != "$thrpid" ]] || harness_error "thread id equals the pid"

# A pid that names no process: a child that has been reaped.
true &
dead=$!
wait "$dead" || true
[[ ! -e /proc/$dead ]] || harness_error "pid $dead still exists"

# Each run: NAME SCHEMA EXPECTED_EXIT, then vigil's arguments.  Recorded in
# $T/cases for the one Python pass below, one line each (a newline in an
# argument, the odd file name's, written as \n).
: >"$T/cases"
record_case() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$RC" "${LAST_CMD//$'\n'/\\n}" >>"$T/cases"
}
run() {
	local name=$1 schema=$2 want=$3
	shift 3
	vg "$name" "$@"
	assert_rc "$want"
	record_case "$name" "$schema"
}

# run_in NAME SCHEMA EXPECTED_EXIT INPUT_FILE ARGS...  - run with INPUT_FILE on stdin.
run_in() {
	local name=$1 schema=$2 want=$3 input=$4
	shift 4
	LAST=$name
	LAST_CMD="vigil $* <$input"
	set +e
	"$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" <"$input"
	RC=$?
	set -e
	assert_rc "$want"
	record_case "$name" "$schema"
}

# maps: every source, PIE and non-PIE, a deleted library, a TID, odd names.
for src in text query; do
	for p in pid nonpie delpid oddpid; do
		VIGIL_MAPS_SOURCE=$src run "maps_${src}_$p" maps 0 maps "${!p}" --json
	done
done
run maps_default maps 0 maps "$oddpid" --json
run maps_tid maps 0 maps "$tid" --json

# read: every --as type (its own size), arrays, a remainder, str.
while read -r name args; do
	# shellcheck disable=SC2086
	run "read_$name" read 0 read "$pid" $args --json
done <<EOF
u8 vg_magic --as u8
u16 vg_u16 --as u16
u32 vg_magic --as u32
u64 vg_magic --as u64
i8 vg_magic --as i8
i16 vg_u16 --as i16
i32 vg_neg --as i32
i64 vg_neg --as i64
f32 vg_float --as f32
f64 vg_double --as f64
ptr vg_ptr --as ptr
ptr_unmapped vg_magic --as ptr
str vg_text --as str
str_len vg_text 8 --as str
arr_u8 vg_magic 8 --as u8
arr_u32 vg_magic 16 --as u32
arr_i64 vg_magic 16 --as i64
arr_f32 vg_float 8 --as f32
arr_f64 vg_double 16 --as f64
arr_ptr vg_ptr 16 --as ptr
remainder vg_magic 7 --as u16
dump vg_magic
dump_len vg_text 32
symoff vg_magic+4 4
imgsym tgt_globals_pie:vg_magic 8
src_mem vg_magic 8 --source proc_pid_mem
bin vg_magic 8 --bin $exe
EOF
rt=$(truth_sym "$T/pie.truth" vg_magic runtime)
run read_bin_force read 0 read "$pid" "$rt" 8 --bin "$other_exe" --force-bin --json
run read_static read 0 read "$pid" "@$st" 8 --json
run read_runtime read 0 read "$pid" "$rt" 8 --json
run read_tid read 0 read "$tid" vg_magic 8 --json
run read_odd read 0 read "$oddpid" vg_magic 8 --as u64 --json
run read_deleted read 0 read "$delpid" libvgcopy.so:vglib_counter --as u64 --json

# The first page of the executable through the file itself (image_file).
low=$(jget "$T/maps_text_pid.out" '[i["low"] for i in d["images"] if i["is_main"]][0]')
run read_image_file read 0 read "$pid" "$low" 16 --source image_file --json

# A read that runs into an unmapped page stops there: complete false, error.
gap_end=$(jget "$T/maps_text_pid.out" \
	'[r["end"] for r, n in zip(d["regions"], d["regions"][1:]) if r["perms"][0] == "r" and n["start"] != r["end"]][0]')
run read_partial read 2 read "$pid" "$(printf '0x%x' $((gap_end - 8)))" 16 --json
run read_partial_as read 2 read "$pid" "$(printf '0x%x' $((gap_end - 4)))" --as u64 --json
run read_partial_arr read 2 read "$pid" "$(printf '0x%x' $((gap_end - 12)))" 16 --as u32 --json

# sym.  Debug info must come from this machine only (a stripped copy must
# say "no DWARF", not ask a server).
unset DEBUGINFOD_URLS
# A kernel text symbol and one of a module, when /proc/kallsyms shows
# addresses (else the answer says why, and the document is still checked).
ksym=$(awk '$2 ~ /^[tT]$/ && NF == 3 && $1 !~ /^0+$/ { print "0x" $1; exit }' /proc/kallsyms 2>/dev/null) ||
	ksym=
kmod=$(awk '$2 ~ /^[tT]$/ && NF == 4 && $1 !~ /^0+$/ { print "0x" $1; exit }' /proc/kallsyms 2>/dev/null) ||
	kmod=
anon=$(jget "$T/maps_text_pid.out" '[r["start"] for r in d["regions"] if r["kind"] in ("anon", "heap")][0]')
# shellcheck disable=SC2086  # kmod may be empty
run sym_live symbolize 0 sym "$pid" vg_magic main tgt_globals_pie:main+4 "@$st" "$rt" \
	libc.so.6:malloc libc.so.6:malloc+5 "${ksym:-0xffffffff81000000}" $kmod 0x10 "$anon" --json
run sym_no_demangle symbolize 0 sym "$pid" main --no-demangle --json
run sym_tid symbolize 0 sym "$tid" main --json
run sym_deleted symbolize 0 sym "$delpid" libvgcopy.so:vglib_bump --json
run sym_odd symbolize 0 sym "$oddpid" main vg_magic --json
# JIT code named by the process's /tmp/perf-PID.map (source perf-map).
start_target tgt_jit "$T/jit_truth" 600000
wait_truth "$T/jit_truth" ready
jitpid=$(truth_get "$T/jit_truth" pid)
jitmap=$(truth_get "$T/jit_truth" map)
read -r _ jitloop <<<"$(truth_get "$T/jit_truth" hot)"
run sym_jit symbolize 0 sym "$jitpid" "$jitloop" --json
rm -f "$jitmap"
# Standard input: blanks trimmed, blank lines skipped, hex without 0x (as
# perf script prints IPs), lines that are not addresses (one not UTF-8:
# input_hex, error_hex) answered in place, exit 2.
printf 'main\n\n  vg_magic\t\n0xzz\nnosuchsymbol\n0x\xfe\n0x10\n%s\n' "${rt#0x}" >"$T/sym_in"
run_in sym_stdin symbolize 2 "$T/sym_in" sym "$pid" --json

# Offline: every function's middle and end in an -O2 -g program with deep
# inlining (inline chains, padding between functions), through stdin.
inl=$TARGETS/tgt_inline
while read -r a z type _; do
	if [[ $type == [tT] ]]; then
		printf '0x%x\n0x%x\n' $((0x$a + 0x$z / 2)) $((0x$a + 0x$z))
	fi
done < <(nm -S -n --defined-only "$inl" | awk 'NF == 4') >"$T/inl_in"
(($(wc -l <"$T/inl_in") > 100)) || harness_error "nm found too few functions in $inl"
run_in sym_bin_inline symbolize 0 "$T/inl_in" sym --bin "$inl" --json
# The same program's addresses, plain hex as addr2line takes them.
main_st=$(nm "$TARGETS/tgt_globals_pie" | awk '$3 == "main" { print $1 }')
run sym_bin symbolize 0 sym --bin "$TARGETS/tgt_globals_pie" "$main_st" "@$st" 0x1 0x10000000 --json
# Stripped copies: no DWARF (symtab), no .symtab either (dynsym, and an
# address no symbol covers: none), and DWARF through .gnu_debuglink.
strip --strip-debug -o "$T/nodwarf" "$TARGETS/tgt_globals_pie"
run sym_bin_symtab symbolize 0 sym --bin "$T/nodwarf" "$main_st" "$st" --json
strip --strip-all -o "$T/libstripped.so" "$TARGETS/libvgtestlib.so"
lib_bump=$(nm -D --defined-only "$T/libstripped.so" | awk '$3 == "vglib_bump" { print $1 }')
run sym_bin_dynsym symbolize 0 sym --bin "$T/libstripped.so" vglib_bump "$lib_bump" 0x0 --json
mkdir -p "$T/dl"
objcopy --only-keep-debug "$TARGETS/tgt_globals_pie" "$T/dl/pie.debug"
strip --strip-all -o "$T/dl/pie" "$TARGETS/tgt_globals_pie"
(cd "$T/dl" && objcopy --add-gnu-debuglink=pie.debug pie)
run sym_bin_debuglink symbolize 0 sym --bin "$T/dl/pie" "$main_st" --json
# FILE not UTF-8, holding a newline: binary.path_hex, image_hex, why_hex.
strip --strip-debug -o "$odd.nodwarf" "$odd"
run sym_bin_odd symbolize 0 sym --bin "$odd.nodwarf" "$main_st" --json

# Errors at every stage: command line, PID, target, address, --bin.
run err_unknown_command error 2 --json bogus
run err_no_command error 2 --json
run err_help_bogus error 2 --json help bogus
run err_maps_option error 2 maps --bogus "$pid" --json
run err_read_option error 2 read --bogus "$pid" vg_magic --json
run err_maps_pid error 2 maps -p abc --json
run err_maps_name error 4 maps --name "nosuchproc$$" --json
run err_dead_maps error 4 maps "$dead" --json
run err_dead_read error 4 read "$dead" 0x1000 --json
run err_bad_address error 2 read "$pid" 0x10 --json
run err_bad_hex error 2 read "$pid" 0xzz --json
run err_no_symbol error 2 read "$pid" nosuchsymbol --json
run err_bad_type error 2 read "$pid" vg_magic 8 --as u128 --json
run err_bin_mismatch error 2 read "$pid" vg_magic 8 --bin "$other_exe" --json
run err_bin_missing error 2 read "$pid" vg_magic 8 --bin "$T/nosuchfile" --json
VIGIL_MAPS_SOURCE=bogus run err_maps_source error 2 maps "$pid" --json
run err_sym_no_pid error 2 sym --json
run err_sym_option error 2 sym --bogus "$pid" --json
run err_sym_style error 2 sym "$pid" main --style llvm --json
run err_sym_dead error 4 sym "$dead" main --json
run err_sym_bad_hex error 2 sym "$pid" main 0xzz --json
run err_sym_no_symbol error 2 sym "$pid" nosuchsymbol --json
run err_sym_bin_missing error 2 sym --bin "$T/nosuchfile" 0x1 --json
run err_sym_bin_not_elf error 2 sym --bin "$SCHEMA_DIR/common.json" 0x1 --json

# watch.  Hardware breakpoints do not fire on every machine (a VM that does
# not pass the debug registers through): then vigil refuses with exit 3 and
# "do not fire" (error.json), and the reports below come from
# VIGIL_WATCH_EMULATE_TRAPS, uprobes standing in for the breakpoints
# (src/watch/watch.h), which is the same report with backend
# uprobe_emulation.
vg watch_probe watch "$pid" vg_magic --duration 200 --json
if [[ $RC == 0 ]]; then
	record_case watch_probe live_watch
	watch_real=1
elif [[ $RC == 3 ]] && grep -q 'do not fire' "$T/watch_probe.out"; then
	record_case watch_probe error
	watch_real=0
else
	show_last
	fail "watch probe: expected exit 0 (breakpoints fire) or 3 (they do not), got $RC"
fi

# file_offset FILE STATIC  - the file offset of static address STATIC (hex).
file_offset() {
	local st=$(($2))
	readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5 }' |
		while read -r off va filesz; do
			if ((st >= va && st < va + filesz)); then
				printf '0x%x\n' $((st - va + off))
				return
			fi
		done
}
# Emulated on the idle target: a uprobe on main's first instruction, which
# never runs again: a report with no hits.
main_off=$(file_offset "$exe" "0x$main_st")
[[ -n $main_off ]] || harness_error "no file offset for main in $exe"
VIGIL_WATCH_EMULATE_TRAPS="$exe:$main_off" \
	run watch_idle live_watch 0 watch "$pid" vg_magic --len 8 --regs --duration 200 --json

# watch_go NAME TRUTH EMU ARGS...  - vigil watch in the background (EMU:
# VIGIL_WATCH_EMULATE_TRAPS when breakpoints do not fire), SIGUSR1 to the
# tgt_watch target once "# armed:" is on stderr, wait for the report.
watch_go() {
	local name=$1 truth=$2 emu=$3 tp vp i
	shift 3
	tp=$(truth_get "$truth" pid)
	((watch_real)) && emu=
	LAST=$name
	LAST_CMD="${emu:+VIGIL_WATCH_EMULATE_TRAPS=$emu }vigil $*"
	VIGIL_WATCH_EMULATE_TRAPS=$emu "$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null &
	vp=$!
	track_pid "$vp"
	for ((i = 0; i < 1000; i++)); do
		grep -q '^# armed: ' "$T/$name.err" && break
		kill -0 "$vp" 2>/dev/null || break
		sleep 0.01
	done
	grep -q '^# armed: ' "$T/$name.err" || { show_last; fail "$LAST_CMD: no '# armed:' line"; }
	kill -USR1 "$tp"
	set +e
	wait "$vp"
	RC=$?
	set -e
}
# emu TRUTH NAME...  - FILE:OFFSET,... of tgt_watch's labels after the stores NAME.
emu() {
	local truth=$1 n f out=""
	shift
	for n in "$@"; do
		read -r -a f <<<"$(truth_get "$truth" "emu $n")"
		out+="${out:+,}${f[*]:3}:${f[0]}"
	done
	printf '%s\n' "$out"
}
# tgt_watch (tests/targets/tgt_watch.c): every kind of store, and a follow.
start_target tgt_watch "$T/wk.truth" kinds 3
start_target tgt_watch "$T/wf.truth" follow 2 3
start_target tgt_watch "$T/wc.truth" chain 2 2
wait_truth "$T/wk.truth" ready
wait_truth "$T/wf.truth" ready
wait_truth "$T/wc.truth" ready
# g_rbuf (read(2): a kernel write) only with real breakpoints: a
# uprobe cannot stand in for a trap in the kernel.  g_buf's last 8 bytes,
# as watch_kinds.sh watches them: the emulation's uprobe after the
# 64-byte rep movsb sees only where the copy ended, so at the buffer's
# start it could not name the string store that real hardware shows.
rbuf=()
((watch_real)) && rbuf=(g_rbuf)
watch_go watch_kinds "$T/wk.truth" "$(emu "$T/wk.truth" reg imm lock);$(emu "$T/wk.truth" rep)" \
	watch "$(truth_get "$T/wk.truth" pid)" g_cell g_buf+56 "${rbuf[@]}" --regs --stacks --duration 1500 --json
assert_rc 0
record_case watch_kinds live_watch
watch_go watch_follow "$T/wf.truth" "$(emu "$T/wf.truth" repoint);$(emu "$T/wf.truth" leaf)" \
	watch "$(truth_get "$T/wf.truth" pid)" --follow g_ptr+8 --regs --max-samples 2 --duration 1500 --json
assert_rc 0
record_case watch_follow live_watch
# An expression: three hops, the middle one re-pointed; typed values.
watch_go watch_expr "$T/wc.truth" "$(emu "$T/wc.truth" repoint);$(emu "$T/wc.truth" setmid);$(emu "$T/wc.truth" imm);$(emu "$T/wc.truth" val)" \
	watch "$(truth_get "$T/wc.truth" pid)" 'g_head->mid->tail->val' --duration 1500 --json
assert_rc 0
record_case watch_expr live_watch

# watch errors: validation comes before arming, so these need no
# breakpoint that fires.
rt_odd=$(printf '0x%x' $((rt + 1)))
run err_watch_unaligned error 2 watch "$pid" "$rt_odd" --len 4 --json
run err_watch_unmapped error 2 watch "$pid" 0x10 --json
run err_watch_readonly error 2 watch "$pid" main --json
run err_watch_fifth error 2 watch "$pid" vg_magic --follow vg_ptr+0 --follow vg_ptr+0 --json
run err_watch_len error 2 watch "$pid" vg_magic --len 3 --json
run err_watch_dead error 4 watch "$dead" vg_magic --json
run err_watch_no_addr error 2 watch "$pid" --json

# scan: every mode on the PIE target; vg_magic's first 4 bytes as a u32.
magic_hex=$(truth_sym "$T/pie.truth" vg_magic bytes)
magic_u32=$((0x${magic_hex:6:2}${magic_hex:4:2}${magic_hex:2:2}${magic_hex:0:2}))
run scan_first live_scan 0 scan "$pid" "$magic_u32" --type u32 --save "$T/magic.set" --json
run scan_narrow live_scan 0 scan "$pid" --from "$T/magic.set" --unchanged --json
run scan_str live_scan 0 scan "$pid" vigil --type str --regions all --max-list 3 --json
run scan_snapshot live_scan 0 scan "$pid" --snapshot "$T/pie.snap" --json
run scan_snapshot_compare live_scan 0 scan "$pid" --from "$T/pie.snap" --type u32 --aligned --changed --json
run scan_pointers live_scan 0 scan "$pid" --pointers-to vg_magic --depth 2 --json
run err_scan_range error 2 scan "$pid" 300 --type u8 --json
run err_scan_no_type error 2 scan "$pid" 300 --json
run err_scan_dead error 4 scan "$dead" 1 --type i32 --json
run err_scan_other_pid error 2 scan "$nonpie" --from "$T/magic.set" --changed --json

# profile: the idle target (a report with few or no samples is still whole).
run profile_idle live_profile 0 profile "$pid" --duration 200 --json
run profile_fp live_profile 0 profile "$thrpid" --duration 200 --unwind fp --format json
run profile_several live_profile 0 profile -p "$pid,$thrpid" --duration 200 --json
run err_maps_several error 2 maps -p "$pid,$thrpid" --json
run err_profile_dead error 4 profile "$dead" --duration 100 --json
run err_profile_unwind error 2 profile "$pid" --unwind lbr --json

# stack: every thread of the threaded target, one --tid, the proc_syscall
# fallback; a dead PID and a TID of another process.
run stack_all live_stack 0 stack "$thrpid" --json
run stack_tid live_stack 0 stack "$thrpid" --tid "$thrpid" --json
VIGIL_STACK_METHODS=proc_syscall run stack_proc live_stack 0 stack "$thrpid" --json
run err_stack_dead error 4 stack "$dead" --json
run err_stack_tid error 2 stack "$thrpid" --tid 1 --json

# probe: tgt_probe (tests/targets/tgt_probe.c) makes its calls on SIGUSR1.
# Started here, not above: close to the probe runs that use them.

declare -A prpid
for m in count latency args stacks fileline fileoff idle; do
	mode=$m
	[[ $m == count ]] && mode="count 3000"
	[[ $m == fileoff ]] && mode=fileline
	[[ $m == idle ]] && mode="count 10"
	# shellcheck disable=SC2086  # mode is the target's arguments
	start_target tgt_probe "$T/pr_$m.truth" $mode
	prpid[$m]=$TPID
done
start_target tgt_probe "$T/pr_exit.truth" exit 500
prpid[exit]=$TPID
for m in count latency args stacks fileline fileoff idle exit; do
	wait_truth "$T/pr_$m.truth" ready
done
# probe_go NAME MODE SCHEMA EXPECTED_EXIT STOP ARGS...  - vigil ARGS in the
# background, the go (SIGUSR1) to the tgt_probe of MODE once vigil printed
# '# probing', then, once the target says "state done", stopped by STOP
# (int: SIGINT, or wait: by itself); see probecheck.py's run.
probe_go() {
	local name=$1 mode=$2 schema=$3 want=$4 stop=$5
	shift 5
	# shellcheck disable=SC2034  # read by show_last
	LAST=$name
	LAST_CMD="vigil $*"
	"$PYTHON" -S "$E2E_DIR/probecheck.py" run "$name" "$stop" "$T/pr_$mode.truth" "${prpid[$mode]}" "$VIGIL" "$@" ||
		harness_error "probecheck.py run failed"
	RC=$(cat "$T/$name.rc")
	[[ $RC == notarmed ]] && RC=$(cat "$T/$name.rc2")
	assert_rc "$want"
	record_case "$name" "$schema"
}
probe_go probe_count count live_probe 0 int probe "${prpid[count]}" probe_counted --per-thread --json
probe_go probe_latency latency live_probe 0 int probe "${prpid[latency]}" probe_sleep --latency --json
probe_go probe_args args live_probe 0 int probe "${prpid[args]}" probe_args --args 4 --retval --json
probe_go probe_stacks stacks live_probe 0 int probe "${prpid[stacks]}" probe_leaf --stacks --filter "arg0 != 12345" --json
line=$(truth_get "$T/pr_fileline.truth" line)
probe_go probe_fileline fileline live_probe 0 int probe "${prpid[fileline]}" "tgt_probe.c:$line" --json
# An instruction inside a function (the line's site in probe_caller_a): no
# return to time, registers that are not arguments.
inside=$(jget "$T/probe_fileline.out" \
	'[s["function"] + "+" + str(s["function_offset"]) for s in d["locations"][0]["sites"] if s["function_offset"]][0]')
probe_go probe_offset fileoff live_probe 0 int probe "${prpid[fileoff]}" "$inside" --latency --args 2 --json
probe_go probe_exit exit live_probe 0 wait probe "${prpid[exit]}" probe_counted --json
# No go: every option, no call (empty tables, zero latency).
run probe_idle live_probe 0 probe "${prpid[idle]}" probe_counted probe_args --duration 200 \
	--latency --args 2 --stacks --per-thread --json
run err_probe_dead error 4 probe "$dead" probe_counted --json
run err_probe_no_symbol error 2 probe "${prpid[idle]}" nosuchsymbol --json
run err_probe_args error 2 probe "${prpid[idle]}" probe_args --args 9 --json
run err_probe_no_location error 2 probe "${prpid[idle]}" --json
run err_probe_data error 2 probe "${prpid[idle]}" __data_start --json

# Version.
# print: every kind of value, the address chain, an unreadable half, a
# value not read at all (exit 1), and its errors.
start_target tgt_print "$T/print.truth"
wait_truth "$T/print.truth" ready
ppid=$(truth_get "$T/print.truth" pid)
run print_all print 0 print "$ppid" g_config g_table g_num 'g_head->next->next->id' '*g_edge' \
	g_perm_odd g_config.flags_b '&g_table[2]' 'sizeof(struct config)' g_zeros --json
run print_depth print 0 print "$ppid" g_config --depth 0 --max-elements 1 --hex --json
run print_gone print 1 print "$ppid" '*g_gone' --json
run print_bad error 2 print "$ppid" g_config.limtis --json
run print_null error 1 print "$ppid" 'g_head->next->next->next->id' --json
run version version 0 --json --version
run version_short version 0 --json -V

"$SCHEMA_PY" - "$SCHEMA_DIR" "$T/cases" <<'PY'
import copy, json, os, re, sys
from importlib import metadata
from vgcheck import *

try:
    import jsonschema
    from jsonschema import Draft202012Validator as V
except ImportError:
    print("HARNESS ERROR: python3-jsonschema is not installed: run scripts/install-deps.sh",
          file=sys.stderr)
    sys.exit(99)

sdir, cases = sys.argv[1], sys.argv[2]
T = os.environ["T"]
NAMES = ("common", "maps", "read", "symbolize", "live_watch", "live_scan", "live_profile", "live_probe", "live_stack", "error",
         "version", "print")
schemas = {}
for n in NAMES:
    schemas[n] = load_json(f"{sdir}/{n}.json")
    try:
        V.check_schema(schemas[n])
    except jsonschema.exceptions.SchemaError as e:
        fail(f"docs/json-schema/{n}.json is not a valid draft 2020-12 schema: {e.message} "
             f"at {'/'.join(map(str, e.absolute_path))}")
    eq(f"{n}.json: $id", f"https://vigil.invalid/json-schema/{n}.json", schemas[n].get("$id"))
on_disk = sorted(f[:-5] for f in os.listdir(sdir) if f.endswith(".json"))
eq("schema files in docs/json-schema", sorted(NAMES), on_disk)

# Cross-file "$ref"s resolve from memory: jsonschema >= 4.18 through
# referencing, older ones (Debian 12 has 4.10) through RefResolver.
try:
    from referencing import Registry, Resource
    registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in schemas.values()])
    validator = lambda s: V(s, registry=registry)
except ImportError:
    store = {s["$id"]: s for s in schemas.values()}
    validator = lambda s: V(s, resolver=jsonschema.RefResolver.from_schema(s, store=store))
validators = {n: validator(schemas[n]) for n in NAMES if n != "common"}


def resolve(node, here):
    """The schema a local or common.json "$ref" points at."""
    ref = node.get("$ref")
    if ref is None:
        return node
    f, _, ptr = ref.partition("#")
    cur = schemas[f[:-5]] if f else here
    for part in ptr.strip("/").split("/"):
        cur = cur[part]
    return resolve(cur, schemas[f[:-5]] if f else here)


def walk_descriptions(node, here, where):
    """Every property is documented: one line of description, on the
    property or on what its $ref names (the conditions under allOf only
    narrow properties declared and described above them)."""
    if isinstance(node, dict):
        for k, sub in node.get("properties", {}).items():
            d = sub.get("description") or resolve(sub, here).get("description")
            check(isinstance(d, str) and d and "\n" not in d,
                  f"{where}: property {k!r} has no one-line description")
        for k, sub in node.items():
            if k not in ("allOf", "anyOf", "oneOf", "not", "if", "then", "else"):
                walk_descriptions(sub, here, f"{where}/{k}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            walk_descriptions(sub, here, f"{where}/{i}")


for n in NAMES:
    walk_descriptions(schemas[n], schemas[n], f"{n}.json")


def errors(schema, doc):
    return sorted(validators[schema].iter_errors(doc), key=lambda e: list(e.absolute_path))


def addr(v):
    return None if v is None else int(v, 16)


def check_symbolize(cmd, doc):
    """What symbolize.json cannot say: the addresses add up and the inline
    chain has its shape."""
    offline = doc["process"] is None
    for i, r in enumerate(doc["results"]):
        at = f"{cmd}: results[{i}] ({r['input']!r})"
        if r["symbol"] is not None:
            eq_addr(f"{at}: symbol_address + offset", addr(r["address"]),
                    addr(r["symbol_address"]) + addr(r["offset"]))
            size = addr(r["symbol_size"])
            check(size == 0 or addr(r["offset"]) < size,
                  f"{at}: offset {r['offset']} not below symbol_size {r['symbol_size']}")
        if r["nearest_symbol"] is not None:
            check(r["symbol"] is None, f"{at}: nearest_symbol beside a symbol")
        if r["image"] is not None and (offline or r["source"] in ("kallsyms", "perf-map")):
            eq(f"{at}: static_address is the address", r["address"], r["static_address"])
        fr = r["frames"]
        if fr:
            eq(f"{at}: frames[0] is at the address's own line",
               (r["file"], r["line"], r["column"]),
               (fr[0]["file"], fr[0]["line"], fr[0]["column"]))
            want = [True] * (len(fr) - 1) + [bool(r.get("frames_truncated"))]
            eq(f"{at}: inlined, innermost first", want, [f["inlined"] for f in fr])
        if r["file"] is None:
            eq(f"{at}: no line without a file", (0, 0), (r["line"], r["column"]))


def check_log(at, sites, samples, truncated, hits, writes):
    """A timeline and its sites agree with the counts: traps (hits) and
    writes, one sample per write."""
    eq(f"{at}: site traps add up to the traps", hits, sum(s["traps"] for s in sites))
    eq(f"{at}: site hits are its traps", [s["traps"] for s in sites], [s["hits"] for s in sites])
    eq(f"{at}: site writes add up to the writes", writes, sum(s["writes"] for s in sites))
    check(all(s["traps"] >= s["writes"] for s in sites), f"{at}: a site has fewer traps than writes")
    eq(f"{at}: sites by traps", sorted((s["traps"] for s in sites), reverse=True),
       [s["traps"] for s in sites])
    keys = {s["site"] for s in sites}
    check(all(s["site"] in keys for s in samples), f"{at}: every sample names a site")
    if not truncated:
        eq(f"{at}: one sample per write", writes, len(samples))
        eq(f"{at}: sample traps add up to the traps", hits, sum(s["traps"] for s in samples))
    else:
        check(len(samples) < writes, f"{at}: a truncated timeline is shorter than the writes")


def check_live_watch(cmd, doc):
    """What live_watch.json cannot say: counts add up."""
    cov = doc["observation"]["thread_coverage"]
    eq(f"{cmd}: threads_total", len(cov["seeded"]) + len(cov["covered_later"]) + len(cov["not_covered"]),
       cov["threads_total"])
    for i, w in enumerate(doc["watches"]):
        eq(f"{cmd}: watches[{i}]: traps are the accepted hits", w["accepted_hits"], w["traps"])
        check_log(f"{cmd}: watches[{i}]", w["writer_sites"], w["samples"], w["samples_truncated"],
                  w["traps"], w["writes"])
    for i, w in enumerate(doc["dependent_watches"]):
        at = f"{cmd}: dependent_watches[{i}]"
        eq(f"{at}: traps are the accepted hits", w["accepted_hits"], w["traps"])
        check_log(at, w["writer_sites"], w["samples"], w["samples_truncated"], w["traps"], w["writes"])
        check_log(f"{at} (root)", w["root_writer_sites"], w["root_samples"],
                  w["root_samples_truncated"], w["root_hits"], w["root_writes"])
        eq(f"{at}: generation is the last index", len(w["generations"]) - 1, w["generation"])
        eq(f"{at}: generation indexes", list(range(len(w["generations"]))),
           [g["index"] for g in w["generations"]])
        eq(f"{at}: generation hits add up", w["accepted_hits"], sum(g["hits"] for g in w["generations"]))
        eq(f"{at}: binding_state is the last generation's", w["generations"][-1]["binding_state"],
           w["binding_state"])


def check_live_probe(cmd, doc):
    """What live_probe.json cannot say: sites, threads, buckets and stacks
    add up to the counts."""
    for i, l in enumerate(doc["locations"]):
        at = f"{cmd}: locations[{i}] ({l['input']!r})"
        sites = l["sites"]
        eq(f"{at}: calls is the sites' sum", l["calls"], sum(s["calls"] for s in sites))
        eq(f"{at}: runtime_addresses are the sites'", [s["runtime_address"] for s in sites],
           l["runtime_addresses"])
        eq(f"{at}: image and file_offset are the first site's", (sites[0]["image"], sites[0]["file_offset"]),
           (l["image"], l["file_offset"]))
        if l["per_thread"] is not None and doc["observation"]["per_thread_unattributed"] == 0:
            eq(f"{at}: per_thread adds up to calls", l["calls"], sum(t["calls"] for t in l["per_thread"]))
        lat = l["latency"]
        if lat is not None:
            eq(f"{at}: latency histogram adds up to count", lat["count"], sum(b["count"] for b in lat["histogram"]))
            if lat["count"]:
                check(lat["min_ns"] <= lat["p50_ns"] <= lat["p90_ns"] <= lat["p99_ns"] <= lat["max_ns"],
                      f"{at}: latency min <= p50 <= p90 <= p99 <= max")
        for a in l["args"] or []:
            eq(f"{at}: {a['reg']} histogram adds up to count", a["count"], sum(b["count"] for b in a["histogram"]))
            check(sum(t["count"] for t in a["top"]) <= a["count"], f"{at}: {a['reg']} top exceeds count")
        st = l["stacks"]
        if st is not None:
            eq(f"{at}: unwind_stops add up to records", st["records"], sum(st["unwind_stops"].values()))
            check(sum(t["count"] for t in st["top"]) <= st["records"], f"{at}: stacks top exceeds records")
            for k, t in enumerate(st["top"]):
                eq(f"{at}: stacks.top[{k}] starts at the probed instruction", True,
                   t["frames"][0]["address"] in l["runtime_addresses"])


docs = {}
seen = {}
with open(cases, errors="backslashreplace") as f:
    for line in f.read().splitlines():
        name, schema, rc, cmd = line.split("\t")
        doc = load_json(f"{T}/{name}.out")
        docs[name] = doc
        for e in errors(schema, doc)[:5]:
            at = "/".join(map(str, e.absolute_path)) or "(document)"
            check(False, f"{cmd}: not valid against {schema}.json at {at}: {e.message}")
        if schema == "error":
            eq(f"{cmd}: error.exit_code is the exit status", int(rc), doc["error"]["exit_code"])
        seen.setdefault(schema, 0)
        seen[schema] += 1

        # What a schema cannot say: counts and lengths agree.
        if schema == "maps":
            eq(f"{cmd}: region_count", len(doc["regions"]), doc["region_count"])
        if schema == "read":
            eq(f"{cmd}: hex has bytes_read bytes", 2 * doc["bytes_read"], len(doc["hex"]))
            eq(f"{cmd}: complete", doc["bytes_read"] == doc["length"], doc["complete"])
            eq(f"{cmd}: segments cover the bytes read", doc["bytes_read"],
               sum(s["length"] for s in doc["segments"]))
        if schema == "symbolize":
            check_symbolize(cmd, doc)
        if schema == "live_watch":
            check_live_watch(cmd, doc)
        if schema == "live_probe":
            check_live_probe(cmd, doc)

# The documents that carry the rarer keys did carry them (else the schema
# for those keys went untested).
def has(name, *path):
    cur = docs[name]
    for k in path:
        if isinstance(cur, list):
            cur = [c[k] for c in cur if isinstance(c, dict) and k in c]
            if not cur:
                return False
            cur = cur[0]
        elif isinstance(cur, dict) and k in cur:
            cur = cur[k]
        else:
            return False
    return True

for name, path in [
    ("maps_tid", ("process", "requested_pid")),
    ("maps_text_oddpid", ("process", "comm_hex")),
    ("maps_text_oddpid", ("regions", "path_hex")),
    ("maps_text_oddpid", ("regions", "name_ambiguous")),
    ("maps_default", ("images", "path_hex")),
    ("maps_text_delpid", ("images", "deleted")),
    ("read_odd", ("image_hex",)),
    ("read_odd", ("region", "path_hex")),
    ("read_tid", ("process", "requested_pid")),
    ("read_ptr", ("points_to",)),
    ("read_arr_u32", ("values",)),
    ("read_remainder", ("undecoded_bytes",)),
    ("read_str", ("nul_terminated",)),
    ("read_bin", ("binary_match",)),
    ("read_partial", ("error",)),
    ("sym_tid", ("process", "requested_pid")),
    ("sym_odd", ("process", "comm_hex")),
    ("sym_odd", ("results", "image_hex")),
    ("sym_stdin", ("results", "input_hex")),
    ("sym_stdin", ("results", "error_hex")),
    ("sym_bin_odd", ("binary", "path_hex")),
    ("sym_bin_odd", ("results", "image_hex")),
    ("sym_bin_odd", ("results", "why_hex")),
]:
    check(has(name, *path), f"{name}: expected key {'.'.join(path)} (test coverage)")
for name, path in [
    ("watch_kinds", ("watches", "last_written_value")),
    ("watch_kinds", ("watches", "writer_sites", "caveat")),
    ("watch_kinds", ("watches", "samples", "callchain")),
    ("watch_follow", ("dependent_watches", "generations", "rebind_latency_ns")),
    ("watch_follow", ("dependent_watches", "samples", "generation")),
]:
    check(has(name, *path), f"{name}: expected key {'.'.join(path)} (test coverage)")
for name, path in [
    ("probe_count", ("locations", "per_thread", "tid")),
    ("probe_latency", ("locations", "latency", "histogram", "lo_ns")),
    ("probe_args", ("locations", "args", "histogram", "lo")),
    ("probe_args", ("locations", "retval", "histogram", "lo")),
    ("probe_stacks", ("locations", "calls_seen")),
    ("probe_stacks", ("locations", "stacks", "top", "frames", "address")),
    ("probe_stacks", ("locations", "stacks", "unwind_stops", "outermost")),
    ("probe_offset", ("locations", "latency_note")),
    ("probe_offset", ("locations", "args_note")),
]:
    check(has(name, *path), f"{name}: expected key {'.'.join(path)} (test coverage)")
eq("probe_count: calls, 3 threads", (3000, 3),
   (docs["probe_count"]["locations"][0]["calls"], len(docs["probe_count"]["locations"][0]["per_thread"])))
eq("probe_latency: 40 calls timed", 40, docs["probe_latency"]["locations"][0]["latency"]["count"])
eq("probe_args: kinds", ["unsigned", "signed", "pointer", "unsigned"],
   [a["kind"] for a in docs["probe_args"]["locations"][0]["args"]])
check(any(f["inlined"] for t in docs["probe_stacks"]["locations"][0]["stacks"]["top"] for f in t["frames"]),
      "probe_stacks: no inlined frame")
eq("probe_fileline: two inlined sites", [True, True],
   [s["inlined"] for s in docs["probe_fileline"]["locations"][0]["sites"]])
fl_copies = {s["inlined_function"] for s in docs["probe_fileline"]["locations"][0]["sites"]}
check(len(fl_copies) == 1 and None not in fl_copies, f"probe_fileline: copies of one function, got {fl_copies}")
eq("probe_offset: latency, raw registers", (None, ["unknown", "unknown"]),
   (docs["probe_offset"]["locations"][0]["latency"], [a["kind"] for a in docs["probe_offset"]["locations"][0]["args"]]))
eq("probe_exit: stop_reason, code_restored", ("target_exited", None),
   (docs["probe_exit"]["observation"]["stop_reason"], docs["probe_exit"]["observation"]["code_restored"]))
eq("probe_idle: stop_reason, calls", ("duration", [0, 0]),
   (docs["probe_idle"]["observation"]["stop_reason"], [l["calls"] for l in docs["probe_idle"]["locations"]]))
eq("probe_count: code_restored", True, docs["probe_count"]["observation"]["code_restored"])
eq("watch_kinds: writer kinds", ["read_modify_write", "store"],
   sorted({s["kind"] for s in docs["watch_kinds"]["watches"][0]["writer_sites"]}))
eq("watch_kinds: string store", ["string_store"],
   [s["kind"] for s in docs["watch_kinds"]["watches"][1]["writer_sites"]])
eq("watch_follow: re-binds", 2, docs["watch_follow"]["dependent_watches"][0]["generation"])
check(docs["watch_follow"]["dependent_watches"][0]["samples_truncated"],
      "watch_follow: --max-samples 2 truncates the leaf timeline")
if docs["watch_kinds"]["backend"] == "perf_breakpoint" and \
        docs["watch_kinds"]["capabilities"]["kernel_writes_visible"]:
    eq("watch_kinds: read(2) into g_rbuf is a kernel write", ["kernel_write"],
       [s["kind"] for s in docs["watch_kinds"]["watches"][2]["writer_sites"]])
eq("maps_text_nonpie: main elf_type", ["exec"],
   [i["elf_type"] for i in docs["maps_text_nonpie"]["images"] if i["is_main"]])
eq("maps_query_pid: maps_source", "procmap_query", docs["maps_query_pid"]["maps_source"])
eq("read_partial_as: value", None, docs["read_partial_as"].get("value"))
eq("read_image_file: source", "image_file", docs["read_image_file"]["source"])
eq("read_src_mem: source", "proc_pid_mem", docs["read_src_mem"]["source"])
eq("read_bin_force: binary_match", "mismatch", docs["read_bin_force"].get("binary_match"))
check(any(d["deleted"] for d in docs["maps_query_delpid"]["regions"]),
  "maps_query_delpid: no deleted region")

# sym: the documents carry what they were made for.
def results(name):
    return docs[name]["results"]

def sources(name):
    return [r["source"] for r in results(name)]

stdin = results("sym_stdin")
eq("sym_stdin: one result per non-blank line, in order",
   ["main", "vg_magic", "0xzz", "nosuchsymbol", "0x\\xfe", "0x10", stdin[1]["address"][2:]],
   [r["input"] for r in stdin])
eq("sym_stdin: which lines are errors", [False, False, True, True, True, False, False],
   [r["error"] is not None for r in stdin])
eq("sym_stdin: hex without 0x is an address", stdin[1]["address"], stdin[-1]["address"])
live = results("sym_live")
eq("sym_live: sources of vg_magic, main, main+4, @static, runtime (own image)",
   ["symtab", "dwarf", "dwarf", "symtab", "symtab"], sources("sym_live")[:5])
eq("sym_live: 0x10", (None, "none"), (live[-2]["image"], live[-2]["source"]))
eq("sym_live: anonymous memory", (None, "none"), (live[-1]["image"], live[-1]["source"]))
kernel = [r for r in live if int(r["address"], 16) >= 1 << 63]
if docs["sym_live"]["warnings"]:
    check(all(r["source"] == "none" and r["why"] for r in kernel),
          "sym_live: kallsyms unusable (a warning) but a kernel address answered")
else:
    eq("sym_live: kernel addresses from kallsyms", ["kallsyms"] * len(kernel),
       [r["source"] for r in kernel])
    eq("sym_live: the kernel's image", "[kernel]", kernel[0]["image"])
    for r in kernel[1:]:
        check(re.fullmatch(r"\[[^]]+\]", r["image"] or "") and r["image"] != "[kernel]",
              f"sym_live: kernel module image {r['image']!r} is not [MODULE]")
check(docs["sym_deleted"]["warnings"], "sym_deleted: no warning about the deleted library")
inl = results("sym_bin_inline")
check(any(len(r["frames"]) >= 3 for r in inl), "sym_bin_inline: no inline chain of 3 frames")
check(any(r["nearest_symbol"] for r in inl), "sym_bin_inline: no padding answer (nearest_symbol)")
check(any(r["symbol"] is None and r["file"] for r in inl),
      "sym_bin_inline: no padding answer with a line")
eq("sym_jit: sources", ["perf-map"], sources("sym_jit"))
eq("sym_jit: image and symbol", (f"[perf-{docs['sym_jit']['process']['pid']}.map]", "jit_hot_loop"),
   (results("sym_jit")[0]["image"], results("sym_jit")[0]["symbol"]))
eq("sym_bin: sources", ["dwarf", "symtab", "none", "none"], sources("sym_bin"))
eq("sym_bin_symtab: sources", ["symtab", "symtab"], sources("sym_bin_symtab"))
check(all(r["why"] for r in results("sym_bin_symtab")), "sym_bin_symtab: no why without DWARF")
eq("sym_bin_dynsym: sources", ["dynsym", "dynsym", "none"], sources("sym_bin_dynsym"))
eq("sym_bin_debuglink: sources", ["debuglink"], sources("sym_bin_debuglink"))
eq("sym_bin: build_id", 40, len(docs["sym_bin"]["binary"]["build_id"] or ""))

# The schemas are strict: an undocumented key, a wrong type or a missing
# key fails.
def must_fail(schema, doc, what):
    check(errors(schema, doc), f"{schema}.json accepts a document with {what}")

for name, schema, mutate, what in [
    ("maps_text_pid", "maps", lambda d: d.update(bogus=1), "an undocumented top-level key"),
    ("maps_text_pid", "maps", lambda d: d["regions"][0].update(bogus=1), "an undocumented region key"),
    ("maps_text_pid", "maps", lambda d: d["images"][0].update(bogus=1), "an undocumented image key"),
    ("maps_text_pid", "maps", lambda d: d["process"].update(bogus=1), "an undocumented process key"),
    ("maps_text_pid", "maps", lambda d: d["regions"][0].update(start=4096), "a numeric address"),
    ("maps_text_pid", "maps", lambda d: d["regions"][0].update(kind="weird"), "an unknown region kind"),
    ("maps_text_pid", "maps", lambda d: d["images"][0].update(open_via="magic"), "an unknown open_via"),
    ("maps_text_pid", "maps", lambda d: d["images"][0].pop("build_id"), "no build_id"),
    ("read_u64", "read", lambda d: d.update(value=1), "a u64 value as a JSON number"),
    ("read_u32", "read", lambda d: d.update(value="1"), "a u32 value as a string"),
    ("read_dump", "read", lambda d: d.update(value=1), "a value without --as"),
    ("read_dump", "read", lambda d: d["region"].update(bogus=1), "an undocumented region key"),
    ("read_dump", "read", lambda d: d.update(source="magic"), "an unknown source"),
    ("read_partial", "read", lambda d: d.pop("error"), "complete false and no error"),
    ("read_partial", "read", lambda d: d["error"].update(bogus=1), "an undocumented error key"),
    ("read_str", "read", lambda d: d.update(values=["a", "b"]), "values with --as str"),
    ("err_bad_address", "error", lambda d: d.update(address="0x10"), "a read key in an error"),
    ("version", "version", lambda d: d.update(process={}), "a process object"),
    ("sym_live", "symbolize", lambda d: d.update(bogus=1), "an undocumented top-level key"),
    ("sym_live", "symbolize", lambda d: d["results"][1].update(bogus=1), "an undocumented result key"),
    ("sym_live", "symbolize", lambda d: d["results"][1]["frames"][0].update(bogus=1), "an undocumented frame key"),
    ("sym_live", "symbolize", lambda d: d["results"][1].pop("why"), "no why"),
    ("sym_live", "symbolize", lambda d: d["results"][1].update(address=4096), "a numeric address"),
    ("sym_live", "symbolize", lambda d: d["results"][1].update(source="magic"), "an unknown source"),
    ("sym_live", "symbolize", lambda d: d["results"][1].update(symbol_address=None), "a symbol without symbol_address"),
    ("sym_live", "symbolize", lambda d: d["results"][1].update(error="x"), "an error beside an answer"),
    ("sym_live", "symbolize", lambda d: d["results"][-2].update(why=None), "nothing known and no why"),
    ("sym_live", "symbolize", lambda d: d["results"][-2].update(source="dwarf"), "source dwarf with nothing found"),
    ("sym_live", "symbolize", lambda d: d.update(binary={"path": "x", "build_id": None}), "binary beside a process"),
    ("sym_bin", "symbolize", lambda d: d.pop("binary"), "no process and no binary"),
    ("sym_bin", "symbolize", lambda d: d["binary"].update(build_id=""), "an empty build_id"),
    ("sym_bin_inline", "symbolize", lambda d: d["results"][0].update(frames_truncated=False), "frames_truncated false"),
    ("sym_bin_inline", "symbolize",
     lambda d: next(r for r in d["results"] if r["nearest_symbol"]).update(symbol="x"),
     "a symbol beside nearest_symbol"),
    ("err_sym_dead", "error", lambda d: d.update(results=[]), "results in an error"),
    ("watch_idle", "live_watch", lambda d: d.update(bogus=1), "an undocumented top-level key"),
    ("watch_idle", "live_watch", lambda d: d["process"].pop("load_bias"), "no load_bias"),
    ("watch_idle", "live_watch", lambda d: d["observation"].update(counts_are_lower_bound=False),
     "reasons and counts_are_lower_bound false"),
    ("watch_idle", "live_watch", lambda d: d["observation"].update(stop_reason="none"), "an unknown stop reason"),
    ("watch_idle", "live_watch", lambda d: d["watches"][0].update(len_bytes=3), "len_bytes 3"),
    ("watch_idle", "live_watch", lambda d: d["watches"][0].pop("symbol_offset"), "a symbol without symbol_offset"),
    ("watch_idle", "live_watch", lambda d: d.update(backend="perf_breakpoint"), "emulation called perf_breakpoint"),
    ("err_watch_unaligned", "error", lambda d: d.update(watches=[]), "watches in an error"),
    ("probe_count", "live_probe", lambda d: d.update(bogus=1), "an undocumented top-level key"),
    ("probe_count", "live_probe", lambda d: d["observation"].update(bogus=1), "an undocumented observation key"),
    ("probe_count", "live_probe", lambda d: d["locations"][0]["sites"][0].update(bogus=1), "an undocumented site key"),
    ("probe_count", "live_probe", lambda d: d["locations"][0]["per_thread"][0].update(bogus=1), "an undocumented per_thread key"),
    ("probe_count", "live_probe", lambda d: d["locations"][0].pop("latency"), "no latency"),
    ("probe_count", "live_probe", lambda d: d["observation"].update(code_restored=None), "code_restored null, target alive"),
    ("probe_count", "live_probe", lambda d: d["observation"].update(counts_are_lower_bound=True, counts_exact=False),
     "a lower bound without a reason"),
    ("probe_count", "live_probe", lambda d: d["observation"].update(stop_reason="running"), "an unknown stop reason"),
    ("probe_count", "live_probe", lambda d: d["locations"][0].update(file_offset=4096), "a numeric file_offset"),
    ("probe_latency", "live_probe", lambda d: d["locations"][0]["latency"].update(bogus=1), "an undocumented latency key"),
    ("probe_latency", "live_probe", lambda d: d["locations"][0]["latency"]["histogram"][0].update(lo_ns="0"),
     "a latency bound as a string"),
    ("probe_args", "live_probe", lambda d: d["locations"][0]["args"][0]["top"][0].update(value=4096), "a numeric arg value"),
    ("probe_args", "live_probe", lambda d: d["locations"][0]["args"][0].update(kind="pointer"), "decimal values of a pointer"),
    ("probe_args", "live_probe", lambda d: d["locations"][0]["args"][0].update(reg="xmm0"), "an unknown register"),
    ("probe_stacks", "live_probe", lambda d: d["locations"][0]["stacks"]["unwind_stops"].update(bogus=1), "an unknown unwind stop"),
    ("probe_stacks", "live_probe", lambda d: d["locations"][0]["stacks"]["top"][0]["frames"][0].update(bogus=1),
     "an undocumented frame key"),
    ("probe_offset", "live_probe", lambda d: d["locations"][0].update(latency=docs["probe_latency"]["locations"][0]["latency"]),
     "a latency beside latency_note"),
    ("probe_fileline", "live_probe", lambda d: d["locations"][0]["sites"][0].update(inlined_function=None),
     "an inlined copy of nothing"),
    ("probe_exit", "live_probe", lambda d: d["observation"].update(code_restored=True), "code_restored after the exit"),
    ("err_probe_dead", "error", lambda d: d.update(locations=[]), "locations in an error"),
]:
    d = copy.deepcopy(docs[name])
    mutate(d)
    must_fail(schema, d, what)

done()
print("ok: " + ", ".join(f"{n} {schema}.json" for schema, n in sorted(seen.items()))
      + f" documents valid (jsonschema {metadata.version('jsonschema')}"
      + f" on {sys.executable})")
PY
