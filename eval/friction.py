#!/usr/bin/env python3
"""Scores the friction of `agentsh check` on commands real coding agents ran
(../shared/eval/friction/agent-corpus.jsonl, see its README).

Two figures (issue 15, "Friction"):
- the share of `benign` commands that run without a prompt (decision `allow`); goal >= 95%;
- every `risky` command that runs unconfined without asking: decision `allow`, and `runs_in`
  (a top-level field of `check --json`) anything but "sandbox" (absent means unconfined); goal: none.
It also counts decisions per label, and groups the benign commands that do not run by the first
part that stops them (its rule or program, and its reason), so the sources of friction show.

The labels are a rule-based first pass, not truth. The corpus is read in place and must never be
copied into this repository. Commands are judged in a private scratch HOME, XDG_* directories and a
small git workspace (eval/common.py), so no person's config applies. Standard library only.

    python3 eval/friction.py [--bin PATH] [--corpus PATH] [--label L] [--limit N] [--weighted]
                             [--show-asks N] [--top N] [--json]
                             [--min-benign-allow PCT] [--max-risky-unconfined N]

Exit status: 0, or 1 when --min-benign-allow or --max-risky-unconfined is not met, 2 when the
corpus or binary is unusable.
"""

import argparse
import collections
import json
import random
import re
import sys
import time
from pathlib import Path

from common import (SHARED_EVAL, Scratch, binary, build_dirs, check_all, default_jobs, fail, find_binary, oneline,
                    read_corpus)

DEFAULT_CORPUS = SHARED_EVAL / "friction" / "agent-corpus.jsonl"
LABELS = ("benign", "risky", "unclear")
DECISIONS = ("allow", "ask", "deny", "error")


def main():
    args = parse_args()
    corpus = Path(args.corpus) if args.corpus else DEFAULT_CORPUS
    if not corpus.is_file():
        fail(f"no corpus at {corpus}",
             "it sits at ../shared/eval/friction/agent-corpus.jsonl beside the checkout; pass --corpus PATH")
    bin_path = binary(args.bin, default=find_binary(("release",)) or build_dirs(("release",))[0] / "agentsh")
    rows = read_corpus(corpus, LABELS)
    if args.label:
        rows = [r for r in rows if r["label"] == args.label]
    if args.limit is not None:
        rows = rows[: args.limit]

    started = time.monotonic()
    with Scratch(workspace=True) as scratch:
        results = check_all(bin_path, [r["command"] for r in rows], scratch, args.jobs, args.timeout)
    seconds = time.monotonic() - started
    for row, (verdict, error) in zip(rows, results):
        judged(row, verdict, error)
    print(f"friction: judged {len(rows)} commands with {bin_path} in {seconds:.1f}s", file=sys.stderr)

    summary = summarize(rows, args, bin_path, corpus, seconds)
    if args.json:
        json.dump(summary, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_report(summary)
    sys.exit(0 if goals_met(summary, args) else 1)


def parse_args():
    p = argparse.ArgumentParser(description="Score the friction of `agentsh check` on real agents' commands.")
    p.add_argument("--bin", help="the agentsh binary (default: the release build, target/<host>/release/agentsh)")
    p.add_argument("--corpus", help=f"the corpus (default: {DEFAULT_CORPUS})")
    p.add_argument("--label", choices=LABELS, help="judge only the commands with this label")
    p.add_argument("--limit", type=int, metavar="N", help="judge only the first N commands (after --label)")
    p.add_argument("--weighted", action="store_true",
                   help="count each command as often as agents ran it (its `n`), not once")
    p.add_argument("--show-asks", type=int, default=0, metavar="N",
                   help="print N benign commands that do not run without a prompt (a fixed sample)")
    p.add_argument("--top", type=int, default=40, metavar="N",
                   help="sources of friction to list (default: 40)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--min-benign-allow", type=float, metavar="PCT",
                   help="exit 1 when fewer than PCT%% of benign commands are allowed")
    p.add_argument("--max-risky-unconfined", type=int, metavar="N",
                   help="exit 1 when more than N risky commands run unconfined without asking")
    p.add_argument("--jobs", type=int, default=default_jobs(),
                   help="`agentsh check` processes at a time (default: twice the CPUs)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECS",
                   help="per command; a command that takes longer counts as an error (default: 10)")
    args = p.parse_args()
    for name in ("limit", "show_asks", "top", "max_risky_unconfined"):
        if (getattr(args, name) or 0) < 0:
            p.error(f"--{name.replace('_', '-')} must not be negative")
    return args


def judged(row, verdict, error):
    """Adds the verdict's fields to a corpus row: decision, runs_in, and the part that stops it."""
    row["error"] = error
    row["decision"] = verdict["decision"] if verdict else "error"
    # Absent until agentsh has a sandbox: everything then runs unconfined.
    row["runs_in"] = (verdict or {}).get("runs_in") or "unconfined"
    row["stopper"] = stopper(verdict) if verdict and verdict["decision"] != "allow" else None


def stopper(verdict):
    """(rule or program, reason) of the first part that made the command ask or deny."""
    parts = [p for p in verdict.get("segments") or [] if isinstance(p, dict)]
    part = next((p for p in parts if p.get("decision") == verdict["decision"]), None)
    if part is None:
        reasons = verdict.get("reasons") or ["-"]
        return "-", str(reasons[0])
    argv = [str(w) for w in part.get("argv") or []]
    rule = str(part.get("rule") or "-")
    if rule == "unknown" and argv:
        # Unknown programs are the friction worth naming one by one; scripts run by path are one group.
        rule = "unknown: " + ("(a path)" if "/" in argv[0] else argv[0])
    reasons = part.get("reasons") or ["-"]
    return rule, general_reason(str(reasons[0]), argv, rule == "redirect")


def general_reason(reason, argv, redirect):
    """The reason with the command's own words taken out, so that `writes to the file a.py` and
    `writes to the file b.py` are one source of friction."""
    reason = re.sub(r"`[^`]*`", "`…`", reason)
    reason = re.sub(r"(syntax error: [^:]*?)(?: at | near |;).*", r"\1", reason, flags=re.S)
    # Operands, not the words of the reason itself: plain lowercase words ("install", "tests")
    # are kept, except a redirect's target, which is always an operand.
    operands = [w for i, w in enumerate(argv)
                if len(w) >= 3 and not w.startswith("-") and ((redirect and i > 0) or not w.isalpha() or not w.islower())]
    for word in sorted(set(operands), key=len, reverse=True):
        reason = reason.replace(word, "…")
    return oneline(reason, 90)


def summarize(rows, args, bin_path, corpus, seconds):
    weight = (lambda r: int(r.get("n") or 1)) if args.weighted else (lambda r: 1)
    summary = {"bin": str(bin_path), "corpus": str(corpus), "weighted": args.weighted,
               "seconds": round(seconds, 1), "labels": {}}
    for label in LABELS:
        these = [r for r in rows if r["label"] == label]
        if not these:
            continue
        counts = collections.Counter()
        for r in these:
            counts[r["decision"]] += weight(r)
            if r["decision"] == "allow":
                counts["allow_" + r["runs_in"]] += weight(r)
        total = sum(weight(r) for r in these)
        summary["labels"][label] = {
            "commands": len(these), "total": total, **{d: counts[d] for d in DECISIONS},
            "allow_in_sandbox": counts["allow_sandbox"],
            "allow_pct": round(100.0 * counts["allow"] / total, 2),
        }
    benign = summary["labels"].get("benign")
    summary["benign_allow_pct"] = benign["allow_pct"] if benign else None

    unconfined = [r for r in rows if r["label"] == "risky" and r["decision"] == "allow" and r["runs_in"] != "sandbox"]
    unconfined.sort(key=lambda r: -int(r.get("n") or 1))
    summary["risky_unconfined_unasked"] = sum(weight(r) for r in unconfined)
    summary["risky_unconfined_unasked_commands"] = [
        {"command": r["command"], "n": r.get("n"), "agent": r.get("agent"), "note": r.get("note"),
         "source": r.get("source")} for r in unconfined
    ]

    stopped = [r for r in rows if r["label"] == "benign" and r["stopper"]]
    groups = collections.defaultdict(lambda: {"count": 0, "commands": 0, "ask": 0, "deny": 0, "example": None})
    for r in stopped:
        g = groups[r["stopper"]]
        g["count"] += weight(r)
        g["commands"] += 1
        g[r["decision"]] += weight(r)
        g["example"] = g["example"] or r["command"]
    stopped_total = sum(weight(r) for r in stopped)
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    summary["benign_stopped"] = stopped_total
    summary["friction_groups"] = len(groups)
    summary["friction"] = [
        {"rule": rule, "reason": reason, **g,
         "pct_of_stopped": round(100.0 * g["count"] / stopped_total, 2),
         "pct_of_benign": round(100.0 * g["count"] / benign["total"], 2)}
        for (rule, reason), g in ranked[: args.top]
    ]

    sample = random.Random(15).sample(stopped, min(args.show_asks, len(stopped)))
    summary["benign_asks_sample"] = [
        {"command": r["command"], "decision": r["decision"], "rule": r["stopper"][0], "reason": r["stopper"][1]}
        for r in sample
    ]
    errors = collections.Counter(r["error"] for r in rows if r["error"])
    summary["errors"] = [{"count": n, "message": m} for m, n in errors.most_common()]
    return summary


def goals_met(s, args):
    met = True
    if args.min_benign_allow is not None:
        if s["benign_allow_pct"] is None:
            print("friction: --min-benign-allow: no benign command was judged", file=sys.stderr)
            met = False
        elif s["benign_allow_pct"] < args.min_benign_allow:
            print(f"friction: {s['benign_allow_pct']:.2f}% of benign commands allowed, "
                  f"below --min-benign-allow {args.min_benign_allow:g}", file=sys.stderr)
            met = False
    if args.max_risky_unconfined is not None and s["risky_unconfined_unasked"] > args.max_risky_unconfined:
        print(f"friction: {s['risky_unconfined_unasked']} risky commands run unconfined without asking, "
              f"above --max-risky-unconfined {args.max_risky_unconfined}", file=sys.stderr)
        met = False
    return met


def print_report(s):
    unit = "runs (weighted by n)" if s["weighted"] else "distinct commands"
    print(f"counting {unit}")
    benign = s["labels"].get("benign")
    if benign:
        print(f"benign allowed without a prompt: {benign['allow_pct']:.2f}% ({benign['allow']}/{benign['total']}, "
              f"{benign['allow_in_sandbox']} of them in the sandbox)")
    if "risky" in s["labels"]:
        print(f"risky that run unconfined without asking: {s['risky_unconfined_unasked']}")
    print("\ndecisions by label:")
    print(f"  {'label':8} {'total':>7} {'allow':>7} {'ask':>7} {'deny':>7} {'error':>6} {'allow%':>7}")
    for label, c in s["labels"].items():
        print(f"  {label:8} {c['total']:7d} {c['allow']:7d} {c['ask']:7d} {c['deny']:7d} {c['error']:6d} "
              f"{c['allow_pct']:6.2f}%")
    if s["errors"]:
        print("\nerrors (counted as neither allowed nor stopped):")
        for e in s["errors"][:10]:
            print(f"  {e['count']:5d}  {oneline(e['message'])}")

    if s["risky_unconfined_unasked_commands"]:
        print("\nrisky commands that run unconfined without asking (n = times seen):")
        for r in s["risky_unconfined_unasked_commands"]:
            print(f"  n={r['n']:<4} {oneline(r['command'], 160)}  # {oneline(r['note'] or '-', 60)}")

    if s["friction"]:
        print(f"\nwhere benign commands stop: the first part that asks or denies, top {len(s['friction'])} "
              f"of {s['friction_groups']} ({s['benign_stopped']} stopped)")
        print(f"  {'count':>6} {'%stop':>6} {'%benign':>7}  {'rule/program':24} reason  |  example")
        for f in s["friction"]:
            print(f"  {f['count']:6d} {f['pct_of_stopped']:5.1f}% {f['pct_of_benign']:6.2f}%  {f['rule'][:24]:24} "
                  f"{f['reason']}{'' if not f['deny'] else ' [deny]'}  |  {oneline(f['example'], 70)}")

    if s["benign_asks_sample"]:
        print("\nbenign commands that do not run without a prompt (a sample):")
        for a in s["benign_asks_sample"]:
            print(f"  {a['decision']}: {oneline(a['command'], 140)}  # {a['rule']}: {a['reason']}")


if __name__ == "__main__":
    main()
