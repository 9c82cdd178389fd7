# bash completion for vigil                                   -*- shell-script -*-
#
# Commands, each command's options, and the target: PIDs and process names.
# The options are read from `vigil help COMMAND` and `vigil --help` (the
# global ones: -p, --name) of the vigil being completed (the first word: an
# installed vigil or ./build/vigil), so the completion never lags behind
# the binary.  An option wants a value when its help line names one
# (--duration TIME): FILE, DIR and -o want a file name, PID, TID and NAME a
# process, other values are left to the user.

# The option lines of a help text ("  -o, --output FILE   what it does"):
# the part before the first two spaces names the options and their value.
_vigil_opts_awk='
    /^[ \t]+-/ {
        sub(/^[ \t]+/, "")
        field = $0
        if (match(field, /  /)) field = substr(field, 1, RSTART - 1)
        n = split(field, w, /[ ,]+/)
        v = "-"
        for (i = 1; i <= n; i++) if (w[i] !~ /^-/ && w[i] != "") v = w[i]
        for (i = 1; i <= n; i++) if (w[i] ~ /^--?[A-Za-z]/) print w[i], v
    }'

# _vigil_help_opts VIGIL CMD: "OPTION VALUE" lines (VALUE "-" for none) of
# the command's help and the global options.
_vigil_help_opts()
{
    { "$1" help "$2"; "$1" --help; } 2>/dev/null | awk "$_vigil_opts_awk"
}

# _vigil_commands VIGIL: the command names from `vigil --help`.
_vigil_commands()
{
    "$1" --help 2>/dev/null | awk '
        /^commands:/ { on = 1; next }
        on && /^[^ \t]/ { on = 0 }
        on && /^  [a-z]+  / { print $1 }'
}

# _vigil_targets: PIDs and process names of the running processes.
_vigil_targets()
{
    local d
    for d in /proc/[0-9]*; do
        printf '%s\n' "${d#/proc/}"
        [[ -r $d/comm ]] && cat "$d/comm" 2>/dev/null
    done | sort -u
}

_vigil()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=
    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local vigil=${COMP_WORDS[0]}
    [[ $vigil == */* ]] || vigil=$(type -P "$vigil" 2>/dev/null) || vigil=vigil
    COMPREPLY=()

    # The command: the first word after vigil that is not an option.
    local cmd= i
    for (( i = 1; i < COMP_CWORD; i++ )); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
            cmd=${COMP_WORDS[i]}
            break
        fi
    done
    local c
    for (( c = i + 1; c < COMP_CWORD; c++ )); do
        [[ -n $cmd && ${COMP_WORDS[c]} == -- ]] || continue
        # vigil CMD [options] -- PROGRAM ARGS: the program's own words.
        if (( c == COMP_CWORD - 1 )); then
            mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
    done

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--help --version --json" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_vigil_commands "$vigil") help" -- "$cur")
        fi
        return 0
    fi
    if [[ $cmd == help ]]; then
        (( COMP_CWORD == i + 1 )) &&
            mapfile -t COMPREPLY < <(compgen -W "$(_vigil_commands "$vigil")" -- "$cur")
        return 0
    fi

    local opts value o v
    opts=$(_vigil_help_opts "$vigil" "$cmd")
    # The previous word is an option that wants a value.
    if [[ $prev == -* ]]; then
        value=$(awk -v o="$prev" '$1 == o { print $2; exit }' <<<"$opts")
        if [[ -n $value && $value != - ]]; then
            case $prev:$value in
            -o:* | --output:* | *:*FILE* | *:*DIR* | *:*PATH*)
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                compopt -o filenames 2>/dev/null ;;
            *:PID* | *:TID* | *:NAME*)
                mapfile -t COMPREPLY < <(compgen -W "$(_vigil_targets)" -- "$cur") ;;
            esac
            return 0
        fi
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(awk '{ print $1 } END { print "--json" }' <<<"$opts" | sort -u)" -- "$cur")
        return 0
    fi

    # The first operand after the command is the target (vigil sym --bin
    # FILE takes addresses instead); later operands are addresses.
    local operands=0
    for (( i = i + 1; i < COMP_CWORD; i++ )); do
        o=${COMP_WORDS[i]}
        if [[ $o == -* ]]; then
            v=$(awk -v o="$o" '$1 == o { print $2; exit }' <<<"$opts")
            [[ -n $v && $v != - ]] && (( i++ ))
            [[ $cmd == sym && $o == --bin ]] && operands=1
            continue
        fi
        (( operands++ ))
    done
    (( operands == 0 )) &&
        mapfile -t COMPREPLY < <(compgen -W "$(_vigil_targets)" -- "$cur")
    return 0
}
complete -F _vigil vigil
