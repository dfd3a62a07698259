# bash completion for loyalty-server.
_loyalty_server() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        --data-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur")) ;;
        --listen)
            COMPREPLY=() ;;
        *)
            local words='--listen --data-dir --no-rate-limits --version --help'
            ((COMP_CWORD == 1)) && words="migrate $words"
            COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
    esac
}
complete -F _loyalty_server loyalty-server
