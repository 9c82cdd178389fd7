#!/bin/bash
# check-layers.sh [SOURCE_ROOT] - every #include "FOLDER/..." under src/
# against the layer order written in docs/ARCHITECTURE.md ("## Layers":
# lines "    layer N: FOLDER..."): a folder may include its own headers and
# those of a lower layer, never a folder of its own layer (the commands
# are peers) nor one above it.  A folder of src/ missing from the order
# fails too, so a new one is placed before it is used.  Prints each
# violation as "src/FILE:LINE: FOLDER (layer N) includes "X/..." (layer
# M)" and exits 1; exits 0 with one line saying what was checked.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
doc=$root/docs/ARCHITECTURE.md
[[ -r $doc ]] || { echo "check-layers: cannot read $doc" >&2; exit 2; }

declare -A layer
while read -r _ n rest; do
	n=${n%:}
	for f in $rest; do
		[[ -z ${layer[$f]:-} ]] || { echo "check-layers: '$f' is in two layers in $doc" >&2; exit 2; }
		layer[$f]=$n
	done
done < <(grep -E '^    layer [0-9]+: ' "$doc")
((${#layer[@]})) || { echo "check-layers: no '    layer N: ...' lines in $doc" >&2; exit 2; }

bad=0 files=0 includes=0
for dir in "$root"/src/*/; do
	f=$(basename "$dir")
	if [[ -z ${layer[$f]:-} ]]; then
		echo "src/$f/: not in the layer order of docs/ARCHITECTURE.md (## Layers)"
		bad=1
		continue
	fi
	while IFS=: read -r path line text; do
		to=${text#*\"}
		to=${to%%/*}
		includes=$((includes + 1))
		[[ $to == "$f" ]] && continue
		if [[ -z ${layer[$to]:-} ]]; then
			echo "${path#"$root"/}:$line: includes \"$to/...\", a folder not in the layer order"
			bad=1
		elif ((layer[$to] >= layer[$f])); then
			echo "${path#"$root"/}:$line: $f (layer ${layer[$f]}) includes \"$to/...\" (layer ${layer[$to]})"
			bad=1
		fi
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_0-9]+/' -r "$dir" --include='*.c' --include='*.h' || true)
	files=$((files + $(find "$dir" -name '*.[ch]' | wc -l)))
done
((bad)) && exit 1
echo "check-layers: $includes includes in $files files of src/ follow the layer order"
