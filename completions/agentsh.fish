# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_agentsh_global_optspecs
    string join \n c l/login i e u x o= noprofile norc ask h/help V/version
end

function __fish_agentsh_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_agentsh_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_agentsh_using_subcommand
    set -l cmd (__fish_agentsh_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c agentsh -n "__fish_agentsh_needs_command" -s o -d 'Set a shell option, e.g. `-o pipefail` (passed on)' -r
complete -c agentsh -n "__fish_agentsh_needs_command" -s c -d 'Read the command from the first argument (as `sh -c`); later arguments set $0, $1, ...'
complete -c agentsh -n "__fish_agentsh_needs_command" -s l -l login -d 'Act as a login shell (passed on to the shell that runs compound commands)'
complete -c agentsh -n "__fish_agentsh_needs_command" -s i -d 'Accepted for compatibility; the gate itself is never interactive'
complete -c agentsh -n "__fish_agentsh_needs_command" -s e -d 'Exit on the first failing command (passed on, as `set -e`)'
complete -c agentsh -n "__fish_agentsh_needs_command" -s u -d 'Treat unset variables as an error (passed on, as `set -u`)'
complete -c agentsh -n "__fish_agentsh_needs_command" -s x -d 'Trace commands (passed on, as `set -x`)'
complete -c agentsh -n "__fish_agentsh_needs_command" -l noprofile -d 'Passed on to bash'
complete -c agentsh -n "__fish_agentsh_needs_command" -l norc -d 'Passed on to bash'
complete -c agentsh -n "__fish_agentsh_needs_command" -l ask -d 'Ask the person even if the command is safe (only ever tightens the policy)'
complete -c agentsh -n "__fish_agentsh_needs_command" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_needs_command" -s V -l version -d 'Print version'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "check" -d 'Show the verdict on a command without running it'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "whitelist" -d 'List, add or remove the commands that run without asking'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "trust" -d 'Let this project\'s .agents/terminal.json loosen the policy (asks on the terminal)'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "untrust" -d 'Stop trusting this project\'s .agents/terminal.json (its whitelist is then ignored)'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l cwd -d 'Judge as if run from DIR (its .agents/terminal.json applies)' -r -F
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l json -d 'Print one JSON object instead of an explanation'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l stdin -d 'Read the command text from standard input (for multi-line commands)'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "list" -d 'Show the whitelist entries, numbered, with the file each comes from'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "ls" -d 'Show the whitelist entries, numbered, with the file each comes from'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "add" -d 'Add an entry: it matches commands that start with its words (`ls` matches `ls -la`, not `lsof`)'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "rm" -d 'Remove an entry by its text or its number from `whitelist list`; with no argument, pick one'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "remove" -d 'Remove an entry by its text or its number from `whitelist list`; with no argument, pick one'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "clear" -d 'Remove every entry'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from list" -l json -d 'Print JSON'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from list" -l user -d 'Edit the user config (~/.config/agentsh/config.json) instead of the project\'s'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from ls" -l json -d 'Print JSON'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from ls" -l user -d 'Edit the user config (~/.config/agentsh/config.json) instead of the project\'s'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from add" -l user -d 'Edit the user config (~/.config/agentsh/config.json) instead of the project\'s'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from rm" -l user -d 'Edit the user config (~/.config/agentsh/config.json) instead of the project\'s'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from remove" -l user -d 'Edit the user config (~/.config/agentsh/config.json) instead of the project\'s'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from clear" -l user -d 'Edit the user config (~/.config/agentsh/config.json) instead of the project\'s'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand trust" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand untrust" -s h -l help -d 'Print help'
