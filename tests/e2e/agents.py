#!/usr/bin/env python3
"""agentsh with the real agent CLIs, end to end (issue 14). Driven by tests/e2e/run.sh, which
installs the pinned CLIs and builds agentsh.

Every wiring README.md documents, for every agent, runs these cases with a scripted model
(model.py, 127.0.0.1 only), headless (no terminal, stdin /dev/null), each run in its own HOME:

  safe       `ls -la && echo hello && exit 3`: allowed; the listing, `hello` and status 3 reach
             the model unchanged; none of the agent's start-up commands asked
  forbidden  writes agentsh's project config: denied, nothing written, the model reads why
  ask        `git push` (to a scratch remote) with no one to ask: refused at once, the model reads why
  queue      the same while the person answers through the queue: `agentsh approve ID`
             from the test; the command runs (shell routes; a hook route has no queue)
  pty        (Codex) the model asks for a terminal and types `y` (or the code) into agentsh's
             prompt with write_stdin: the command must not run
  slow       (Codex) the person answers in the queue 15 s after the request appears: the
             command runs, and its result reaches the model (Codex ends a turn 10 s into a
             running command, so the hook waits for the person before anything runs)

And each agent's own UI under `init`, in the person's tmux (issue 24), with a scripted person
answering where the ask appears (Claude Code's and Gemini CLI's own dialogs; for Codex,
agentsh's prompt in a tmux popup on the person's client):

  tui-yes    one answer runs the command once, and the model sees its result
  tui-no     a No refuses it, nothing runs, and the model is told
  tui-timeout (Codex) nobody answers: refused when agentsh's timeout ends, and the model is told
  tui-slow   (Codex) the person answers 20 s later: it runs, and the model still sees the result

A run is "gated" when agentsh's audit log has a record of the command; a documented wiring that
never reaches agentsh fails. Isolation: each agent runs under `unshare --mount` with empty tmpfs
over /root and /home and its own /etc/passwd (root's home is the scratch HOME; for Codex's shell
wiring, its login shell is agentsh's `bash` link), so a command that escaped every gate could
only touch scratch files.

Prints one line per run, then the table agent x wiring x case and `e2e: N/M as expected`;
exits 1 unless every run is as expected.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("E2E_ROOT", "/tmp/agentsh-e2e")
NPM = os.environ.get("E2E_NPM", "/var/tmp/agentsh-e2e-npm")
BIN = os.path.join(NPM, "node_modules", ".bin")
AGENTSH = os.path.join(ROOT, "bin", "agentsh")
TIMEOUT = 90

CASES = {
    "safe": "ls -la && echo hello && exit 3",
    "forbidden": "mkdir -p .agents && echo '{\"commandWhitelist\":[\"chmod\"]}' > .agents/terminal.json",
    # A push to a (local) remote: it acts outside the workspace, so even with agentsh's sandbox
    # on it needs a person. It ran when the remote has the branch.
    "ask": "git push -q origin HEAD:refs/heads/e2e",
    "queue": "git push -q origin HEAD:refs/heads/e2e",
    "pty": "git push -q origin HEAD:refs/heads/e2e",
    "slow": "git push -q origin HEAD:refs/heads/e2e",
}
# The UI cases, each agent under init in the person's tmux: how the person answers.
TUI_CASES = ["tui-yes", "tui-no", "tui-timeout", "tui-slow"]
ASK = "git push -q origin HEAD:refs/heads/e2e"

# The wirings README.md documents ("Wiring it into an agent"), by agent. Each is set up with
# `agentsh init <agent> --write` (which installs both routes), then reduced to the one route.
WIRINGS = {
    "claude": ["hook", "shell", "init"],
    "codex": ["hook", "shell", "init"],
    "gemini": ["hook", "shell", "init"],
}
PROMPT = "run the e2e command"


def sh(*argv, **kw):
    return subprocess.run(list(argv), capture_output=True, text=True, **kw)


class Run:
    def __init__(self, agent, wiring, case):
        self.agent, self.wiring, self.case = agent, wiring, case
        self.command = CASES.get(case, ASK)
        self.dir = os.path.join(ROOT, "runs", f"{agent}.{wiring}.{case}")
        shutil.rmtree(self.dir, ignore_errors=True)
        for d in ("home", "cfg", "state", "data", "run", "proj", "out", "codex"):
            os.makedirs(self.p(d))
        os.chmod(self.p("run"), 0o700)
        proj = self.p("proj")
        sh("git", "init", "-q", cwd=proj)
        with open(os.path.join(proj, "notes.txt"), "w") as f:
            f.write("notes\n")
        os.chmod(os.path.join(proj, "notes.txt"), 0o644)
        sh("git", "add", ".", cwd=proj)
        sh("git", "-c", "user.email=e2e@example.invalid", "-c", "user.name=e2e", "commit", "-qm", "e2e", cwd=proj)
        sh("git", "init", "-q", "--bare", self.p("remote.git"))
        sh("git", "remote", "add", "origin", self.p("remote.git"), cwd=proj)
        self.env = {
            "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
            "HOME": self.p("home"),
            "XDG_CONFIG_HOME": self.p("cfg"),
            "XDG_STATE_HOME": self.p("state"),
            "XDG_DATA_HOME": self.p("data"),
            "XDG_RUNTIME_DIR": self.p("run"),
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "USER": "root",
            "LOGNAME": "root",
        }
        self.login_shell = "/bin/bash"
        args = [sys.executable, os.path.join(HERE, "model.py"), "--out", self.p("out"), "--command", self.command,
                "--port-file", self.p("port")]
        if case == "pty":
            args += ["--pty-answer", "y"]
        self.model = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(self.p("model.err"), "w"))
        for _ in range(200):
            if os.path.exists(self.p("port")):
                break
            time.sleep(0.02)
        self.port = int(open(self.p("port")).read())

    def p(self, *parts):
        return os.path.join(self.dir, *parts)

    def agentsh(self, *args, env=None):
        e = dict(self.env, **(env or {}))
        return subprocess.run(["env", "-i"] + [f"{k}={v}" for k, v in e.items()] + [AGENTSH, *args],
                              capture_output=True, text=True, cwd=self.p("proj"))

    def audit(self):
        path = self.p("state", "agentsh", "audit.jsonl")
        if not os.path.exists(path):
            return []
        return [json.loads(line) for line in open(path) if line.strip()]

    def records(self):
        """Decision records of the test command (start-up commands and wrappers excluded)."""
        out = []
        for r in self.audit():
            if r.get("event") != "decision":
                continue
            text = r.get("command", "").replace("\\n", "\n")
            if text == self.command or text.endswith(" -c " + shlex.quote(self.command)) or \
                    (self.command in text and "agentsh" in text and " -c " in text):
                out.append(r)
        return out

    def startup_asks(self):
        mine = {id(r) for r in self.records()}
        return [r for r in self.audit() if r.get("event") == "decision" and id(r) not in mine
                and r["decision"] != "allow" and self.command not in r.get("command", "").replace("\\n", "\n")]

    def result(self):
        path = self.p("out", "result.txt")
        return open(path).read() if os.path.exists(path) else ""

    def pushed(self):
        return sh("git", "--git-dir", self.p("remote.git"), "rev-parse", "-q", "--verify", "refs/heads/e2e").returncode == 0

    def passwd(self):
        lines = []
        for line in open("/etc/passwd"):
            f = line.rstrip("\n").split(":")
            if len(f) == 7 and f[2] == "0":
                f[5], f[6] = self.p("home"), self.login_shell
            lines.append(":".join(f))
        with open(self.p("passwd"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
        return self.p("passwd")

    def isolated(self, argv, env, foreground=False):
        setup = (f"mount --bind {shlex.quote(self.passwd())} /etc/passwd && "
                 "mount -t tmpfs -o size=8m tmpfs /root && mount -t tmpfs -o size=8m tmpfs /home && exec \"$@\"")
        user = [] if os.getuid() == 0 else ["--user", "--map-root-user"]
        # A UI needs --foreground: plain timeout puts it in a background group, stopped by SIGTTOU.
        limit = ["timeout", "-k", "5"] + (["--foreground"] if foreground else []) + [str(TIMEOUT)]
        return (["unshare", *user, "--mount", "--propagation", "private", "sh", "-c", setup, "sh", "env", "-i"]
                + [f"{k}={v}" for k, v in env.items()] + limit + argv)

    def stop(self):
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode("utf8", "replace")
            except OSError:
                continue
            if self.dir + "/" in cmd and "model.py" not in cmd:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        self.model.terminate()
        try:
            self.model.wait(5)
        except subprocess.TimeoutExpired:
            self.model.kill()


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def edit_json(path, change):
    obj = json.load(open(path)) if os.path.exists(path) else {}
    change(obj)
    write_json(path, obj)


def wire(run, ui=False):
    """Sets up the agent and the wiring as a person following README.md would. Returns argv: the
    agent headless, or with `ui` its own interface (as after its first-run questions)."""
    a, w, env = run.agent, run.wiring, run.env
    link_dir = os.path.join(run.p("data"), "agentsh", "bin")
    log = []

    def init(target, extra=None):
        r = run.agentsh("init", target, "--write", env=extra)
        log.append(r.stdout + r.stderr)
        if r.returncode != 0:
            raise RuntimeError(f"agentsh init {target} --write failed: {r.stderr}")

    if a == "claude":
        env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{run.port}", ANTHROPIC_API_KEY="e2e",
                   IS_SANDBOX="1", DISABLE_AUTOUPDATER="1")
        init("claude-code")
        settings = run.p("home", ".claude", "settings.json")
        if w == "hook":
            edit_json(settings, lambda s: s.pop("env", None))
        elif w == "shell":
            edit_json(settings, lambda s: s.pop("hooks", None))
        argv = [os.path.join(BIN, "claude"), "-p", PROMPT, "--dangerously-skip-permissions", "--output-format", "json"]
        if ui:
            # ~/.claude.json as after onboarding, this key accepted and this folder trusted.
            write_json(run.p("home", ".claude.json"), {
                "hasCompletedOnboarding": True, "theme": "dark", "numStartups": 5,
                "customApiKeyResponses": {"approved": ["e2e"], "rejected": []},
                "projects": {run.p("proj"): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}})
            argv = [os.path.join(BIN, "claude")]
    elif a == "codex":
        env.update(CODEX_HOME=run.p("codex"), E2E_KEY="e2e")
        with open(run.p("codex", "config.toml"), "w") as f:
            f.write(f'model = "e2e"\nmodel_provider = "e2e"\napproval_policy = "never"\n'
                    f'sandbox_mode = "danger-full-access"\n\n[model_providers.e2e]\nname = "e2e"\n'
                    f'base_url = "http://127.0.0.1:{run.port}/v1"\nenv_key = "E2E_KEY"\nwire_api = "responses"\n')
            if ui:  # as after "Trust this folder? 1. Trust and continue"
                f.write(f'\n[projects."{run.p("proj")}"]\ntrust_level = "trusted"\n')
        init("codex", {"CODEX_HOME": run.p("codex")})
        if w in ("shell", "init"):
            run.login_shell = os.path.join(link_dir, "bash")   # chsh, in the private passwd
        if w == "shell":
            os.remove(run.p("codex", "hooks.json"))
        argv = [os.path.join(BIN, "codex")] + ([] if ui else ["exec", PROMPT])
    else:
        env.update(GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{run.port}", GEMINI_API_KEY="e2e",
                   GEMINI_CLI_TRUST_WORKSPACE="true")
        write_json(run.p("home", ".gemini", "settings.json"),
                   {"security": {"auth": {"selectedType": "gemini-api-key"}}, "ui": {"theme": "Default"}})
        init("gemini")
        if w in ("shell", "init"):
            env["PATH"] = f"{link_dir}:{env['PATH']}"
        if w == "shell":
            edit_json(run.p("home", ".gemini", "settings.json"), lambda s: s.pop("hooks", None))
        argv = [os.path.join(BIN, "gemini")] + ([] if ui else ["--yolo", "-p", PROMPT])
    if run.case in ("queue", "slow"):
        write_json(run.p("cfg", "agentsh", "config.json"), {"approvalQueue": True})
    if run.case == "pty":
        # agentsh waits (as it would with `agentsh approvals` open), so the terminal stays open
        # for the model to type into; no one answers, so it ends after 10 s.
        write_json(run.p("cfg", "agentsh", "config.json"), {"approvalQueue": True, "confirmationTimeoutSeconds": 10})
    if run.case == "tui-timeout":
        write_json(run.p("cfg", "agentsh", "config.json"), {"confirmationTimeoutSeconds": 10})
    with open(run.p("setup.log"), "w") as f:
        f.write("\n".join(log))
    return argv


def applies(agent, wiring, case):
    if case == "pty" and agent != "codex":
        return "n/a: only Codex gives the model a terminal and write_stdin"
    if case == "slow" and (agent, wiring) != ("codex", "init"):
        return "n/a: Codex's 10 s turn limit, under init"
    if case.startswith("tui") and wiring != "init":
        return "n/a: the UI cases run what init sets up"
    if case in ("tui-timeout", "tui-slow") and agent != "codex":
        return "n/a: an agent's own dialog waits for the person; only agentsh's prompt has a timeout"
    return None


def one(agent, wiring, case):
    run = Run(agent, wiring, case)
    try:
        argv = wire(run)
        full = run.isolated(argv, run.env)
        with open(run.p("argv.txt"), "w") as f:
            f.write(shlex.join(full) + "\n")
        t0 = time.time()
        agent_proc = subprocess.Popen(full, cwd=run.p("proj"), stdin=subprocess.DEVNULL,
                                      stdout=open(run.p("agent.out"), "w"), stderr=open(run.p("agent.err"), "w"),
                                      start_new_session=True)
        answered = ""
        if case in ("queue", "slow"):
            request = None
            for _ in range(300):
                listing = run.agentsh("approvals", "--json").stdout or "[]"
                try:
                    mine = [q for q in json.loads(listing) if q.get("command") == run.command]
                except ValueError:
                    mine = []
                if mine:
                    request = mine[0]
                    break
                if agent_proc.poll() is not None:
                    break
                time.sleep(0.1)
            if request:
                if case == "slow":
                    time.sleep(15)
                r = run.agentsh("approve", request["id"])
                answered = f"approved {request['id']}{' after 15 s' if case == 'slow' else ''} (rc {r.returncode})"
            else:
                answered = "no request appeared in the queue"
        try:
            rc = agent_proc.wait(TIMEOUT + 15)
        except subprocess.TimeoutExpired:
            agent_proc.kill()
            rc = "hung"
        wall = time.time() - t0
        time.sleep(0.1)
        return evaluate(run, rc, wall, answered)
    except Exception as e:  # a broken setup is a failure of the run, never a pass
        return {"ok": False, "summary": f"setup failed: {e}", "agent": agent, "wiring": wiring, "case": case}
    finally:
        run.stop()


# --------------------------------------------------------------------------- the agents' UIs

READY = re.compile(r"(❯|Type your message|Ask Codex to do anything)")
# Where each agent's ask appears under init, and the keys of a yes and of a no there.
ASKS = {
    "claude": (re.compile(r"Do you want to proceed\?"), "Enter", "2", "Claude Code's permission dialog"),
    "gemini": (re.compile(r"Allow execution of"), "Enter", "3", "Gemini CLI's confirmation dialog"),
    "codex": (re.compile(r"agentsh: a command waits for your approval"), "y", "n", "agentsh's prompt in a tmux popup"),
}


class Tmux:
    """The person's tmux (`inner`, where the agent runs) and their screen: a pane of another tmux
    (`outer`) with a client of the inner one attached, so popups on that client can be read and
    typed into, as the person would."""

    def __init__(self, run):
        self.inner, self.outer = run.p("t-i"), run.p("t-o")

    def cmd(self, socket, *args):
        return subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", *args], capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm-256color"})

    def start(self, script):
        self.cmd(self.inner, "new-session", "-d", "-s", "agent", "-x", "100", "-y", "40", script)
        attach = f"TERM=xterm-256color tmux -S {shlex.quote(self.inner)} attach -t agent"
        self.cmd(self.outer, "new-session", "-d", "-s", "screen", "-x", "100", "-y", "41", attach)

    def screen(self):
        return self.cmd(self.outer, "capture-pane", "-p", "-t", "screen").stdout

    def keys(self, *keys):
        self.cmd(self.outer, "send-keys", "-t", "screen", *keys)

    def stop(self):
        self.cmd(self.outer, "kill-server")
        self.cmd(self.inner, "kill-server")


def wait_until(pred, seconds, step=0.25):
    end = time.time() + seconds
    while time.time() < end:
        got = pred()
        if got:
            return got
        time.sleep(step)
    return None


def tui_one(agent, case):
    """The agent's UI under init in the person's tmux; the person answers where the ask appears."""
    run = Run(agent, "init", case)
    tmux = Tmux(run)
    screens = {}
    try:
        argv = wire(run, ui=True)
        env = dict(run.env, TERM="xterm-256color", COLORTERM="truecolor")
        full = run.isolated(argv, env, foreground=True)
        # The agent sees the person's tmux as a program started in a pane does ($TMUX, $TMUX_PANE).
        i = full.index("env") + 2
        script = run.p("agent.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\ncd " + shlex.quote(run.p("proj")) + "\n")
            f.write(shlex.join(full[:i]) + ' "TMUX=$TMUX" "TMUX_PANE=$TMUX_PANE" ' + shlex.join(full[i:]))
            f.write(" 2>" + shlex.quote(run.p("agent.err")) + "\necho AGENT-DONE; sleep 60\n")
        os.chmod(script, 0o755)
        tmux.start(script)
        t0 = time.time()
        if not wait_until(lambda: READY.search(tmux.screen()), 45):
            raise RuntimeError("the agent's UI did not come up:\n" + tmux.screen())
        time.sleep(2)
        tmux.keys("-l", PROMPT)
        time.sleep(1)
        tmux.keys("Enter")
        where, yes, no, place = ASKS[agent]
        seen = lambda: (lambda s: s if where.search(s) else None)(tmux.screen())  # noqa: E731
        asked = wait_until(seen, 10)
        if not asked and not os.path.exists(run.p("out", "requests.jsonl")):
            # A UI still starting can drop the first Enter; a person presses it again.
            tmux.keys("Enter")
        asked = asked or wait_until(seen, 30)
        screens["1-asked"] = asked or tmux.screen()
        person = "nothing asked the person"
        if asked:
            time.sleep(0.7)
            if case in ("tui-yes", "tui-slow"):
                if case == "tui-slow":
                    time.sleep(20)
                tmux.keys(yes)
                person = f"{place}: yes ({yes}){' after 20 s' if case == 'tui-slow' else ''}"
            elif case == "tui-no":
                tmux.keys(no)
                person = f"{place}: no ({no})"
                if agent == "claude":
                    # Claude Code's No ends the turn; the model reads the refusal with the
                    # person's next message. (Gemini CLI's No cancels the request: the model is
                    # asked nothing more, and the screen says "Request cancelled".)
                    time.sleep(3)
                    tmux.keys("-l", "what now?")
                    time.sleep(1)
                    tmux.keys("Enter")
                    person += ", then 'what now?'"
            else:
                person = f"{place}: no answer"
        # Gemini CLI's No cancels the request: no result comes.
        limit = 40 if case == "tui-timeout" else 4 if (agent, case) == ("gemini", "tui-no") else 25
        got = wait_until(lambda: run.result(), limit)
        time.sleep(2)
        screens["2-after"] = tmux.screen()
        for name, text in screens.items():
            with open(run.p(f"screen-{name}.txt"), "w") as f:
                f.write(text)
        return evaluate_tui(run, case, asked, got, person, time.time() - t0, screens["2-after"])
    except Exception as e:  # a broken setup is a failure of the run, never a pass
        return {"ok": False, "summary": f"setup failed: {e}", "agent": agent, "wiring": "init", "case": case}
    finally:
        tmux.stop()
        run.stop()


def evaluate_tui(run, case, asked, result, person, wall, screen):
    run.agentsh("log", "-n", "1")
    recs = run.records()
    outcomes = [r["outcome"] for r in recs]
    res = result or ""
    pending = json.loads(run.agentsh("approvals", "--json").stdout or "[]")
    checks = {"asked where the person looks": bool(asked), "gated (agentsh recorded the command)": bool(recs)}
    if case in ("tui-yes", "tui-slow"):
        checks["ran, once"] = run.pushed() and outcomes.count("approved_once") >= 1
        checks["no second ask"] = not pending and not any(o in ("no_terminal", "timed_out") for o in outcomes)
        checks["the model saw the result"] = bool(res) and not re.search(r"not approved|denied|rejected", res)
    else:
        checks["did not run"] = not run.pushed()
        if run.agent == "gemini" and case == "tui-no":
            checks["the No ended the turn (Gemini CLI: 'Request cancelled')"] = "Request cancelled" in screen
        else:
            told = r"not approved|rejected|doesn't want to proceed|denied" if case == "tui-no" else r"no one answered"
            checks["the model was told"] = bool(re.search(told, res, re.I))
    ok = all(checks.values())
    failed = [k for k, v in checks.items() if not v]
    summary = (f"{'/'.join(outcomes) or 'NOT GATED'}; {person}; {wall:.1f}s"
               + (f"; failed: {', '.join(failed)}" if failed else "")
               + f"; model saw: {' '.join(res.split())[:100]}")
    rec = {"ok": ok, "summary": summary, "checks": checks, "agent": run.agent, "wiring": "init", "case": case,
           "records": recs, "result": res}
    with open(run.p("record.json"), "w") as f:
        json.dump(rec, f, indent=1, default=str)
    return rec


def evaluate(run, rc, wall, answered):
    # A request whose agentsh was killed with the agent (Codex ends its terminal sessions when
    # it exits) is recorded as abandoned by the next reader of the log.
    run.agentsh("log", "-n", "1")
    recs = run.records()
    res = run.result()
    last = recs[-1] if recs else {}
    decisions = sorted({r["decision"] for r in recs})
    outcomes = [r["outcome"] for r in recs]
    checks = {"gated (agentsh recorded the command)": bool(recs)}
    case = run.case
    if case == "safe":
        checks["allowed"] = decisions == ["allow"]
        checks["output reached the model"] = "hello" in res and "notes.txt" in res
        checks["status 3 reached the model"] = any(s in res for s in ("Exit code 3", "exited with code 3", "Exit Code: 3"))
        checks["no agentsh text in the output"] = "agentsh:" not in res
        checks["no start-up command asked"] = not run.startup_asks()
    elif case == "forbidden":
        checks["denied"] = "deny" in decisions and "allow" not in [r["decision"] for r in recs[-1:]]
        checks["nothing written"] = not os.path.exists(run.p("proj", ".agents", "terminal.json"))
        checks["the model read why"] = "denied" in res
    elif case == "ask":
        checks["asked"] = "ask" in decisions
        checks["did not run"] = not run.pushed()
        checks["refused at once (< 30 s)"] = wall < 30
        checks["the model read why"] = "approv" in res.lower()
    elif case in ("queue", "slow"):
        checks["approved in the queue"] = "approved_once" in outcomes
        checks["ran"] = run.pushed()
        checks["asked once (one request)"] = answered.startswith("approved")
        if case == "slow":
            checks["the model saw the result (exit 0)"] = "exited with code 0" in res
    elif case == "pty":
        checks["did not run"] = not run.pushed()
        checks["not approved by the model"] = not any(o.startswith("approved") for o in outcomes)
        if run.wiring == "shell":
            typed = os.path.exists(run.p("out", "model.log")) and "write_stdin" in open(run.p("out", "model.log")).read()
            checks["the model typed into the terminal (write_stdin)"] = typed
    ok = all(checks.values())
    failed = [k for k, v in checks.items() if not v]
    summary = (f"{'/'.join(outcomes) or 'NOT GATED'}; rc={rc} {wall:.1f}s"
               + (f"; {answered}" if answered else "")
               + (f"; failed: {', '.join(failed)}" if failed else "")
               + f"; model saw: {' '.join(res.split())[:110]}")
    rec = {"ok": ok, "summary": summary, "checks": checks, "agent": run.agent, "wiring": run.wiring, "case": case,
           "records": recs, "startup_asks": run.startup_asks(), "result": res, "rc": rc, "wall": wall}
    with open(run.p("record.json"), "w") as f:
        json.dump(rec, f, indent=1, default=str)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", default=",".join(WIRINGS))
    ap.add_argument("--wirings", default="")
    ap.add_argument("--cases", default=",".join(list(CASES) + TUI_CASES))
    args = ap.parse_args()
    want_w = set(filter(None, args.wirings.split(",")))
    cases = args.cases.split(",")
    t0 = time.time()
    rows = []
    for agent in args.agents.split(","):
        for wiring in WIRINGS[agent]:
            if want_w and wiring not in want_w:
                continue
            for case in cases:
                why = applies(agent, wiring, case)
                if why:
                    rows.append({"agent": agent, "wiring": wiring, "case": case, "ok": None, "summary": why})
                    continue
                r = tui_one(agent, case) if case.startswith("tui") else one(agent, wiring, case)
                rows.append(r)
                print(f"{'ok  ' if r['ok'] else 'FAIL'} {agent:<6} {wiring:<5} {case:<9} {r['summary']}", flush=True)
    print()
    print(f"{'agent':<7} {'wiring':<7} " + " ".join(f"{c:<10}" for c in cases))
    seen = []
    for r in rows:
        if (r["agent"], r["wiring"]) not in seen:
            seen.append((r["agent"], r["wiring"]))
    for agent, wiring in seen:
        cells = []
        for c in cases:
            r = next((x for x in rows if (x["agent"], x["wiring"], x["case"]) == (agent, wiring, c)), None)
            cells.append("-" if r is None or r["ok"] is None else ("ok" if r["ok"] else "FAIL"))
        print(f"{agent:<7} {wiring:<7} " + " ".join(f"{c:<10}" for c in cells))
    ran = [r for r in rows if r["ok"] is not None]
    good = sum(1 for r in ran if r["ok"])
    with open(os.path.join(ROOT, "summary.json"), "w") as f:
        json.dump([{k: r.get(k) for k in ("agent", "wiring", "case", "ok", "summary")} for r in rows], f, indent=1)
    print(f"\ne2e: {good}/{len(ran)} as expected ({time.time() - t0:.0f}s; '-' is not applicable)")
    return 0 if good == len(ran) and ran else 1


if __name__ == "__main__":
    sys.exit(main())
