#!/usr/bin/env bash
# json_lib_missing: libcjson is loaded on the first JSON call (util/cjson.c),
# not at start.  With a libcjson that lacks every function first on the
# library path, text answers are whole and exit 0 (nothing loads it), and
# a JSON answer is refused with one error line naming the library and
# exit 1, with nothing on stdout that could pass for a document.  The
# real library then gives the JSON answer.
source "$(dirname "$0")/lib.sh"

real=$(cc -print-file-name=libcjson.so)
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ -n $soname ]] || harness_error "cannot read the soname of $real"
mkdir "$T/lib"
echo 'int vigil_test_not_cjson;' >"$T/empty.c"
cc -shared -fPIC -o "$T/lib/$soname" -Wl,-soname,"$soname" "$T/empty.c" ||
	harness_error "cannot build an empty $soname"

start_target tgt_globals_pie "$T/truth"
wait_truth "$T/truth" ready
tpid=$(truth_get "$T/truth" pid)

# Text: nothing loads the library (had anything loaded it, the empty one
# would have ended vigil with exit 1 and nothing more on stdout).
LD_LIBRARY_PATH=$T/lib vg maps_text maps "$tpid"
assert_rc 0 "vigil maps (text) with an empty $soname on the library path"
grep -q 'tgt_globals_pie' "$T/maps_text.out" || { show_last; fail "vigil maps (text) printed no mapping of the target"; }
LD_LIBRARY_PATH=$T/lib vg sym_text sym --bin "$TARGETS/tgt_globals_pie" main
assert_rc 0 "vigil sym --bin (text) with an empty $soname on the library path"
grep -q '\bmain\b' "$T/sym_text.out" || { show_last; fail "vigil sym --bin printed no main"; }

# JSON: refused, one line, exit 1, stdout empty.
LD_LIBRARY_PATH=$T/lib vg maps_json maps "$tpid" --json
assert_rc 1 "vigil maps --json with an empty $soname on the library path"
assert_one_error_line
grep -q "JSON needs libcjson: $soname lacks cJSON_" "$T/maps_json.err" || { show_last; fail "the error does not name the library and the missing function"; }
[[ ! -s $T/maps_json.out ]] || { show_last; fail "vigil maps --json wrote to stdout although it had no JSON library"; }

# The real library: the same command answers in JSON.
vg maps_json_ok maps "$tpid" --json
assert_rc 0 "vigil maps --json"
[[ $(jget "$T/maps_json_ok.out" 'd["operation"]') == maps ]] || { show_last; fail "vigil maps --json is not a maps document"; }
echo "PASS"
