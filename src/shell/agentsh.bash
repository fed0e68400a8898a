# agentsh: gate every command line of this interactive bash before it runs.
# Printed by `agentsh init bash`; load it from ~/.bashrc with:
#   eval "$(agentsh init bash)"
# Enter (C-m), C-j and C-o first pass the whole line to `agentsh check --prompt`, which
# allows it, asks the person at this terminal, or refuses it. A refused line is cleared, so
# nothing of it runs, and the reason is printed. An unfinished line (an open quote, `do`
# without `done`) gets a newline and waits for the rest, then the whole text is judged.
# AGENTSH_INTERACTIVE_ASK=refuse refuses instead of asking (for terminals an agent types into,
# where the agent could answer the prompt itself); set when this is loaded, a line cannot undo it.
#
# The gate depends on nothing a gated line can change (rt8 C3): its names are read-only; every
# keymap (emacs, vi-insert, vi-command) sends those keys through it; the only keys that accept a
# line are ones chosen at random here and known to readline alone (a line that reads readline's
# bindings, `bind`, needs a person); the readline commands that run or accept text without the
# gate are unbound; and before each prompt all of this is set again. Less runs in its secure mode
# (`LESSSECURE=1`), as agentsh gives a command it runs with no box (rt8 C4).
if [[ $- == *i* ]] && [[ -z ${__agentsh_loaded-} ]]; then
  readonly __agentsh_loaded=1
  readonly __agentsh_bin=@AGENTSH@
  if [[ ${AGENTSH_INTERACTIVE_ASK-} == refuse ]]; then readonly __agentsh_refuse=1; else readonly __agentsh_refuse=; fi
  if [[ -o emacs || -o vi ]]; then readonly __agentsh_editing=1; else readonly __agentsh_editing=; fi
  @PAGERS@
  # $1: the key that accepts the line, $2: the one that accepts it and fetches the next (C-o).
  __agentsh_gate() {
    local line=$READLINE_LINE
    # The prompt hook first, and never taken away: PROMPT_COMMAND is read-only from the first
    # line on, once the rest of ~/.bashrc has added its own.
    [[ ${PROMPT_COMMAND-} == __agentsh_prompt* ]] || PROMPT_COMMAND="__agentsh_prompt${PROMPT_COMMAND:+; $PROMPT_COMMAND}"
    readonly PROMPT_COMMAND
    bind "\"$1\": accept-line"
    bind "\"$2\": operate-and-get-next"
    [[ -z ${line//[[:space:]]/} ]] && return 0
    local err
    if ! err=$(command bash -n -c "$line" 2>&1 </dev/null); then
      case $err in
        *"unexpected end of file"* | *"unexpected EOF"*)
          # Wait for the rest: the key after the gate only moves to the end of the text.
          READLINE_LINE+=$'\n'
          READLINE_POINT=${#READLINE_LINE}
          bind "\"$1\": end-of-line"
          bind "\"$2\": end-of-line"
          return 0 ;;
      esac
    fi
    local refuse=()
    [[ -n $__agentsh_refuse || ${AGENTSH_INTERACTIVE_ASK-} == refuse ]] && refuse=(--refuse)
    if ! "$__agentsh_bin" check --prompt "${refuse[@]}" -- "$line" </dev/null; then
      READLINE_LINE=
      READLINE_POINT=0
    fi
  }
  # A new secret key, to be kept in readline's bindings only: twelve capital letters after C-x.
  __agentsh_secret() {
    local s='\C-x' n i a=ABCDEFGHIJKLMNOPQRSTUVWXYZ
    for n in $(command od -An -N8 -tu4 /dev/urandom); do
      for i in 1 2 3 4 5 6; do s+=${a:n % 26:1}; n=$((n / 26)); done
    done
    printf '%s' "$s"
  }
  # Before each prompt: line editing on, and in every keymap the accepting keys through the gate,
  # nothing else bound to accept or to run text, the secret keys found again in readline's own
  # bindings (new ones where they are gone).
  __agentsh_keys() {
    # Once off, line editing does not come back for this shell's input: nothing would be judged.
    if [[ -n $__agentsh_editing ]] && ! [[ -o emacs || -o vi ]]; then
      printf 'agentsh: line editing was turned off, so no line of this shell can be judged: it ends\n' >&2
      exit 126
    fi
    # History expansion (`!!`, `!$`, `^a^b`) would run other text than the line judged.
    set +o histexpand
    local bound accept next km f re="__agentsh_gate '[\\\\]+(C-x[A-Z]{12})' '[\\\\]+(C-x[A-Z]{12})'"
    bound=$(bind -m emacs -X 2>/dev/null)
    if [[ $bound =~ $re ]]; then
      accept="\\${BASH_REMATCH[1]}" next="\\${BASH_REMATCH[2]}"
    else
      accept=$(__agentsh_secret) next=$(__agentsh_secret)
    fi
    for km in emacs vi-insert vi-command; do
      for f in accept-line operate-and-get-next vi-eof-maybe insert-comment edit-and-execute-command \
        vi-edit-and-execute-command shell-expand-line re-read-init-file start-kbd-macro call-last-kbd-macro \
        print-last-kbd-macro dump-macros dump-functions; do
        bind -m "$km" -u "$f" 2>/dev/null
      done
      bind -m "$km" -x "\"\\C-x\\C-a\": __agentsh_gate '$accept' '$next'"
      bind -m "$km" "\"\\C-m\": \"\\C-x\\C-a$accept\""
      bind -m "$km" "\"\\C-j\": \"\\C-x\\C-a$accept\""
      bind -m "$km" "\"\\C-o\": \"\\C-x\\C-a$next\""
      bind -m "$km" "\"$accept\": accept-line"
      bind -m "$km" "\"$next\": operate-and-get-next"
    done
  }
  readonly -f __agentsh_gate __agentsh_secret __agentsh_keys
  __agentsh_keys
  __agentsh_prompt() { __agentsh_keys; }
  readonly -f __agentsh_prompt
  PROMPT_COMMAND="__agentsh_prompt${PROMPT_COMMAND:+; $PROMPT_COMMAND}"
fi
