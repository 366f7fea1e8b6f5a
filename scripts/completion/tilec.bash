# tilec.bash: bash completion for tilec (installed as share/bash-completion/completions/tilec;
# or `source scripts/completion/tilec.bash`). Completes the commands, each command's options,
# the values of --emit, --target and --backend, the kernels of FILE: (from `tilec list`), and
# .tile files.
_tilec() {
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=${COMP_WORDS[1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "check emit run tune list cache --help --version" -- "$cur"))
        return
    fi
    case $cur in
    --emit=*)
        COMPREPLY=($(compgen -P --emit= -W "tokens ast tir llvm ptx asm obj amdgcn hsaco" -- "${cur#--emit=}"))
        return ;;
    --target=*)
        COMPREPLY=($(compgen -P --target= -W "host sim sm_80 sm_86 sm_89 sm_90 sm_90a gfx90a gfx942 gfx950 gfx1100 gfx1200" -- "${cur#--target=}"))
        return ;;
    --backend=*)
        COMPREPLY=($(compgen -P --backend= -W "auto cpu cuda sim" -- "${cur#--backend=}"))
        return ;;
    *.tile:*)
        local file=${cur%%:*} kernels
        kernels=$(tilec list "$file" 2>/dev/null | sed 's/(.*//')
        COMPREPLY=($(compgen -P "$file:" -W "$kernels" -- "${cur#*:}"))
        return ;;
    -*)
        local opts="--help"
        case $cmd in
        check) opts="$opts -D --kernel= -I" ;;
        emit) opts="$opts -D --kernel= --emit= --target= --dump-after= --assume-aligned -o -I" ;;
        run) opts="$opts -D --backend= --elems= --reps= --seed= --check --fill --load --save --verbose --cold -I" ;;
        tune) opts="$opts -D --backend= --reps= --budget= --samples= --force --top= -I" ;;
        esac
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        [ "${COMPREPLY[0]: -1}" = "=" ] && compopt -o nospace 2>/dev/null
        return ;;
    esac
    if [ "$cmd" = cache ] && [ "$COMP_CWORD" -eq 2 ]; then
        COMPREPLY=($(compgen -W "list show clear export import" -- "$cur"))
        return
    fi
    case $prev in
    -o|--load|--save) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    -I) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -f -X '!*.tile' -- "$cur") $(compgen -d -- "$cur"))
}
complete -F _tilec tilec
