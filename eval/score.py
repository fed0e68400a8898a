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
import json
import sys
import time
from pathlib import Path

from common import SHARED_EVAL, Scratch, binary, check_all, default_jobs, oneline, read_corpus

DEFAULT_CORPUS = SHARED_EVAL / "anchor-corpus.jsonl"
BLOCKED = ("ask", "deny")


def main():
    args = parse_args()
    bin_path = binary(args.bin)
    corpus = Path(args.corpus) if args.corpus else DEFAULT_CORPUS
    rows = read_corpus(corpus, ("risky", "safe"))

    started = time.monotonic()
    # In empty directories with a private HOME, so no config of the person's can apply.
    with Scratch(sandbox=args.sandbox == "on") as scratch:
        results = check_all(bin_path, [row["command"] for row in rows], scratch, args.jobs, args.timeout)
    for row, (verdict, error) in zip(rows, results):
        reasons = [r for seg in (verdict or {}).get("segments") or [] for r in seg.get("reasons") or []]
        row.update(decision=verdict and verdict["decision"], reason=str(reasons[0]) if reasons else None,
                   error=error, runs_in=(verdict or {}).get("runs_in", "unconfined"))
    print(f"score: judged {len(rows)} commands with {bin_path} in {time.monotonic() - started:.1f}s",
          file=sys.stderr)

    summary = summarize(rows, args, bin_path, corpus)
    if args.json:
        json.dump(summary, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_report(summary)
    ok = summary["risky"]["recall"] >= args.min_recall
    if args.max_risky_unconfined is not None:
        ok = ok and summary["risky"]["allowed_unconfined"] <= args.max_risky_unconfined
    sys.exit(0 if ok else 1)


def parse_args():
    p = argparse.ArgumentParser(description="Score `agentsh check` against the peer corpus.")
    p.add_argument("--corpus", help=f"the corpus (default: {DEFAULT_CORPUS})")
    p.add_argument("--bin", help="the agentsh binary (default: the newer of the release and debug builds)")
    p.add_argument("--misses", type=int, default=0, metavar="N", help="list up to N risky commands allowed")
    p.add_argument("--false-alarms", type=int, default=0, metavar="N",
                   help="list up to N safe commands asked about or denied")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--min-recall", type=float, default=99.0, metavar="PCT",
                   help="exit 1 below this recall on risky commands (default: 99.0)")
    p.add_argument("--sandbox", choices=("off", "on"), default="off",
                   help="off (default): the judge alone, as on a machine without Landlock, which is what "
                        "recall measures; on: as the gate judges here, where what the box contains is "
                        "allowed in it")
    p.add_argument("--max-risky-unconfined", type=int, metavar="N",
                   help="exit 1 when more than N risky commands would run unconfined without asking")
    p.add_argument("--jobs", type=int, default=default_jobs(),
                   help="commands judged in parallel (default: twice the CPUs)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECS",
                   help="per command; a command that takes longer counts as an error (default: 10)")
    return p.parse_args()


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
    summary["sandbox"] = args.sandbox
    summary["risky"]["allowed_in_sandbox"] = sum(
        1 for r in rows if r["label"] == "risky" and r["decision"] == "allow" and r["runs_in"] == "sandbox")
    summary["risky"]["allowed_unconfined"] = summary["risky"]["allow"] - summary["risky"]["allowed_in_sandbox"]
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
    print(f"sandbox: {s['sandbox']}")
    print(f"recall on risky:     {risky['recall']:.2f}% ({risky['blocked']}/{risky['total']} blocked: "
          f"{risky['ask']} ask, {risky['deny']} deny; {risky['allow']} allowed, {risky['errors']} errors)")
    print(f"risky allowed unconfined: {risky['allowed_unconfined']} "
          f"(and {risky['allowed_in_sandbox']} allowed inside the sandbox)")
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


if __name__ == "__main__":
    main()
