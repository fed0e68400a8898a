"""What eval/score.py and eval/friction.py share: finding the binary, reading a JSONL corpus,
a private scratch place to judge in, and running `agentsh check --json` on many commands.

Only the standard library is used, so CI and every checkout can run the scorers as is.
"""

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_EVAL = ROOT.parent / "shared" / "eval"
DECISION_BY_STATUS = {0: "allow", 10: "ask", 11: "deny"}
# A fixed PATH, so the person's own bin directories cannot change what a command names.
SCRATCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# A small but realistic project for the workspace flavour of the scratch place.
WORKSPACE_FILES = {
    "README.md": "# demo\n\nA small project to judge commands in.\n",
    ".gitignore": "build/\ndist/\ntarget/\nnode_modules/\n__pycache__/\n",
    "Makefile": "all:\n\tcargo build\n\ntest:\n\tpytest -q\n",
    "package.json": '{\n  "name": "demo",\n  "version": "0.1.0",\n  "scripts": {"test": "node tests/index.test.js"}\n}\n',
    "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
    "pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\n',
    "src/main.rs": 'fn main() {\n    println!("hello");\n}\n',
    "src/demo/__init__.py": "",
    "src/demo/app.py": "def add(a, b):\n    return a + b\n",
    "src/index.js": "module.exports = (a, b) => a + b;\n",
    "tests/test_app.py": "from demo.app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/index.test.js": "const add = require('../src/index.js');\nif (add(1, 2) !== 3) process.exit(1);\n",
}


def prog():
    return Path(sys.argv[0]).stem


def fail(message, hint=None):
    """A usage problem (no corpus, no binary): exit status 2."""
    print(f"{prog()}: {message}", file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    sys.exit(2)


def build_dirs(profiles=("release", "debug")):
    """Where Cargo puts the binary of each profile: target/<host tuple>/<profile> (the default
    build names the host as its target: see .cargo/config.toml), then target/<profile> (a build
    without a target, such as one with its own RUSTFLAGS and --config)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    try:
        host = subprocess.run(["rustc", "--print", "host-tuple"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        host = None
    return [d for p in profiles for d in ([target / host / p] if host else []) + [target / p]]


def find_binary(profiles=("release", "debug")):
    """The most recently built binary of these profiles, so a stale one is never scored."""
    built = [d / "agentsh" for d in build_dirs(profiles) if (d / "agentsh").is_file()]
    return max(built, key=lambda b: b.stat().st_mtime, default=None)


def binary(arg, default=None):
    """The binary to score, as an absolute path (commands run from a scratch directory).

    `arg` is --bin; without it `default` is used, or else the newest build (find_binary)."""
    path = Path(arg) if arg else default if default is not None else find_binary()
    if path is None or not os.access(path, os.X_OK):
        shown = path or "target/[<host>/]{release,debug}/agentsh"
        fail(f"no agentsh binary at {shown}", "build it with `cargo build --release`, or pass --bin PATH")
    return path.resolve()


def read_corpus(path, labels):
    """The corpus rows, each a dict with at least `command` (str) and `label` (one of `labels`)."""
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
            if row["label"] not in labels or not isinstance(row["command"], str):
                raise ValueError(f"unexpected label or command: {row['label']!r}")
        except (ValueError, KeyError, TypeError) as e:
            fail(f"{path}:{number}: {e}")
        rows.append(row)
    return rows


class Scratch:
    """A private HOME, XDG_* directories and working directory, removed on exit.

    Nothing of the person running the scorer applies: the environment is built from scratch
    (no inherited XDG_*, AGENTSH_*, TMPDIR or PATH), so the verdicts are reproducible.
    With `workspace=True` the working directory is a git repository holding a small project
    (WORKSPACE_FILES); otherwise it is empty, and with the sandbox on an empty git repository: the
    box grants a workspace only to a project (issue 25), so a plain directory would have no box.
    """

    def __init__(self, workspace=False, sandbox=True):
        self.workspace = workspace
        # `sandbox=False` writes a user config with `"sandbox": {"enabled": false}`: the judge
        # alone, as on a machine without Landlock.
        self.sandbox = sandbox

    def __enter__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix=f"agentsh-{prog()}-")
        root = Path(self._tmp.name)
        self.home = root / "home"
        xdg = {
            "XDG_CONFIG_HOME": self.home / ".config",
            "XDG_STATE_HOME": self.home / ".local" / "state",
            "XDG_DATA_HOME": self.home / ".local" / "share",
            "XDG_CACHE_HOME": self.home / ".cache",
            "XDG_RUNTIME_DIR": root / "run",
        }
        self.cwd = self.home / "src" / "demo" if self.workspace else root / "cwd"
        for d in (self.home, self.cwd, *xdg.values()):
            d.mkdir(parents=True, exist_ok=True)
        xdg["XDG_RUNTIME_DIR"].chmod(0o700)
        self.env = {
            "PATH": SCRATCH_PATH, "HOME": str(self.home), "USER": "agent", "LOGNAME": "agent",
            "LANG": "C.UTF-8", "NO_COLOR": "1", **{k: str(v) for k, v in xdg.items()},
        }
        if self.workspace:
            self._make_workspace()
        elif self.sandbox:
            self._git(["init", "-q"])
        if not self.sandbox:
            config = xdg["XDG_CONFIG_HOME"] / "agentsh"
            config.mkdir(parents=True, exist_ok=True)
            (config / "config.json").write_text('{"sandbox": {"enabled": false}}\n')
        return self

    def __exit__(self, *exc):
        self._tmp.cleanup()

    def _make_workspace(self):
        for name, text in WORKSPACE_FILES.items():
            path = self.cwd / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        self._git(["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"])

    def _git(self, *argvs):
        git_env = {**self.env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
                   "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z"}
        identity = ["-c", "user.name=agent", "-c", "user.email=agent@example.invalid",
                    "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
        try:
            for argv in argvs:
                subprocess.run(["git", *identity, *argv], cwd=self.cwd, env=git_env, check=True,
                               capture_output=True)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"{prog()}: warning: the scratch workspace is not a git repository ({e})", file=sys.stderr)


def check(bin_path, command, scratch, timeout):
    """`agentsh check --json --stdin` on one command in `scratch`.

    Returns (verdict, None), the verdict being check's JSON object, or (None, error). An error is
    never a decision: a crash, a usage error or unreadable output counts as neither allow nor block.
    """
    try:
        proc = subprocess.run(
            [str(bin_path), "check", "--json", "--stdin"],
            input=command.encode("utf-8", "surrogatepass"),
            capture_output=True, cwd=scratch.cwd, env=scratch.env, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g}s"
    except OSError as e:
        return None, f"cannot run: {e}"

    status = DECISION_BY_STATUS.get(proc.returncode)
    if status is None:
        stderr = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"exit status {proc.returncode}" + (f": {stderr[0]}" if stderr else "")
    try:
        verdict = json.loads(proc.stdout)
        decision = verdict["decision"]
        if not isinstance(verdict.get("segments", []), list):
            raise TypeError("segments is not a list")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, f"exit status {proc.returncode} without a JSON verdict on stdout"
    if decision != status:
        return None, f"decision {decision!r} disagrees with exit status {proc.returncode}"
    return verdict, None


def check_all(bin_path, commands, scratch, jobs, timeout):
    """check() on every command, `jobs` processes at a time; the results in the commands' order.

    `check` judges one command per process, so the batching is parallel processes."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda c: check(bin_path, c, scratch, timeout), commands))


def default_jobs():
    return max(2, 2 * (os.cpu_count() or 1))


def oneline(text, limit=200):
    """One line, with control, bidi and zero-width characters escaped (the corpora hold bypass
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
