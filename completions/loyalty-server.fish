# fish completion for loyalty-server.
complete -c loyalty-server -f
complete -c loyalty-server -n __fish_use_subcommand -a migrate -d 'Apply the pending schema migrations and exit'
complete -c loyalty-server -l listen -x -d 'Address to serve HTTP on (default 127.0.0.1:8080)'
complete -c loyalty-server -l data-dir -x -a '(__fish_complete_directories)' -d 'State directory: the embedded PostgreSQL cluster and the operator token'
complete -c loyalty-server -l no-rate-limits -d 'No 429s for many attempts from one address (load tests)'
complete -c loyalty-server -l version -d 'Print the version'
complete -c loyalty-server -l help -d 'Show the usage'
