#!/bin/sh
# Time and peak memory of one verdict on hostile inputs (issue 6: each must get a verdict within
# 100 ms and a few MB). A benchmark, not a test: run it by hand on a release build.
#   cargo build --release && sh eval/pathological.sh [path/to/agentsh]
set -eu
# The default build names the host as its target (.cargo/config.toml): target/<host>/release.
bin=${1:-${CARGO_TARGET_DIR:-target}/$(rustc --print host-tuple)/release/agentsh}
[ -x "$bin" ] || { echo "no agentsh binary at $bin (build with cargo build --release)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }
rep() { printf "%${2}s" '' | sed "s/ /$1/g"; }
run() {
    name=$1; text=$2
    # check exits 0/10/11 for a verdict; anything else (a crash) is reported as such.
    /usr/bin/time -f '%e %M' -o /tmp/agentsh-patho.$$ "$bin" check -- "$text" >/dev/null 2>&1 && code=0 || code=$?
    # GNU time puts "Command exited with non-zero status N" first: the figures are the last line.
    set -- $(tail -n 1 /tmp/agentsh-patho.$$)
    secs=$1; kb=$2
    case $code in 0) v=allow ;; 10) v=ask ;; 11) v=deny ;; *) v="CRASH($code)" ;; esac
    awk -v n="$name" -v v="$v" -v s="$secs" -v k="$kb" 'BEGIN { printf "%-34s %-6s %6.0f ms %6.1f MB\n", n, v, s * 1000, k / 1024 }'
}
printf '%-34s %-6s %9s %9s\n' input verdict time peak_rss
run '<<$( ;#' '<<$( ;#'
run '5,000 nested $(' "echo $(rep '$(' 5000)x$(rep ')' 5000)"
run '5,000 nested (' "$(rep '(' 5000)x$(rep ')' 5000)"
run '40 unclosed (' "$(rep '(' 40)"
run 'fd number over i32' "echo x 99999999999>f"
run '64 KiB of words' "echo $(rep 'a ' 32000)"
run 'input over the size limit' "$(rep 'a' 70000)"
# Not caught by a precheck: brush backtracks exponentially, and the 2 s bound (decide::judge_bounded) refuses it.
run 'heredoc, 30 x a$($"x (bounded)' "$(printf 'cat <<EOF\n'; rep 'a$($"x\n' 30; rep ')' 30; printf '\nEOF')"
rm -f /tmp/agentsh-patho.$$
