# agentsh: gate every command line of this interactive zsh before it runs.
# Printed by `agentsh init zsh`; load it from ~/.zshrc with:
#   eval "$(agentsh init zsh)"
# The accept-line widget (Enter) passes the whole text, with any unfinished lines before it,
# to `agentsh check --prompt`, which allows it, asks the person at this terminal, or refuses
# it. A refused line is cleared, so nothing of it runs, and the reason is printed.
# AGENTSH_INTERACTIVE_ASK=refuse refuses instead of asking (for terminals an agent types into).
if [[ -o interactive ]] && [[ -z ${__agentsh_loaded-} ]]; then
  typeset -g __agentsh_loaded=1
  typeset -g __agentsh_bin=@AGENTSH@
  __agentsh_accept_line() {
    local text="$PREBUFFER$BUFFER"
    if [[ -z ${text//[[:space:]]/} ]]; then
      zle .accept-line
      return
    fi
    # Unfinished text (an open quote, `do` without `done`): zsh runs nothing of it yet and
    # asks for the rest; the whole text is judged when it is complete.
    local err
    if ! err=$(command zsh -n -c "$text" 2>&1 </dev/null); then
      case $err in
        *unmatched* | *"near \`"(do|then|else|elif|in|\{|\(|\||\|\||\&\&)"'"*)
          zle .accept-line
          return ;;
      esac
    fi
    local ok=0
    if [[ ${AGENTSH_INTERACTIVE_ASK-} == refuse ]]; then
      local out
      out=$("$__agentsh_bin" check -- "$text" 2>&1 </dev/null) || ok=1
      (( ok )) && print -ru2 -- "$out" "agentsh: refused (AGENTSH_INTERACTIVE_ASK=refuse): nothing ran"
    else
      zle -I
      "$__agentsh_bin" check --prompt -- "$text" </dev/null || ok=1
    fi
    if (( ok )); then
      BUFFER=
      zle .send-break
      return
    fi
    zle .accept-line
  }
  zle -N accept-line __agentsh_accept_line
fi
