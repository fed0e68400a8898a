#!/usr/bin/env python3
"""The sandbox's network proxy (issue 26): a download through it against the same download
made directly, on this machine's loopback. A benchmark, not a test: it never fails on slow
numbers. Run by bench/compare.sh, which writes its table into docs/BENCHMARKS.md.

    python3 bench/proxy.py --bin target/x86_64-unknown-linux-gnu/release/agentsh
    python3 bench/proxy.py --bin ... --write docs/BENCHMARKS.md

A stand-in server on 127.0.0.1 (outside the box) serves a file; curl downloads it directly,
and from inside the box through agentsh's proxy (`sandbox.allowHosts` names the server as
`localhost:PORT`, the only way the box reaches a local address). The two are interleaved, a
round of each at a time, and the medians compared. Twice: as fast as the loopback goes (every
byte costs CPU on each side, and the proxied path has two more socket hops than the direct
one), and paced at 1 Gbit/s, a fast link to a registry.
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

SERVER = r"""
import http.server, os, socketserver, sys, time
path, rate = sys.argv[2], float(sys.argv[3])
size = os.path.getsize(path)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", str(size))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.flush()
        with open(path, "rb") as f:
            if rate <= 0:
                self.connection.sendfile(f)
                return
            chunk, start, sent = 1 << 20, time.monotonic(), 0
            while sent < size:
                n = self.connection.sendfile(f, sent, min(chunk, size - sent))
                sent += n
                ahead = sent / rate - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
s = S(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def speed(cmd, env, cwd):
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"proxy.py: no speed from {cmd[0]}: {out.stderr.strip()[-400:]}")


def measure(binary, mib, rate, rounds, work):
    big = os.path.join(work, "big.bin")
    with open(big, "wb") as f:
        f.truncate(mib << 20)
    server = subprocess.Popen([sys.executable, "-c", SERVER, "0", big, str(rate)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        home = tempfile.mkdtemp(dir=work)
        os.makedirs(f"{home}/.config/agentsh")
        with open(f"{home}/.config/agentsh/config.json", "w") as f:
            json.dump({"sandbox": {"allowHosts": [f"localhost:{port}"]}}, f)
        # A project (a git repository): where a command starts in no project, there is no box.
        ws = tempfile.mkdtemp(dir=work)
        subprocess.run(["git", "init", "-q", ws], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        env.update(HOME=home, NO_COLOR="1")
        fmt = "%{speed_download}\n"
        direct = ["curl", "-s", "-o", "/dev/null", "-w", fmt, f"http://127.0.0.1:{port}/big"]
        proxied = [binary, "-c", f"curl -s --noproxy '' -o /dev/null -w '{fmt}' http://localhost:{port}/big"]
        speed(proxied, env, ws)  # makes the box and its proxy, kept for the next commands
        d, p = [], []
        for _ in range(rounds):
            d.append(speed(direct, env, ws))
            p.append(speed(proxied, env, ws))
        return statistics.median(d), statistics.median(p)
    finally:
        server.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the agentsh binary")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--mib", type=int, default=512, help="the file's size for the unpaced download")
    ap.add_argument("--write", help="docs/BENCHMARKS.md: replace the text between its proxy.py markers")
    args = ap.parse_args()
    if not shutil.which("curl"):
        sys.exit("proxy.py: curl is missing")
    work = tempfile.mkdtemp(prefix="agentsh-proxy-bench-")
    try:
        rows = []
        for label, mib, rate in [
            ("unpaced (CPU-bound loopback)", args.mib, 0),
            ("paced at 1 Gbit/s", 256, 125e6),
        ]:
            d, p = measure(os.path.abspath(args.bin), mib, rate, args.rounds, work)
            rows.append((label, mib, d, p))
            print(f"{label}: direct {d / 1e6:.0f} MB/s, through the proxy {p / 1e6:.0f} MB/s ({p / d:.0%})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.write:
        table = [
            f"Download of a file from a server on 127.0.0.1, median of {args.rounds} interleaved rounds "
            f"(`bench/proxy.py`, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores):",
            "",
            "| download | size | direct | through the proxy, from the box | ratio |",
            "|---|---:|---:|---:|---:|",
        ]
        for label, mib, d, p in rows:
            table.append(f"| {label} | {mib} MiB | {d / 1e6:.0f} MB/s | {p / 1e6:.0f} MB/s | {p / d:.0%} |")
        text = open(args.write).read()
        start, end = "<!-- proxy.py: start -->", "<!-- proxy.py: end -->"
        if start not in text or end not in text:
            sys.exit(f"proxy.py: {args.write} has no proxy.py markers")
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        open(args.write, "w").write(head + start + "\n" + "\n".join(table) + "\n" + end + tail)


if __name__ == "__main__":
    main()
