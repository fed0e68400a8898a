# agentsh: gate every command line of this interactive zsh before it runs.
# Printed by `agentsh init zsh`; load it from ~/.zshrc with:
#   eval "$(agentsh init zsh)"
# The accept-line widget (Enter), and the other widgets that accept a line (accept-and-hold,
# accept-line-and-down-history, accept-and-infer-next-history), pass the whole text, with any
# unfinished lines before it, to `agentsh check --prompt`, which allows it, asks the person at
# this terminal, or refuses it. A refused line is cleared, so nothing of it runs, and the reason
# is printed. AGENTSH_INTERACTIVE_ASK=refuse refuses instead of asking (for terminals an agent
# types into); set when this is loaded, a line cannot undo it.
#
# The gate depends on nothing a gated line can change (rt8 C3): its names are read-only, the
# keys of the widgets that run a widget by name (`execute-named-cmd`, through which
# `.accept-line` could be reached) are taken away, and before each prompt the widgets and the
# gate's function are set again. After the line is read, before it runs, `preexec` judges it
# again where it is not the text the widget judged (history expansion, a widget not wrapped), and
# drops it if refused (rt8 C5, C6). Less runs in its secure mode (`LESSSECURE=1`), as agentsh gives a command it runs with
# no box (rt8 C4).
if [[ -o interactive ]] && [[ -z ${__agentsh_loaded-} ]]; then
  typeset -gr __agentsh_loaded=1
  typeset -gr __agentsh_bin=@AGENTSH@
  if [[ ${AGENTSH_INTERACTIVE_ASK-} == refuse ]]; then typeset -gr __agentsh_refuse=1; else typeset -gr __agentsh_refuse=; fi
  if [[ -o zle ]]; then typeset -gr __agentsh_editing=1; else typeset -gr __agentsh_editing=; fi
  @PAGERS@
  __agentsh_accept_line() {
    local text="$PREBUFFER$BUFFER"
    (( ${precmd_functions[(I)__agentsh_widgets]} )) || precmd_functions=(__agentsh_widgets $precmd_functions)
    if [[ -z ${text//[[:space:]]/} ]]; then
      zle .$WIDGET
      return
    fi
    # Unfinished text (an open quote, `do` without `done`): zsh runs nothing of it yet and
    # asks for the rest; the whole text is judged when it is complete.
    local err
    if ! err=$(command zsh -n -c "$text" 2>&1 </dev/null); then
      case $err in
        *unmatched* | *"near \`"(do|then|else|elif|in|\{|\(|\||\|\||\&\&)"'"*)
          zle .$WIDGET
          return ;;
      esac
    fi
    local refuse=()
    [[ -n $__agentsh_refuse || ${AGENTSH_INTERACTIVE_ASK-} == refuse ]] && refuse=(--refuse)
    zle -I
    if ! "$__agentsh_bin" check --prompt $refuse -- "$text" </dev/null; then
      BUFFER=
      zle .send-break
      return
    fi
    typeset -g __agentsh_judged=$text
    zle .$WIDGET
  }
  typeset -gr __agentsh_gate_body=$functions[__agentsh_accept_line]
  # Before each prompt: line editing on, the widgets through the gate, the gate as it was loaded.
  __agentsh_widgets() {
    if [[ -n $__agentsh_editing && ! -o zle ]]; then
      print -ru2 -- "agentsh: line editing was turned off, so no line of this shell can be judged: it ends"
      exit 126
    fi
    functions[__agentsh_accept_line]=$__agentsh_gate_body
    local w
    for w in accept-line accept-and-hold accept-line-and-down-history accept-and-infer-next-history; do
      zle -N $w __agentsh_accept_line
    done
    # zsh keeps execute-named-cmd (which reaches `.accept-line` by name) from being redefined:
    # its keys, and execute-last-named-cmd's, are taken away instead.
    bindkey -M emacs -r '^[x' '^[z' 2>/dev/null
    bindkey -M vicmd -r ':' 2>/dev/null
  }
  __agentsh_widgets
  precmd_functions=(__agentsh_widgets ${precmd_functions:#__agentsh_widgets})
  # After a line is read and before it runs (rt8 C5, C6): the line as zsh runs it, history
  # expansion done (`!$`), whatever accepted it. The widget's judgement stands for the very text
  # it judged; any other is judged here, and a refused line is dropped whole (function
  # definitions too) by an interrupt.
  __agentsh_preexec() {
    local text=${1:-$3} judged=$__agentsh_judged
    typeset -g __agentsh_judged=
    [[ -n $judged && $text == "$judged" ]] && return
    local refuse=()
    [[ -n $__agentsh_refuse || ${AGENTSH_INTERACTIVE_ASK-} == refuse ]] && refuse=(--refuse)
    "$__agentsh_bin" check --prompt $refuse -- "$text" </dev/null && return
    builtin kill -INT $$
  }
  # Before each prompt: the judge first among preexec's functions, and an interrupt that drops
  # the line (no trap of a line's own on it).
  __agentsh_rearm() {
    functions[__agentsh_preexec]=$__agentsh_preexec_body
    preexec_functions=(__agentsh_preexec ${preexec_functions:#__agentsh_preexec})
    builtin trap - INT
    (( ${+functions[TRAPINT]} )) && builtin unfunction TRAPINT
    return 0
  }
  typeset -gr __agentsh_preexec_body=$functions[__agentsh_preexec]
  typeset -g __agentsh_judged=
  __agentsh_rearm
  precmd_functions=(__agentsh_rearm ${precmd_functions:#__agentsh_rearm})
fi
