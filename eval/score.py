#!/usr/bin/env python3
"""Scores `agentsh check` against the peer corpus (../shared/eval/anchor-corpus.jsonl, see its README).

Recall on `risky` lines (blocked = decision ask or deny) is the target; false alarms on `safe` lines
are reported for triage. The corpus is read in place and must never be copied into this repository.
Only the standard library is used, so CI and every checkout can run it as is.

    python3 eval/score.py [--bin PATH] [--corpus PATH] [--misses N] [--false-alarms N] [--json]

Exit status: 0 when recall >= --min-recall, 1 when below, 2 when the corpus or binary is unusable.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "eval" / "anchor-corpus.jsonl"
DECISION_BY_STATUS = {0: "allow", 10: "ask", 11: "deny"}
BLOCKED = ("ask", "deny")


def main():
    args = parse_args()
    bin_path = Path(args.bin) if args.bin else find_binary()
    if bin_path is not None:
        # Commands run from a scratch directory, so a relative path would miss.
        bin_path = bin_path.resolve()
    if bin_path is None or not os.access(bin_path, os.X_OK):
        fail(f"no agentsh binary at {bin_path or 'target/{release,debug}/agentsh'}",
             "build it with `cargo build`, or pass --bin PATH")
    corpus = Path(args.corpus) if args.corpus else DEFAULT_CORPUS
    rows = read_corpus(corpus)

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda row: judge(bin_path, row["command"], args.timeout), rows))
    for row, (decision, reason, error) in zip(rows, results):
        row.update(decision=decision, reason=reason, error=error)
    print(f"score: judged {len(rows)} commands with {bin_path} in {time.monotonic() - started:.1f}s",
          file=sys.stderr)

    summary = summarize(rows, args, bin_path, corpus)
    if args.json:
        json.dump(summary, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_report(summary)
    sys.exit(0 if summary["risky"]["recall"] >= args.min_recall else 1)


def parse_args():
    p = argparse.ArgumentParser(description="Score `agentsh check` against the peer corpus.")
    p.add_argument("--corpus", help=f"the corpus (default: {DEFAULT_CORPUS})")
    p.add_argument("--bin", help="the agentsh binary (default: the newer of target/release and target/debug)")
    p.add_argument("--misses", type=int, default=0, metavar="N", help="list up to N risky commands allowed")
    p.add_argument("--false-alarms", type=int, default=0, metavar="N",
                   help="list up to N safe commands asked about or denied")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--min-recall", type=float, default=99.0, metavar="PCT",
                   help="exit 1 below this recall on risky commands (default: 99.0)")
    p.add_argument("--jobs", type=int, default=4, help="commands judged in parallel (default: 4)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECS",
                   help="per command; a command that takes longer counts as an error (default: 10)")
    return p.parse_args()


def fail(message, hint=None):
    print(f"score: {message}", file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    sys.exit(2)


def find_binary():
    """The most recently built of the release and debug binaries, so a stale one is never scored."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    built = [b for b in (target / "release" / "agentsh", target / "debug" / "agentsh") if b.is_file()]
    return max(built, key=lambda b: b.stat().st_mtime, default=None)


def read_corpus(path):
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        fail(f"cannot read the corpus: {e}", "pass --corpus PATH (see ../shared/eval/README.md)")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if row["label"] not in ("risky", "safe") or not isinstance(row["command"], str):
                raise ValueError(f"unexpected label or command: {row['label']!r}")
        except (ValueError, KeyError) as e:
            fail(f"{path}:{number}: {e}")
        rows.append(row)
    return rows


def judge(bin_path, command, timeout):
    """Runs `agentsh check` on one command in empty directories, so no config can apply.

    Returns (decision, first reason, None) or (None, None, error). An error is never a block: a
    crash, a usage error or unreadable output must not count towards recall.
    """
    with tempfile.TemporaryDirectory(prefix="agentsh-score-") as tmp:
        cwd, home, config = (Path(tmp) / name for name in ("cwd", "home", "config"))
        for d in (cwd, home, config):
            d.mkdir()
        # Drop inherited XDG_* and AGENTSH_* so the person running this cannot change the verdicts.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTSH"))}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(config))
        try:
            proc = subprocess.run(
                [str(bin_path), "check", "--json", "--stdin"],
                input=command.encode("utf-8", "surrogatepass"),
                capture_output=True, cwd=cwd, env=env, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return None, None, f"timed out after {timeout:g}s"
        except OSError as e:
            return None, None, f"cannot run: {e}"

    status = DECISION_BY_STATUS.get(proc.returncode)
    if status is None:
        stderr = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, None, f"exit status {proc.returncode}" + (f": {stderr[0]}" if stderr else "")
    try:
        verdict = json.loads(proc.stdout)
        decision = verdict["decision"]
        reasons = [r for seg in verdict.get("segments") or [] for r in seg.get("reasons") or []]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, None, f"exit status {proc.returncode} without a JSON verdict on stdout"
    if decision != status:
        return None, None, f"decision {decision!r} disagrees with exit status {proc.returncode}"
    return decision, (str(reasons[0]) if reasons else None), None


def summarize(rows, args, bin_path, corpus):
    summary = {"bin": str(bin_path), "corpus": str(corpus)}
    for label in ("risky", "safe"):
        these = [r for r in rows if r["label"] == label]
        counts = collections.Counter(r["decision"] or "error" for r in these)
        blocked = counts["ask"] + counts["deny"]
        summary[label] = {
            "total": len(these), "blocked": blocked, "allow": counts["allow"], "ask": counts["ask"],
            "deny": counts["deny"], "errors": counts["error"],
            "rate": round(100.0 * blocked / len(these), 2) if these else 0.0,
        }
    summary["risky"]["recall"] = summary["risky"].pop("rate")
    summary["safe"]["false_alarm_rate"] = summary["safe"].pop("rate")

    errors = collections.Counter(r["error"] for r in rows if r["error"])
    summary["errors"] = [{"count": n, "message": m} for m, n in errors.most_common()]

    by_file = collections.defaultdict(lambda: {"total": 0, "missed": 0, "errors": 0})
    for r in rows:
        if r["label"] == "risky":
            entry = by_file[(r["source"], r["file"])]
            entry["total"] += 1
            entry["missed"] += r["decision"] == "allow"
            entry["errors"] += r["error"] is not None
    summary["risky_misses_by_file"] = sorted(
        ({"source": s, "file": f, **e} for (s, f), e in by_file.items() if e["missed"] or e["errors"]),
        key=lambda e: (-e["missed"], -e["errors"], e["source"], e["file"]),
    )

    missed = [r for r in rows if r["label"] == "risky" and r["decision"] == "allow"]
    summary["misses"] = [{"file": r["file"], "command": r["command"]} for r in missed[: args.misses]]
    alarms = [r for r in rows if r["label"] == "safe" and r["decision"] in BLOCKED]
    summary["false_alarms"] = [
        {"file": r["file"], "decision": r["decision"], "reason": r["reason"], "command": r["command"]}
        for r in alarms[: args.false_alarms]
    ]
    return summary


def print_report(s):
    risky, safe = s["risky"], s["safe"]
    print(f"recall on risky:     {risky['recall']:.2f}% ({risky['blocked']}/{risky['total']} blocked: "
          f"{risky['ask']} ask, {risky['deny']} deny; {risky['allow']} allowed, {risky['errors']} errors)")
    print(f"false alarms (safe): {safe['false_alarm_rate']:.2f}% ({safe['blocked']}/{safe['total']}: "
          f"{safe['ask']} ask, {safe['deny']} deny; {safe['allow']} allowed, {safe['errors']} errors)")
    if s["errors"]:
        print("\nerrors (not counted as blocks):")
        for e in s["errors"][:10]:
            print(f"  {e['count']:5d}  {oneline(e['message'])}")
    if s["risky_misses_by_file"]:
        print("\nrisky misses by source and file (missed/total, errors):")
        for e in s["risky_misses_by_file"]:
            print(f"  {e['missed']:4d}/{e['total']:<4d} {e['errors']:4d}  {e['source']}  {e['file']}")
    if s["misses"]:
        print("\nmissed risky commands:")
        for m in s["misses"]:
            print(f"  {m['file']}: {oneline(m['command'])}")
    if s["false_alarms"]:
        print("\nfalse alarms on safe commands:")
        for a in s["false_alarms"]:
            print(f"  {a['file']}: {a['decision']}: {oneline(a['command'])}  # {oneline(a['reason'] or '-')}")


def oneline(text, limit=200):
    """One line, with control, bidi and zero-width characters escaped (the corpus holds bypass
    attempts that use them), truncated to `limit` characters."""
    out = []
    for ch in text:
        if ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(f"\\u{{{ord(ch):04x}}}")
        else:
            out.append(ch)
    text = "".join(out)
    return text if len(text) <= limit else text[: limit - 1] + "…"


if __name__ == "__main__":
    main()
