# agentsh: gate every command line of this interactive bash before it runs.
# Printed by `agentsh init bash`; load it from ~/.bashrc with:
#   eval "$(agentsh init bash)"
# Each line is judged after bash has read it and before any of it runs, as bash will run it:
# history expansion done (`!$`), however it was accepted (any key). `agentsh check --prompt`
# allows it, asks the person at this terminal, or refuses it; a refused line is dropped whole
# (function definitions too) and the reason printed.
# AGENTSH_INTERACTIVE_ASK=refuse refuses instead of asking (for terminals an agent types into,
# where the agent could answer the prompt itself); set when this is loaded, a line cannot undo it.
# Less runs in its secure mode (`LESSSECURE=1`), as agentsh gives a command it runs with no box
# (rt8 C4).
#
# How (rt8 C5, C6): the line bash will run is the newest history entry. PS0, which bash expands
# after reading a line and before running it, judges that entry in a command substitution; the
# verdict comes back through an arithmetic assignment, and a refusal interrupts the shell, which
# drops the line. A DEBUG trap (extdebug: a failing trap skips the command; subshells and
# functions inherit it) lets a command run only if its line was judged and allowed, so a line
# that reached no judgement runs nothing. Between the prompt and the line, only key bindings and
# completions the person set up (`bind -x`, `complete`) run; nothing a key starts by itself
# (`edit-and-execute-command`, `shell-expand-line`). Before each prompt all of this is set again.
if [[ $- == *i* ]] && [[ -z ${__agentsh_loaded-} ]]; then
  if ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 404)); then
    printf 'agentsh: the line gate needs bash 4.4 or later (PS0), this is %s: this shell ends\n' "$BASH_VERSION" >&2
    exit 126
  fi
  readonly __agentsh_loaded=1
  readonly __agentsh_bin=@AGENTSH@
  if [[ ${AGENTSH_INTERACTIVE_ASK-} == refuse ]]; then readonly __agentsh_refuse=1; else readonly __agentsh_refuse=; fi
  @PAGERS@
  # The history number of the line judged last (run) and of the one allowed (ok); reading: 1
  # while a prompt is up (2: with no key binding or completion allowed), 0 otherwise.
  __agentsh_run=-1 __agentsh_ok=-1 __agentsh_reading=0 __agentsh_next=1
  # In PS0's command substitution (a child: its variables stay there): the newest history entry,
  # which is the line about to run, is judged. Prints its history number if it may run, else -1
  # (and interrupts the shell). No `return` or `local`, which a line could shadow.
  __agentsh_judge() {
    __agentsh_n=$((HISTCMD - 1)) __agentsh_verdict=-1 __agentsh_flags=()
    [[ -n $__agentsh_refuse || ${AGENTSH_INTERACTIVE_ASK-} == refuse ]] && __agentsh_flags+=(--refuse)
    __agentsh_entry=$(HISTTIMEFORMAT= builtin history 1)
    if ((__agentsh_n <= __agentsh_run)) || ! [[ $__agentsh_entry =~ ^\ *([0-9]+)[\ *]\ (.*)$ ]] ||
      ((BASH_REMATCH[1] != __agentsh_n)); then
      builtin printf 'agentsh: this line is not in the shell history, where agentsh reads what runs: nothing ran\n' >&2
    elif "$__agentsh_bin" check --prompt "${__agentsh_flags[@]}" -- "${BASH_REMATCH[2]}" </dev/null >&2; then
      __agentsh_verdict=$__agentsh_n
    fi
    builtin printf %s "$__agentsh_verdict"
    ((__agentsh_verdict >= 0)) || builtin kill -INT $$
  }
  # The DEBUG trap, before each command: it runs if its line was judged and allowed, or before a
  # prompt (PROMPT_COMMAND, start-up files, the prompt's own substitutions), or, while a prompt is
  # up, in a key binding or completion (`bind -x`, `complete`); agentsh's own functions always.
  # Only shell syntax: no function or builtin a line could shadow (`return() { :; }`) decides.
  readonly __agentsh_trap='((HISTCMD == __agentsh_ok)) ||
    { ((HISTCMD != __agentsh_run)) && { ((__agentsh_reading == 0)) ||
      { ((__agentsh_reading == 1)) && [[ -v READLINE_LINE || -v COMP_LINE ]]; }; }; } ||
    [[ ${FUNCNAME[0]-${BASH_COMMAND#\\}} == __agentsh_prompt || ${FUNCNAME[0]-${BASH_COMMAND#\\}} == __agentsh_seal ||
      ${FUNCNAME[0]-${BASH_COMMAND#\\}} == __agentsh_judge ]]'
  # Before each prompt: the person's own PROMPT_COMMAND, then everything the gate needs set
  # again, and the mark that a prompt is up, at the end of PS1 (after its substitutions).
  __agentsh_prompt() {
    __agentsh_reading=0
    builtin eval "$__agentsh_prompt_rest"
    # (History cannot be turned back on here: bash restores its setting after PROMPT_COMMAND.
    # A line that turns it off, asked, leaves every later line refused.)
    builtin shopt -s cmdhist lithist promptvars extdebug
    HISTCONTROL= HISTIGNORE= 2>/dev/null
    [[ -v HISTSIZE ]] && ((HISTSIZE == 0)) && HISTSIZE=500
    builtin trap "$__agentsh_trap" DEBUG
    builtin trap - INT
    # Set by bash alone while a key binding or completion runs; one a line set would let a key
    # run commands (2: no binding or completion runs until the next prompt).
    builtin unset -v READLINE_LINE COMP_LINE 2>/dev/null
    [[ -v READLINE_LINE || -v COMP_LINE ]] && __agentsh_next=2 || __agentsh_next=1
    PS1=${PS1%"$__agentsh_mark"}$__agentsh_mark 2>/dev/null || __agentsh_reading=$__agentsh_next
  }
  readonly __agentsh_mark='${__agentsh_nil[__agentsh_reading=__agentsh_next]:+}'
  # The person's PROMPT_COMMAND runs inside agentsh's; what the rest of ~/.bashrc adds around it
  # is taken in, in its place, at the first prompt (which runs those parts itself), and then
  # neither can change.
  __agentsh_prompt_rest=
  for __agentsh_e in "${PROMPT_COMMAND[@]}"; do
    __agentsh_prompt_rest+=${__agentsh_e:+$'\n'$__agentsh_e}
  done
  unset __agentsh_e
  PROMPT_COMMAND='\__agentsh_prompt; \__agentsh_seal'
  __agentsh_seal() {
    local e rest=
    for e in "${PROMPT_COMMAND[@]}"; do
      rest+=${rest:+$'\n'}${e//'\__agentsh_prompt; \__agentsh_seal'/"$__agentsh_prompt_rest"}
    done
    __agentsh_prompt_rest=$rest
    PROMPT_COMMAND='\__agentsh_prompt'
    readonly PROMPT_COMMAND __agentsh_prompt_rest
  }
  # Judge the line in PS0; the verdict and the line's number come back by arithmetic. Refused
  # (-1) or no verdict (the substitution failed): nothing of the line runs.
  readonly PS0='${__agentsh_nil[__agentsh_run=HISTCMD-1, __agentsh_ok=-1, __agentsh_ok=$(\__agentsh_judge), __agentsh_reading=0]:+}'"${PS0-}"
  readonly -f __agentsh_judge __agentsh_prompt __agentsh_seal
  set -o history
  __agentsh_prompt
fi
