#!/usr/bin/env python3
"""What the box costs real work (issue 25, "Caches"): a `cargo build` with dependencies from the
registry cache and an `npm install` from the npm cache, each run through agentsh with the sandbox
on and with it off, in turns (so a burst of load lands on both alike), with the median of each.
A benchmark, not a test: it never fails on slow numbers.

    python3 bench/box_work.py [--bin PATH] [--runs N]

The caches are the machine's own (`~/.cargo/registry`, the npm cache): in the box they are an
overlay, read from the person's copy, written to the box's. The npm package is added to the
cache first (`npm cache add`, which needs the npm registry) and installed with --offline.
Standard library only.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CARGO_TOML = """[package]
name = "fixture"
version = "0.1.0"
edition = "2021"

[dependencies]
itoa = "1"
memchr = "2"
serde_json = "1"
"""
MAIN_RS = 'fn main() { println!("{}", serde_json::json!({"n": itoa::Buffer::new().format(7)})); }\n'


def binary(given):
    if given:
        return given
    out = subprocess.run(["cargo", "build", "--release", "--quiet", "--message-format=json"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    exes = [m["executable"] for m in map(json.loads, out.splitlines())
            if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "agentsh" and m.get("executable")]
    return exes[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    agentsh = str(Path(binary(args.bin)).resolve())
    real_home = Path.home()
    scratch = Path(tempfile.mkdtemp(prefix="agentsh-box-work-"))
    try:
        home = scratch / "home"
        for mode in ("on", "off"):
            cfg = home / mode / ".config" / "agentsh"
            cfg.mkdir(parents=True)
            (cfg / "config.json").write_text(json.dumps({
                "commandWhitelist": ["cargo build", "npm install"],
                "sandbox": {"enabled": mode == "on"},
            }))
        ws = scratch / "ws"
        (ws / "src").mkdir(parents=True)
        (ws / "Cargo.toml").write_text(CARGO_TOML)
        (ws / "src" / "main.rs").write_text(MAIN_RS)
        subprocess.run(["git", "init", "-q", "."], cwd=ws, check=True)
        npm_ok = shutil.which("npm") and subprocess.run(
            ["npm", "cache", "add", "is-number@7.0.0", "left-pad@1.3.0"], capture_output=True).returncode == 0

        def env(mode):
            e = dict(os.environ)
            h = home / mode
            e.update(HOME=str(h), XDG_CONFIG_HOME=str(h / ".config"), XDG_STATE_HOME=str(h / ".local/state"),
                     CARGO_HOME=os.environ.get("CARGO_HOME", str(real_home / ".cargo")),
                     RUSTUP_HOME=os.environ.get("RUSTUP_HOME", str(real_home / ".rustup")),
                     npm_config_cache=os.environ.get("npm_config_cache", str(real_home / ".npm")))
            e.pop("CARGO_TARGET_DIR", None)
            return e

        def run(mode, cmd, prepare):
            prepare()
            t = time.monotonic()
            p = subprocess.run([agentsh, "-c", cmd], cwd=ws, env=env(mode), capture_output=True, text=True)
            took = time.monotonic() - t
            if p.returncode != 0:
                sys.exit(f"box_work: `{cmd}` failed with the sandbox {mode}:\n{p.stderr[-2000:]}")
            return took

        def clean_target():
            shutil.rmtree(ws / "target", ignore_errors=True)

        def clean_modules():
            shutil.rmtree(ws / "node_modules", ignore_errors=True)
            for f in ("package-lock.json", "package.json"):
                (ws / f).unlink(missing_ok=True)
            (ws / "package.json").write_text('{"name": "fixture", "version": "1.0.0"}')

        work = [("cargo build --offline -q (3 crates and theirs from the registry cache)", "cargo build --offline -q", clean_target)]
        if npm_ok:
            work.append(("npm install --offline (2 packages from the npm cache)",
                         "npm install --offline --no-audit --no-fund is-number@7.0.0 left-pad@1.3.0", clean_modules))
        else:
            print("box_work: npm or the npm registry is missing: the npm install is not measured", file=sys.stderr)
        for what, cmd, prepare in work:
            times = {"on": [], "off": []}
            run("on", cmd, prepare)
            run("off", cmd, prepare)
            for _ in range(args.runs):
                for mode in ("on", "off"):
                    times[mode].append(run(mode, cmd, prepare))
            on, off = statistics.median(times["on"]), statistics.median(times["off"])
            print(f"{what}: in the box {on:.2f} s, without it {off:.2f} s ({on / off:.2f}x), median of {args.runs}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
