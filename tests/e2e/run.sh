#!/usr/bin/env bash
# agentsh with the real agent CLIs, end to end (tests/e2e/agents.py says what is checked).
# usage: tests/e2e/run.sh [--agents claude,codex,gemini] [--wirings hook,shell,init] [--cases ...]
# env:   AGENTSH_BIN   the agentsh to test (default: cargo build --release, the binary it reports)
#        E2E_NPM       where the pinned CLIs are installed once (default /var/tmp/agentsh-e2e-npm;
#                      not under /root or /home, which each run hides)
#        E2E_ROOT      scratch for the runs (default /tmp/agentsh-e2e)
# Needs root or unprivileged user namespaces (unshare), node/npm, python3, git, tmux. With no npm
# registry to install from, it says so and fails: it never passes without running the agents.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export E2E_NPM=${E2E_NPM:-/var/tmp/agentsh-e2e-npm}
export E2E_ROOT=${E2E_ROOT:-/tmp/agentsh-e2e}
# The versions docs/agents.md describes; a new version is verified here before the docs change.
PINNED=("@anthropic-ai/claude-code@2.1.197" "@openai/codex@0.169.0" "@google/gemini-cli@0.61.0")

fail() { echo "e2e: FAIL: $*" >&2; exit 1; }
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq nodejs npm >&2 || fail "node/npm are missing and apt-get could not install them"
  else
    fail "node and npm are needed (apt-get install nodejs npm)"
  fi
fi
# tmux: the agents' UIs run in the person's tmux (apt-get install tmux; .ci/run installs it).
for t in python3 git unshare timeout tmux; do command -v "$t" >/dev/null || fail "$t is needed"; done

installed() {
  for spec in "${PINNED[@]}"; do
    name=${spec%@*}; want=${spec##*@}
    got=$(node -p "require('$E2E_NPM/node_modules/$name/package.json').version" 2>/dev/null || true)
    [ "$got" = "$want" ] || return 1
  done
  for b in claude codex gemini; do [ -x "$E2E_NPM/node_modules/.bin/$b" ] || return 1; done
}
if ! installed; then
  mkdir -p "$E2E_NPM"
  echo "e2e: installing ${PINNED[*]} into $E2E_NPM" >&2
  npm install --prefix "$E2E_NPM" --no-audit --no-fund --loglevel=error "${PINNED[@]}" >&2 \
    || fail "could not install ${PINNED[*]} from the npm registry (is it reachable?)"
  installed || fail "the installed CLIs are not the pinned versions"
fi

if [ -z "${AGENTSH_BIN:-}" ]; then
  # Where Cargo puts it (target/<host>/release/agentsh with .cargo/config.toml's target).
  AGENTSH_BIN=$(cd "$REPO" && cargo build --release --quiet --message-format=json | python3 -c '
import json, sys
print([m["executable"] for m in map(json.loads, sys.stdin)
       if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "agentsh" and m.get("executable")][-1])')
fi
mkdir -p "$E2E_ROOT/bin"
cp "$AGENTSH_BIN" "$E2E_ROOT/bin/agentsh.new" && mv -f "$E2E_ROOT/bin/agentsh.new" "$E2E_ROOT/bin/agentsh"
"$E2E_ROOT/bin/agentsh" --version >&2
exec python3 "$HERE/agents.py" "$@"
