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
            COMPREPLY=($(compgen -W '--listen --data-dir --version --help' -- "$cur")) ;;
    esac
}
complete -F _loyalty_server loyalty-server
