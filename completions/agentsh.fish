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
complete -c agentsh -n "__fish_agentsh_needs_command" -a "policy" -d 'Show the effective policy: level table, built-in rules, custom rules, lists, and where each came from'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "hook" -d 'Answer an agent\'s pre-tool hook: tool-call JSON on stdin, the decision on stdout'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "init" -d 'Print the settings that put agentsh in front of an agent or shell; --write installs them'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "doctor" -d 'Check that agents and shells reach agentsh, with a fix for every problem found'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "log" -d 'Show the audit log: every decision agentsh made, newest last'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "stats" -d 'Summarize the audit log: decisions, risks, approval rate, the commands asked most'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "approvals" -d 'Show pending approval requests live, and answer them (a terminal UI; --json for scripts)'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "approve" -d 'Allow a pending request (see `agentsh approvals`)'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "deny" -d 'Reject a pending request, optionally telling the agent what to do instead'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "pause" -d 'Take over: every command the agent runs waits until `agentsh resume` (--deny: is refused)'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "resume" -d 'Hand control back: lift `agentsh pause`'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "status" -d 'Show whether the agent is paused and how many requests are pending'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "trust" -d 'Let this project\'s .agents/terminal.json loosen the policy (asks on the terminal)'
complete -c agentsh -n "__fish_agentsh_needs_command" -a "untrust" -d 'Stop trusting this project\'s .agents/terminal.json (its whitelist is then ignored)'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l cwd -d 'Judge as if run from DIR (its .agents/terminal.json applies)' -r -F
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l json -d 'Print one JSON object instead of an explanation'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l stdin -d 'Read the command text from standard input (for multi-line commands)'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l ask -d 'Judge as `agentsh --ask` would: a person approves even safe commands (AGENTSH_ASK=1 too)'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l prompt -d 'Act as the gate for a shell hook: print nothing when allowed, ask the person at the terminal when needed; exit 0 when it may run, 11 when it must not'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -l refuse -d 'With --prompt: refuse what would be asked (a terminal an agent types into, where the agent could answer the prompt itself: AGENTSH_INTERACTIVE_ASK=refuse)'
complete -c agentsh -n "__fish_agentsh_using_subcommand check" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "list" -d 'Show the whitelist entries in force here, numbered, with the file each comes from'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "ls" -d 'Show the whitelist entries in force here, numbered, with the file each comes from'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "add" -d 'Add an entry: it matches commands that start with its words (`ls` matches `ls -la`, not `lsof`)'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "rm" -d 'Remove an entry by its text or its number from `whitelist list`; with no argument, pick one'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "remove" -d 'Remove an entry by its text or its number from `whitelist list`; with no argument, pick one'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and not __fish_seen_subcommand_from list ls add rm remove clear" -f -a "clear" -d 'Remove every entry of this project\'s lists (with --user: of the user config\'s)'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from list" -l json -d 'Print JSON'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from list" -l user -d 'List the user config\'s entries instead: its own list and every project\'s (~/.config/agentsh/config.json)'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from ls" -l json -d 'Print JSON'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from ls" -l user -d 'List the user config\'s entries instead: its own list and every project\'s (~/.config/agentsh/config.json)'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from add" -l user -d 'Add it to the user config (every project) instead of .agents/terminal.json'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from rm" -l user -d 'Remove from the user config\'s entries (as `whitelist list --user` numbers them)'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from remove" -l user -d 'Remove from the user config\'s entries (as `whitelist list --user` numbers them)'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from clear" -l user -d 'Clear the user config\'s entries instead: its own list and every project\'s'
complete -c agentsh -n "__fish_agentsh_using_subcommand whitelist; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand policy" -l cwd -d 'Show the policy for commands run in DIR (its .agents/terminal.json applies)' -r -F
complete -c agentsh -n "__fish_agentsh_using_subcommand policy" -l json -d 'Print one JSON object instead of text'
complete -c agentsh -n "__fish_agentsh_using_subcommand policy" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand hook" -l timeout -d 'The agent\'s timeout for this hook, in seconds: agentsh answers 10 s before it (default: the agent\'s own default, 600 for Claude Code and Codex, 60 for Gemini CLI)' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand hook" -l list -d 'List the supported protocols and how each maps allow, ask and deny'
complete -c agentsh -n "__fish_agentsh_using_subcommand hook" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agentsh -n "__fish_agentsh_using_subcommand init" -l write -d 'Install it: merge into the settings file (a backup is kept, the diff is shown)'
complete -c agentsh -n "__fish_agentsh_using_subcommand init" -l all-shells -d 'For bash and zsh: gate every interactive shell, yours included. Without it, --write gates only shells started with AGENTSH_GATE=1 (the terminals an agent types into)'
complete -c agentsh -n "__fish_agentsh_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agentsh -n "__fish_agentsh_using_subcommand doctor" -l json -d 'Print the findings as JSON'
complete -c agentsh -n "__fish_agentsh_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -s n -l lines -d 'Show the last N matching decisions; 0 shows all' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -l since -d 'Only decisions since WHEN: a span before now (30m, 2minutes, 1h, 2d, 1w), an RFC 3339 date or time (2025-06-01, 2025-06-01T09:00:00Z), or a date and time in local time (2025-06-01T09:00)' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -l decision -d 'Only decisions that were allow, ask (whatever the person answered) or deny' -r -f -a "allow\t''
ask\t''
deny\t''"
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -l cwd -d 'Only commands run in DIR or below it' -r -F
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -l grep -d 'Only commands containing TEXT (case-insensitive)' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -l json -d 'Print the matching records as JSON lines, exactly as stored'
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -l verify -d 'Check every line\'s hash and link instead of listing, and that the log starts and ends where its seal says; reports the first broken link, or what is missing'
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -l reseal -d 'After you rotated, trimmed or cleared the log on purpose: seal it as it is now, so that --verify accepts its start and end (a person confirms it on the terminal)'
complete -c agentsh -n "__fish_agentsh_using_subcommand log" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand stats" -l since -d 'Only decisions since WHEN: a span before now (30m, 2minutes, 1h, 2d, 1w), an RFC 3339 date or time, or a date and time in local time (2025-06-01T09:00)' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand stats" -l json -d 'Print one JSON object'
complete -c agentsh -n "__fish_agentsh_using_subcommand stats" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand approvals" -l request -d 'Show only request ID, and end once it is answered or gone (what agentsh\'s tmux popup runs)' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand approvals" -l json -d 'Print the pending requests as a JSON array and exit'
complete -c agentsh -n "__fish_agentsh_using_subcommand approvals" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand approve" -l entry -d 'With --always: which offered entry to add (default: the whole command)' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand approve" -l code -d 'The approval code of a high-risk request, shown in `agentsh approvals`' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand approve" -l always -d 'Allow, and add the command to the whitelist (as the prompt\'s "always" does)'
complete -c agentsh -n "__fish_agentsh_using_subcommand approve" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand deny" -s m -l message -d 'Told to the agent in the refusal, e.g. what to do instead' -r
complete -c agentsh -n "__fish_agentsh_using_subcommand deny" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand pause" -l deny -d 'Refuse the agent\'s commands at once ("the person has taken over") instead of holding them'
complete -c agentsh -n "__fish_agentsh_using_subcommand pause" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand resume" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand status" -l json -d 'Print one JSON object'
complete -c agentsh -n "__fish_agentsh_using_subcommand status" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand trust" -s h -l help -d 'Print help'
complete -c agentsh -n "__fish_agentsh_using_subcommand untrust" -s h -l help -d 'Print help'
