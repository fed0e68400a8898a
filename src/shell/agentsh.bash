# agentsh: gate every command line of this interactive bash before it runs.
# Printed by `agentsh init bash`; load it from ~/.bashrc with:
#   eval "$(agentsh init bash)"
# Enter (C-m), C-j and C-o first pass the whole line to `agentsh check --prompt`, which
# allows it, asks the person at this terminal, or refuses it. A refused line is cleared, so
# nothing of it runs, and the reason is printed. An unfinished line (an open quote, `do`
# without `done`) gets a newline and waits for the rest, then the whole text is judged.
# AGENTSH_INTERACTIVE_ASK=refuse refuses instead of asking (for terminals an agent types into,
# where the agent could answer the prompt itself).
if [[ $- == *i* ]] && [[ -z ${__agentsh_loaded-} ]]; then
  __agentsh_loaded=1
  __agentsh_bin=@AGENTSH@
  __agentsh_gate() {
    local line=$READLINE_LINE
    bind '"\C-x\C-d": accept-line'
    [[ -z ${line//[[:space:]]/} ]] && return 0
    local err
    if ! err=$(command bash -n -c "$line" 2>&1 </dev/null); then
      case $err in
        *"unexpected end of file"* | *"unexpected EOF"*)
          # Wait for the rest: the key after the gate only moves to the end of the text.
          READLINE_LINE+=$'\n'
          READLINE_POINT=${#READLINE_LINE}
          bind '"\C-x\C-d": end-of-line'
          return 0 ;;
      esac
    fi
    if [[ ${AGENTSH_INTERACTIVE_ASK-} == refuse ]]; then
      local out
      if ! out=$("$__agentsh_bin" check -- "$line" 2>&1 </dev/null); then
        printf '%s\nagentsh: refused (AGENTSH_INTERACTIVE_ASK=refuse): nothing ran\n' "$out" >&2
        READLINE_LINE=
        READLINE_POINT=0
      fi
    elif ! "$__agentsh_bin" check --prompt -- "$line" </dev/null; then
      READLINE_LINE=
      READLINE_POINT=0
    fi
  }
  # Each accepting key runs the gate, then \C-x\C-d, which the gate points at accept-line,
  # or at end-of-line while the text is unfinished.
  bind -x '"\C-x\C-a": __agentsh_gate'
  bind '"\C-m": "\C-x\C-a\C-x\C-d"'
  bind '"\C-j": "\C-x\C-a\C-x\C-d"'
  bind '"\C-o": "\C-x\C-a\C-x\C-d"'
  bind '"\C-x\C-d": accept-line'
fi
