#!/usr/bin/env bash
# Whole-process benchmarks of agentsh against dash and bash (and shellfirm / dcg when they are
# installed), with peak RSS, the cost of the sandbox itself and bubblewrap's for comparison.
# Writes the results into docs/BENCHMARKS.md between its "compare.sh" markers and prints them.
# A benchmark, not a test: it never fails on slow numbers.
#
#   apt-get install -y hyperfine time bubblewrap   # once (valgrind is optional: instruction counts)
#   bench/compare.sh                       # installs agentsh as README says, runs everything
#   bench/compare.sh --quick               # fewer runs, for a first look
#   bench/compare.sh --dynamic             # also a dynamically linked build, for comparison
#   AGENTSH=/path/to/agentsh bench/compare.sh   # time a binary you built yourself
#
# The targets are judged on the binary README's install command gives, `cargo install --path .
# --target <arch>-unknown-linux-musl` (into a scratch root; it builds in target/ like `cargo build
# --release`): static, no dynamic loader work at start. Where rustup has no musl target, the
# glibc build (`cargo install --path .`, static through .cargo/config.toml) is timed, and said.
# Every ratio is taken within one run from interleaved rounds; medians are reported.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

runs=300
warmup=1
dynamic=0
for arg in "$@"; do
    case "$arg" in
        --quick) runs=50 warmup=1 ;;
        --dynamic) dynamic=1 ;;
        -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        *) echo "compare.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

for tool in hyperfine python3 dash bash bwrap git; do
    command -v "$tool" >/dev/null ||
        { echo "compare.sh: $tool is missing (apt-get install -y hyperfine time dash bubblewrap)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "compare.sh: /usr/bin/time is missing (apt-get install -y time)" >&2; exit 1; }

# A scratch world: no user config, no project config, so the built-in policy applies.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

# The path of the agentsh executable that `cargo build "$@"` makes, as Cargo reports it.
build() {
    cargo build --release --quiet --message-format=json "$@" | python3 -c '
import json, sys
print([m["executable"] for m in map(json.loads, sys.stdin)
       if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "agentsh" and m.get("executable")][-1])'
}
# Timed as installed: `cargo install` (and `install`) copy the binary, and a copied file runs
# about 0.15 ms faster per start than the linker's own output file (same bytes; the linker
# writes its output piecemeal, and the kernel then maps it into processes in smaller pieces:
# about 12 page faults more per start, measured here).
mkdir -p "$work/bin"
if [ -z "${AGENTSH:-}" ]; then
    musl="$(uname -m)-unknown-linux-musl"
    BUILT="cargo install --path . --target $musl"
    if ! rustup target list --installed 2>/dev/null | grep -qx "$musl"; then
        echo "compare.sh: rustup has no $musl target (rustup target add $musl): timing the glibc build" >&2
        BUILT="cargo install --path ."
    fi
    echo "installing agentsh as README says ($BUILT)..." >&2
    # shellcheck disable=SC2086 # BUILT's words are the command's arguments
    cargo ${BUILT#cargo } --quiet --root "$work/install" 2>&1 | grep -v "to your PATH" >&2 || true
    [ -x "$work/install/bin/agentsh" ] || { echo "compare.sh: $BUILT failed" >&2; exit 1; }
    install -m 755 "$work/install/bin/agentsh" "$work/bin/agentsh"
else
    [ -x "$AGENTSH" ] || { echo "compare.sh: $AGENTSH is not an executable" >&2; exit 1; }
    BUILT=$AGENTSH
    install -m 755 "$AGENTSH" "$work/bin/agentsh"
fi
AGENTSH="$work/bin/agentsh"
# --dynamic: the same code linked dynamically (in its own target directory, so the static
# build's files stay as they are).
AGENTSH_DYNAMIC="" BUILT_DYNAMIC=""
if [ "$dynamic" = 1 ]; then
    echo "building a dynamically linked release binary..." >&2
    BUILT_DYNAMIC=$(RUSTFLAGS="-C target-feature=-crt-static" build --target-dir "$target_dir/dynamic")
    install -m 755 "$BUILT_DYNAMIC" "$work/bin/agentsh-dynamic"
    AGENTSH_DYNAMIC="$work/bin/agentsh-dynamic"
fi
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" NO_COLOR=1
mkdir -p "$HOME" "$work/plain" "$work/big/.agents" "$work/json" "$work/examples/.agents"
# Projects, as an agent's are: the box grants a workspace only to a git repository (issue 25),
# and a command that starts in a plain directory of /tmp has no box at all.
for d in plain big examples; do git init -q "$work/$d"; done
unset AGENTSH_ASK

# The command set. COMPOUND is a typical agent command that the default policy allows, so
# agentsh really runs it (through bash, as it must for a pipeline). CHECK is ~100 characters.
COMPOUND='ls -la /usr | grep -c lib && echo done'
CHECK='cd src && grep -rn TODO . | sort | uniq -c | sort -rn | head -20 && git status --short && ls -la ../t'
DENY='echo start; rm -rf / --no-preserve-root'

# 10,000 whitelist entries and 1,000 custom rules (a third each deny, ask, allow; half with a
# hasFlag condition) that match nothing above, so every part is checked against all of them.
# "examples" is the same with a `match` and a `notMatch` example on every rule: agentsh checks
# them each time it reads the file, so they cost two parses per rule on every command.
mkdir -p "$work/examples/.agents"
python3 - "$work/big/.agents/terminal.json" "$work/examples/.agents/terminal.json" <<'PY'
import json, sys
entries = [f"tool{i} sub{i % 7} --flag" for i in range(10_000)]
decisions = ["deny", "ask", "allow"]
rules = [dict({"pattern": [f"prog{i}", ["run", "exec"]], "decision": decisions[i % 3], "reason": f"rule {i}"},
              **({"hasFlag": ["--force", "-f"]} if i % 2 else {})) for i in range(1_000)]
json.dump({"commandWhitelist": entries, "rules": rules}, open(sys.argv[1], "w"), indent=1)
for i, r in enumerate(rules):
    r["match"] = [f"prog{i} run x" + (" -f" if i % 2 else "")]
    r["notMatch"] = [f"prog{i} stop"]
json.dump({"commandWhitelist": entries, "rules": rules}, open(sys.argv[2], "w"), indent=1)
PY
# The person trusts both project files, as `agentsh trust` would record it (an untrusted
# project file's whitelist is ignored): SHA-256 of the canonical path, a NUL and the content,
# in the scratch $HOME's ~/.local/share/agentsh/trust.json.
mkdir -p "$HOME/.local/share/agentsh"
python3 - "$HOME/.local/share/agentsh/trust.json" "$work/big/.agents/terminal.json" \
    "$work/examples/.agents/terminal.json" <<'PY'
import hashlib, json, os, sys
records = {}
for path in sys.argv[2:]:
    canon = os.path.realpath(path)
    digest = hashlib.sha256(canon.encode() + b"\0" + open(path, "rb").read()).hexdigest()
    records[canon] = {"sha256": digest}
json.dump(records, open(sys.argv[1], "w"))
PY
chmod 600 "$HOME/.local/share/agentsh/trust.json"
CUSTOM_RULES=1000
# A trusted file is hashed on every command until it has been unchanged for trust::SETTLED
# (2 s); after that the first command keeps its stat in the trust record and later ones
# compare the stat instead. Time the steady state, as a person's config that was written
# more than two seconds ago.
sleep 2.5

# Long inputs for the growth check: the same unit repeated up to the 64 KiB limit.
for kib in 1 8 32 63; do
    python3 - "$kib" >"$work/long-$kib.txt" <<'PY'
import sys
unit = "echo word$i && ls -la dir | grep x; "
sys.stdout.write(unit * (int(sys.argv[1]) * 1024 // len(unit)))
PY
done

results="$work/results"
mkdir -p "$results"
# Cases are registered first and timed in interleaved rounds (every case once per round), so a
# burst of load on this shared machine hits agentsh and the shell it is compared with alike.
# A case runs in its directory with the variables in $case_env (assignments, quoted) exported.
names=() dirs=() cmds=() envs=()
case_env=""
case_() {
    local name=$1 dir=$2
    shift 2
    names+=("$name") dirs+=("$dir") cmds+=("$(printf '%q ' "$@")") envs+=("$case_env")
}
# Runs case $1's command line ($2, which names the command as "$cmd") where and as the case runs.
in_case() {
    local i=$1
    (cd "${dirs[$i]}" && { [ -z "${envs[$i]}" ] || eval "export ${envs[$i]}"; } && cmd=${cmds[$i]} && eval "$2")
}
case_ bare_true "$work/plain" /bin/true
# The normal path: the command runs in the sandbox (the built-in policy turns it on).
case_ true_agentsh "$work/plain" "$AGENTSH" -c /bin/true
case_ true_dash "$work/plain" dash -c /bin/true
case_ true_bash "$work/plain" bash -c /bin/true
# The box's own cost: the same command with the sandbox turned on and off in a private user
# config (a scratch $HOME each). Both read a config file of the same size, so the difference is
# the box alone. Twice: with $HOME in /tmp, like the other cases (/tmp is writable in the box, so
# agentsh's own directories there are hidden with mounts), and with $HOME outside every writable
# root, as /home/you is (the box then leaves agentsh's directories out with Landlock rules, by
# granting every sibling on the way down from / instead: its cost grows with those directories).
# The second $HOME is beside this checkout: outside every git work tree, as a home is (one
# inside a work tree is no home to agentsh: its directories there could be a box's, rt6b G5).
outside=$(mktemp -d -p "$(dirname "$repo")" .agentsh-compare-home.XXXXXX) ||
    { echo "compare.sh: cannot make a scratch home beside $repo" >&2; exit 1; }
trap 'rm -rf "$work" "$outside"' EXIT
for where in tmp outside; do
    for on in true false; do
        home="$work/box-$on"
        [ "$where" = tmp ] || home="$outside/box-$on"
        mkdir -p "$home/.config/agentsh"
        printf '{"sandbox": {"enabled": %-5s}}\n' "$on" >"$home/.config/agentsh/config.json"
        case_env="HOME=$(printf %q "$home") XDG_CONFIG_HOME=$(printf %q "$home/.config")"
        case_ "true_box_${on}_$where" "$work/plain" "$AGENTSH" -c /bin/true
    done
done
case_env=""
# Bubblewrap's lightest box of the same command, for comparison.
case_ true_bwrap "$work/plain" bwrap --ro-bind / / --dev /dev --proc /proc /bin/true
if [ -n "$AGENTSH_DYNAMIC" ]; then
    case_ true_dynamic "$work/plain" "$AGENTSH_DYNAMIC" -c /bin/true
    case_ check_dynamic "$work/plain" "$AGENTSH_DYNAMIC" check --json -- "$CHECK"
fi
case_ compound_agentsh "$work/plain" "$AGENTSH" -c "$COMPOUND"
case_ compound_bash "$work/plain" bash -c "$COMPOUND"
case_ check_agentsh "$work/plain" "$AGENTSH" check --json -- "$CHECK"
case_ deny_agentsh "$work/plain" "$AGENTSH" check --json -- "$DENY"
case_ whitelist_agentsh "$work/big" "$AGENTSH" check --json -- "$CHECK"
case_ examples_agentsh "$work/examples" "$AGENTSH" check --json -- "$CHECK"
for kib in 1 8 32 63; do
    case_ "long_$kib" "$work/plain" "$AGENTSH" check --json -- "$(cat "$work/long-$kib.txt")"
done

# Peers, when installed. Each gets the same command text; their own verdict forms differ.
peers=""
if command -v shellfirm >/dev/null; then
    peers="$peers shellfirm"
    case_ check_shellfirm "$work/plain" shellfirm check --format json --command "$CHECK"
    case_ deny_shellfirm "$work/plain" shellfirm check --format json --command "$DENY"
fi
if command -v dcg >/dev/null; then
    peers="$peers dcg"
    case_ check_dcg "$work/plain" dcg test --dialect posix --format json "$CHECK"
    case_ deny_dcg "$work/plain" dcg test --dialect posix --format json "$DENY"
fi

# Whether each `-c /bin/true` case really enters a Landlock domain (strace sees
# landlock_restrict_self), so the box row compares a boxed run with an unboxed one. The command
# enters it in the child agentsh starts in the box (`strace -f`), which then execs; `-b execve`
# lets go of each process at its exec, so a box built here (whose holder, exec'd by its builder,
# stays for minutes) does not keep strace waiting.
boxed=""
if command -v strace >/dev/null; then
    for i in "${!names[@]}"; do
        case "${names[$i]}" in true_agentsh | true_box_* | true_dynamic) ;; *) continue ;; esac
        in_case "$i" 'eval "strace -f -b execve -qq -e trace=landlock_restrict_self -o \"\$work/strace\" $cmd"' >/dev/null 2>&1 </dev/null || true
        n=$(grep -c "landlock_restrict_self(.*= 0" "$work/strace" 2>/dev/null || true)
        boxed="$boxed ${names[$i]}=${n:-0}"
    done
    echo "Landlock domains entered (strace):$boxed" >&2
fi

# Short rounds: a burst of load then lands on every command alike instead of on one of them.
rounds=$((runs / 10))
per_round=10
echo "timing ${#names[@]} commands: $rounds interleaved rounds of $per_round runs each..." >&2
for round in $(seq "$rounds"); do
    for i in "${!names[@]}"; do
        in_case "$i" 'hyperfine -N -i --style none --warmup "$warmup" --runs "$per_round" \
            --export-json "$results/${names[$i]}.$round.json" "$cmd" >/dev/null 2>&1 </dev/null' ||
            echo "compare.sh: could not time ${names[$i]}" >&2
    done
done
# Peak RSS (KiB) from /usr/bin/time -v, once per command.
for i in "${!names[@]}"; do
    in_case "$i" 'eval "/usr/bin/time -v $cmd" >/dev/null 2>"$results/${names[$i]}.rss" </dev/null' || true
done

# `-c` of the longest script, for its peak RSS only: it really runs the script (about 5,000
# short processes through /bin/sh), too slow to time over and over.
(cd "$work/plain" && /usr/bin/time -v "$AGENTSH" -c "$(cat "$work/long-63.txt")" >/dev/null 2>"$results/run_long_63.rss" </dev/null) || true
grep -q "Maximum resident" "$results/run_long_63.rss" || tail -3 "$results/run_long_63.rss" >&2

# Instruction counts (deterministic, unlike times) when valgrind is there.
if command -v valgrind >/dev/null; then
    echo "counting instructions (valgrind)..." >&2
    # The registered cases whose instructions the tables show, run as they were timed.
    counted=" true_agentsh check_agentsh whitelist_agentsh examples_agentsh long_1 long_8 long_32 long_63 true_dash true_dynamic check_dynamic "
    for i in "${!names[@]}"; do
        case "$counted" in *" ${names[$i]} "*) ;; *) continue ;; esac
        in_case "$i" 'eval "valgrind --tool=callgrind --dump-before=execvp \
            --callgrind-out-file=\"\$results/${names[$i]}.cg\" $cmd" >/dev/null 2>"$results/${names[$i]}.vg" </dev/null' || true
    done
fi

python3 - "$results" "$repo/docs/BENCHMARKS.md" "$AGENTSH" "$runs" "$CUSTOM_RULES" "$peers" "$COMPOUND" "$CHECK" "$DENY" \
    "$BUILT_DYNAMIC" "$BUILT" "$boxed" <<'PY'
import glob, json, os, platform, re, subprocess, sys, datetime
results, doc, binary, runs, custom_rules, peers = sys.argv[1:7]
compound, check, deny, dynamic, built, boxed = sys.argv[7:13]
boxed = dict(b.split("=") for b in boxed.split())
built_by = f"`{built}`" if built.startswith("cargo ") else f"`{os.path.relpath(built)}`"

def all_times(name):
    times = []
    for path in glob.glob(f"{results}/{name}.*.json"):
        try:
            times += json.load(open(path))["results"][0]["times"]
        except (OSError, KeyError, IndexError, ValueError):
            pass
    return sorted(times)

def median(name):
    times = all_times(name)
    n = len(times)
    if n == 0:
        return None
    return (times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2) * 1000

def cpu(name):
    rounds = []
    for path in glob.glob(f"{results}/{name}.*.json"):
        try:
            r = json.load(open(path))["results"][0]
            rounds.append(r["user"] + r["system"])
        except (OSError, KeyError, IndexError, ValueError):
            pass
    return sum(rounds) / len(rounds) * 1000 if rounds else None

def fastest(name):
    times = all_times(name)
    return times[0] * 1000 if times else None

def rss(name):
    try:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(f"{results}/{name}.rss").read())
        # /usr/bin/time reports KiB; shown in MiB (2^20 bytes), the unit it counts in. The
        # decimal figure (10^6 bytes) is 4.9% higher.
        return int(m.group(1)) / 1024 if m else None
    except OSError:
        return None

def instructions(name):
    total = 0
    for path in glob.glob(f"{results}/{name}.cg*"):
        for line in open(path, errors="replace"):
            if line.startswith("summary:"):
                total += int(line.split()[1])
    return total or None

def linkage(path):
    """Static or dynamic, from `file`: a static-pie binary has no program interpreter."""
    try:
        out = subprocess.run(["file", "-bL", path], capture_output=True, text=True).stdout
    except OSError:
        return "linkage unknown"
    return "statically linked" if "static" in out else "dynamically linked" if "dynamic" in out else "linkage unknown"

def ms(v):
    return "n/a" if v is None else f"{v:.2f} ms"

def mb(v):
    return "n/a" if v is None else f"{v:.1f} MiB"

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

def verdict(ok):
    return "n/a" if ok is None else ("met" if ok else "**not met**")

t = {n: median(n) for n in {os.path.basename(p).split(".")[0] for p in glob.glob(f"{results}/*.json")}}
true_dash = ratio(t.get("true_agentsh"), t.get("true_dash"))
true_bash = ratio(t.get("true_agentsh"), t.get("true_bash"))
comp = ratio(t.get("compound_agentsh"), t.get("compound_bash"))
peak = max([v for v in (rss(n) for n in t if n.endswith("_agentsh")) if v] or [0]) or None
peak_long = rss("long_63")

def paired(a, b):
    """Median over rounds of (a's median - b's median) in that round: both ran within the same
    second or so, so a burst of load that hits one round hits both."""
    diffs = []
    for path in glob.glob(f"{results}/{a}.*.json"):
        other = path.replace(f"/{a}.", f"/{b}.")
        try:
            x, y = (sorted(json.load(open(f))["results"][0]["times"]) for f in (path, other))
        except (OSError, KeyError, IndexError, ValueError):
            continue
        diffs.append((x[len(x) // 2] - y[len(y) // 2]) * 1000)
    diffs.sort()
    return diffs[len(diffs) // 2] if diffs else None

def box(where):
    on, off = f"true_box_true_{where}", f"true_box_false_{where}"
    d, c = paired(on, off), None if cpu(on) is None or cpu(off) is None else cpu(on) - cpu(off)
    return f"{ms(t.get(on))} vs {ms(t.get(off))}: {ms(d)} (CPU time: {ms(c)})", verdict(None if d is None else d <= 0.1)
bwrap_dash = ratio(t.get("true_bwrap"), t.get("true_dash"))
rows = [
    ("`agentsh -c /bin/true` (in the sandbox) vs `dash -c /bin/true`", "<= 1.0x",
     f"{ms(t.get('true_agentsh'))} vs {ms(t.get('true_dash'))}",
     "n/a" if true_dash is None else f"{true_dash:.2f}x", verdict(None if true_dash is None else true_dash <= 1.0)),
    ("`agentsh -c /bin/true` vs `bash -c /bin/true`", "<= 0.8x", f"{ms(t.get('true_agentsh'))} vs {ms(t.get('true_bash'))}",
     "n/a" if true_bash is None else f"{true_bash:.2f}x", verdict(None if true_bash is None else true_bash <= 0.8)),
    ("the box itself: `agentsh -c /bin/true` with `sandbox.enabled` true minus false in the user config, "
     "$HOME in /tmp (median of the rounds' differences; CPU time: difference of means)", "<= 0.1 ms",
     box("tmp")[0], "", box("tmp")[1]),
    ("same, $HOME outside the writable roots (as /home/you)", "<= 0.1 ms", box("outside")[0], "", box("outside")[1]),
    ("`bwrap --ro-bind / / --dev /dev --proc /proc /bin/true` vs `dash -c /bin/true`", "(for comparison)",
     f"{ms(t.get('true_bwrap'))} vs {ms(t.get('true_dash'))}", "n/a" if bwrap_dash is None else f"{bwrap_dash:.2f}x", ""),
]
if dynamic:
    r = ratio(t.get("true_dynamic"), t.get("true_dash"))
    rows.append(("same, dynamically linked build (`--dynamic`), vs `dash -c /bin/true`", "<= 1.0x",
                 f"{ms(t.get('true_dynamic'))} vs {ms(t.get('true_dash'))}", "n/a" if r is None else f"{r:.2f}x",
                 verdict(None if r is None else r <= 1.0)))
rows += [
    ("`agentsh -c COMPOUND` vs `bash -c COMPOUND`", "<= 1.5x", f"{ms(t.get('compound_agentsh'))} vs {ms(t.get('compound_bash'))}",
     "n/a" if comp is None else f"{comp:.2f}x", verdict(None if comp is None else comp <= 1.5)),
    ("`agentsh check --json` of CHECK (100 chars)", "<= 1 ms", ms(t.get("check_agentsh")), "",
     verdict(None if t.get("check_agentsh") is None else t["check_agentsh"] <= 1.0)),
    (f"same, 10,000 whitelist entries + {int(custom_rules):,} custom rules", "<= 3 ms", ms(t.get("whitelist_agentsh")), "",
     verdict(None if t.get("whitelist_agentsh") is None else t["whitelist_agentsh"] <= 3.0)),
    ("same, every rule with `match`/`notMatch` examples", "<= 3 ms", ms(t.get("examples_agentsh")), "",
     verdict(None if t.get("examples_agentsh") is None else t["examples_agentsh"] <= 3.0)),
    ("peak RSS, any agentsh run above", "<= 8 MiB", mb(peak), "", verdict(None if peak is None else peak <= 8.0)),
    ("peak RSS, `check --json` of a 63 KiB script", "<= 8 MiB", mb(peak_long), "",
     verdict(None if peak_long is None else peak_long <= 8.0)),
    ("peak RSS, `-c` of the same script (judged, recorded, then run by /bin/sh)", "<= 8 MiB", mb(rss("run_long_63")), "",
     verdict(None if rss("run_long_63") is None else rss("run_long_63") <= 8.0)),
]
for peer in peers.split():
    for case in ("check", "deny"):
        r = ratio(t.get(f"{case}_{peer}"), t.get(f"{case}_agentsh"))
        rows.append((f"{peer} on the {case.upper()} text vs agentsh check --json", ">= 5x slower",
                     f"{ms(t.get(f'{case}_{peer}'))} vs {ms(t.get(f'{case}_agentsh'))}",
                     "n/a" if r is None else f"{r:.1f}x", verdict(None if r is None else r >= 5)))

labels = {
    "bare_true": "`/bin/true`", "true_agentsh": "`agentsh -c /bin/true` (in the sandbox)", "true_dash": "`dash -c /bin/true`",
    "true_bash": "`bash -c /bin/true`", "compound_agentsh": "`agentsh -c COMPOUND`", "compound_bash": "`bash -c COMPOUND`",
    "check_agentsh": "`agentsh check --json -- CHECK`", "deny_agentsh": "`agentsh check --json -- DENY`",
    "true_box_true_tmp": "`agentsh -c /bin/true`, `sandbox.enabled: true` in the user config, $HOME in /tmp",
    "true_box_false_tmp": "`agentsh -c /bin/true`, `sandbox.enabled: false` in the user config, $HOME in /tmp",
    "true_box_true_outside": "`agentsh -c /bin/true`, `sandbox.enabled: true`, $HOME outside the writable roots",
    "true_box_false_outside": "`agentsh -c /bin/true`, `sandbox.enabled: false`, $HOME outside the writable roots",
    "true_bwrap": "`bwrap --ro-bind / / --dev /dev --proc /proc /bin/true`",
    "true_dynamic": "`agentsh -c /bin/true`, dynamically linked build",
    "check_dynamic": "`agentsh check --json -- CHECK`, dynamically linked build",
    "whitelist_agentsh": "`agentsh check --json -- CHECK`, 10,000 whitelist entries + 1,000 rules",
    "examples_agentsh": "same, every rule with a `match` and a `notMatch` example",
    "check_shellfirm": "`shellfirm check --format json --command CHECK`", "deny_shellfirm": "`shellfirm check --format json --command DENY`",
    "check_dcg": "`dcg test --dialect posix --format json CHECK`",
    "deny_dcg": "`dcg test --dialect posix --format json DENY`",
}
for k in ["1", "8", "32", "63"]:
    labels[f"long_{k}"] = f"`agentsh check --json` of a {k} KiB script"

out = ["<!-- compare.sh:begin (generated by bench/compare.sh; edits here are overwritten) -->", ""]
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
load = os.getloadavg()[0]
out += [
    f"Run on {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}: {cpu_model}, {os.cpu_count()} cores, "
    f"Linux {platform.release()}, load average {load:.1f} at the end; {runs} runs per command in interleaved rounds of 10 "
    "(hyperfine -N), median.",
    f"Binary: {built_by}, {os.path.getsize(binary) / 1024:.0f} KiB, {linkage(binary)}"
    + ("" if not dynamic else f"; dynamically linked build `{os.path.relpath(dynamic)}`, {os.path.getsize(dynamic) / 1024:.0f} KiB")
    + "; each timed as an installed copy (`install -m 755`).",
    "",
    "| target | goal | measured (median) | ratio | |",
    "|---|---|---|---|---|",
]
out += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
if boxed:
    out += ["", "Landlock domains entered by one run (`strace -f -e trace=landlock_restrict_self`): "
            + ", ".join(f"{labels.get(n, n)}: {c}" for n, c in boxed.items()) + "."]
if not peers.split():
    out += ["", "Neither shellfirm nor dcg is installed here, so they are not compared (`cargo install shellfirm`)."]

out += ["", "Every timed command: median wall time; fastest run and mean CPU time (user + system), which",
        "waiting for a busy CPU does not inflate; peak RSS:", "",
        "| command | median | fastest | CPU time | peak RSS |", "|---|---|---|---|---|"]
for name, label in labels.items():
    if name in t:
        out.append(f"| {label} | {ms(t[name])} | {ms(fastest(name))} | {ms(cpu(name))} | {mb(rss(name))} |")

longs = [(int(k), t.get(f"long_{k}")) for k in ("1", "8", "32", "63") if t.get(f"long_{k}") is not None]
if len(longs) >= 2 and t.get("check_agentsh") is not None:
    # The 100-character check stands for everything that does not grow with length.
    base, base_i = t["check_agentsh"], instructions("check_agentsh")
    out += ["", "Growth with command length: the cost above a 100-character check, per KiB of script",
            "(linear growth keeps the per-KiB columns flat):", "",
            "| size | median | per KiB | instructions | per KiB |", "|---|---|---|---|---|"]
    for k, v in longs:
        i = instructions(f"long_{k}")
        per_i = "n/a" if not (i and base_i) else f"{(i - base_i) / k:,.0f}"
        out.append(f"| {k} KiB | {v:.2f} ms | {(v - base) / k * 1000:.0f} µs | {'n/a' if not i else f'{i:,}'} | {per_i} |")

counts = {n: instructions(n) for n in ("true_agentsh", "true_dynamic", "true_dash", "check_agentsh", "check_dynamic",
                                      "whitelist_agentsh", "examples_agentsh")}
if any(counts.values()):
    out += ["", "Instructions executed (valgrind callgrind; deterministic, so comparable across runs and machines;",
            "`-c` runs are counted up to the exec of the command):", "", "| command | instructions |", "|---|---|"]
    for name, n in counts.items():
        if n:
            out.append(f"| {labels[name]} | {n:,} |")
    if any("syscall: 444" in open(p, errors="replace").read() for p in glob.glob(f"{results}/*.vg")):
        out += ["", "This valgrind does not know Landlock's system calls (444-446): under it the box cannot be set",
                "up, so the `-c` counts above are of the path without it; the times are not."]

out += ["", f"COMPOUND = `{compound}`  ", f"CHECK = `{check}`  ", f"DENY = `{deny}`", "",
        "<!-- compare.sh:end -->"]
block = "\n".join(out)

try:
    text = open(doc).read()
except OSError:
    text = "# Benchmarks\n\n<!-- compare.sh:begin -->\n<!-- compare.sh:end -->\n"
new = re.sub(r"<!-- compare.sh:begin.*?<!-- compare.sh:end -->", lambda _: block, text, flags=re.S)
if new == text and block not in text:
    new = text.rstrip("\n") + "\n\n" + block + "\n"
open(doc, "w").write(new)
print(block)
PY
# The sandbox's network proxy (issue 26): a download through it against a direct one.
echo "timing downloads through the sandbox's proxy (bench/proxy.py)..." >&2
python3 bench/proxy.py --bin "$AGENTSH" --write docs/BENCHMARKS.md >&2 ||
    echo "compare.sh: bench/proxy.py failed" >&2
echo "compare.sh: wrote docs/BENCHMARKS.md" >&2
