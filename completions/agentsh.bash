_agentsh() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="agentsh"
                ;;
            agentsh,check)
                cmd="agentsh__subcmd__check"
                ;;
            agentsh,trust)
                cmd="agentsh__subcmd__trust"
                ;;
            agentsh,untrust)
                cmd="agentsh__subcmd__untrust"
                ;;
            agentsh,whitelist)
                cmd="agentsh__subcmd__whitelist"
                ;;
            agentsh__subcmd__whitelist,add)
                cmd="agentsh__subcmd__whitelist__subcmd__add"
                ;;
            agentsh__subcmd__whitelist,clear)
                cmd="agentsh__subcmd__whitelist__subcmd__clear"
                ;;
            agentsh__subcmd__whitelist,list)
                cmd="agentsh__subcmd__whitelist__subcmd__list"
                ;;
            agentsh__subcmd__whitelist,ls)
                cmd="agentsh__subcmd__whitelist__subcmd__list"
                ;;
            agentsh__subcmd__whitelist,remove)
                cmd="agentsh__subcmd__whitelist__subcmd__rm"
                ;;
            agentsh__subcmd__whitelist,rm)
                cmd="agentsh__subcmd__whitelist__subcmd__rm"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        agentsh)
            opts="-c -l -i -e -u -x -o -h -V --login --noprofile --norc --ask --help --version check whitelist trust untrust"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__check)
            opts="-h --json --cwd --stdin --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --cwd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__trust)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__untrust)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__whitelist)
            opts="-h --help list ls add rm remove clear"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__whitelist__subcmd__add)
            opts="-h --user --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__whitelist__subcmd__clear)
            opts="-h --user --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__whitelist__subcmd__list)
            opts="-h --json --user --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        agentsh__subcmd__whitelist__subcmd__rm)
            opts="-h --user --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _agentsh -o nosort -o bashdefault -o default agentsh
else
    complete -F _agentsh -o bashdefault -o default agentsh
fi
