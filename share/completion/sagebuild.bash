# bash completion for sagebuild. Options are read from `sagebuild <command> --help` when asked,
# so the completion never falls out of step with the program.
_sagebuild_options()
{
    # Option lines start with a few spaces and a dash; the option column ends at two spaces.
    "$1" "$2" --help 2>/dev/null | sed -n 's/^ \{1,6\}\(-.*\)$/\1/p' | sed 's/  .*//' |
        grep -oE -- '--[a-z][a-z0-9-]*'
}

_sagebuild()
{
    local cur prev cmd i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cmd=
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [ -z "$cmd" ]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '--no-color --version --help' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --help 2>/dev/null |
                sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p')" -- "$cur"))
        fi
        return
    fi
    case $prev in
    --prefix | --out | --from | --build | --cuda-home | --torch-dir | --manifest)
        COMPREPLY=($(compgen -d -- "$cur"))
        return
        ;;
    --python | --host-cc)
        COMPREPLY=($(compgen -c -- "$cur"))
        return
        ;;
    --source)
        COMPREPLY=($(compgen -W 'redist pypi auto' -- "$cur"))
        return
        ;;
    --arch)
        COMPREPLY=($(compgen -W 'native all sm_80 sm_86 sm_89 sm_90 sm_90a sm_100a sm_120a sm_121a' -- "$cur"))
        return
        ;;
    esac
    if [ "$cmd" = doctor ] && [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" doctor --list-checks 2>/dev/null | awk '{print $1}')" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sagebuild_options "${COMP_WORDS[0]}" "$cmd")" -- "$cur"))
}
complete -F _sagebuild sagebuild
