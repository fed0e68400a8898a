//! What a command with no box would read unasked by other ways than the paths in home its text
//! names (rt7 B1, B3, B4, B5): the secrets of agentsh's own environment, which the box's
//! environment leaves out; the person's daemons and the credentials in home, which a box does
//! not reach; the settings files in home that package managers print; the raw disk and the
//! kernel's memory, which the box's own `/dev` and `/proc` do not hold. Pure: the names of the
//! environment's secrets come from `run` as data ([`super::unboxed::HomeSight::secret_env`]);
//! `unboxed` asks a person where these find something.
//!
//! In a box none of this needs a person: the box's environment has no secret the box's rules
//! know (`run::sandbox::environ`), its network has no socket of the person's daemons, its home
//! shows no credential or settings file that holds one, and its `/dev` has no disk.

/// Why, in words for the person, where a command with no box would print a variable of the
/// environment that holds a secret, or every variable.
const ENVIRONMENT_WHY: &str = "agentsh's environment holds secrets (tokens, keys, passwords) that the sandbox leaves \
                               out of a command's environment, and what a command prints goes to the agent";

/// What `text` (its commands `argvs`, unwrapped), run with no box, would print of agentsh's
/// environment that the box's environment leaves out: a variable of `secret_env` that the text
/// names (`echo $GITHUB_TOKEN`, `printenv GITHUB_TOKEN`, `ENVIRON["GITHUB_TOKEN"]`, also with
/// quotes or ANSI-C escapes in the name), a variable whose name it computes (`${!x}`,
/// `${!GITHUB*}`, a name reference, `printenv "$n"`), or every variable (`printenv`, `env`,
/// `export -p`, `declare -p`, `set`, awk's `ENVIRON`, jq's `env`, `envsubst`). The first word
/// found, and why. Nothing where the environment holds no secret.
pub fn environment(text: &str, argvs: &[&[String]], secret_env: &[String]) -> Option<(String, String)> {
    if secret_env.is_empty() {
        return None;
    }
    // The shell removes quotes and backslashes from a word (`GITHUB_TOK''EN`), and decodes
    // `$'\x54'`: the name as the shell reads it.
    let decoded = crate::judge::unboxed::ansi_c(text);
    let unquoted: String = decoded.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    if let Some(name) = secret_env.iter().find(|n| names(text, n) || names(&unquoted, n)) {
        return Some((format!("${name}"), format!("prints or passes on ${name}: {ENVIRONMENT_WHY}")));
    }
    // The shell's own environment by its process (`/proc/self/environ`, `/proc/$$/environ`,
    // `cd /proc/self && cat environ`).
    if names(&unquoted, "environ") {
        let why = format!("reads a process's environment (`/proc/…/environ`): {ENVIRONMENT_WHY}");
        return Some(("environ".to_string(), why));
    }
    if unquoted.contains("${!") {
        let why = format!(
            "expands a variable whose name it computes (`${{!…}}`), which may be a secret's: {ENVIRONMENT_WHY}"
        );
        return Some(("${!".to_string(), why));
    }
    argvs.iter().find_map(|argv| {
        let what = dumps(argv)?;
        let name = argv[0].rsplit('/').next().unwrap_or_default().to_string();
        Some((name, format!("{what}: {ENVIRONMENT_WHY}")))
    })
}

/// Whether `text` holds `name` as a whole name (not a part of a longer one: `GITHUB_TOKENS`,
/// `MY_GITHUB_TOKEN`).
fn names(text: &str, name: &str) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    text.match_indices(name).any(|(at, _)| {
        let end = at + name.len();
        (at == 0 || !ident(bytes[at - 1])) && bytes.get(end).is_none_or(|&b| !ident(b))
    })
}

/// What `argv` prints of the environment beyond the names its text holds: every variable, or
/// one whose name it computes.
fn dumps(argv: &[String]) -> Option<&'static str> {
    let name = argv.first()?.rsplit('/').next().unwrap_or_default();
    let args = &argv[1..];
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with(['-', '+'])).collect();
    let computed = |w: &&String| w.contains(['$', '`']);
    match name {
        "printenv" if positional.is_empty() => Some("prints the whole environment"),
        "printenv" if positional.iter().any(computed) => Some("prints a variable whose name it computes"),
        // With no command to run (`env`, `env -0`, `env -u X`, `env A=1`).
        "env" if env_runs_nothing(args) => Some("prints the whole environment"),
        "export" | "declare" | "typeset" | "readonly" | "local" if positional.is_empty() => {
            Some("prints every variable")
        }
        "declare" | "typeset" | "local" if args.iter().any(|a| a.starts_with('-') && a.contains('n')) => {
            Some("makes a reference to a variable by a name it may compute")
        }
        "export" | "declare" | "typeset" | "readonly" | "local"
            if args.iter().any(|a| a.starts_with('-') && a.contains('p')) && positional.iter().any(computed) =>
        {
            Some("prints a variable whose name it computes")
        }
        "set" if args.is_empty() => Some("prints every variable"),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox" if args.iter().any(|a| a.contains("ENVIRON")) => {
            Some("reads the environment (awk's ENVIRON)")
        }
        "jq" | "gojq" | "jaq" | "yq" | "jq-1.6" | "jq-1.7"
            if args.iter().any(|a| ["env", "ENV", "strenv", "envsubst"].iter().any(|n| names(a, n))) =>
        {
            Some("reads the environment (jq's and yq's env, $ENV)")
        }
        "envsubst" => Some("puts the environment's variables into the text it is given"),
        _ => None,
    }
}

/// Whether `env`, given `args`, runs no command (and so prints the environment): only options
/// and assignments.
fn env_runs_nothing(args: &[String]) -> bool {
    const VALUED: &[&str] = &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"];
    let mut words = args.iter();
    while let Some(w) = words.next() {
        if VALUED.contains(&w.as_str()) {
            if matches!(w.as_str(), "-S" | "--split-string") {
                return false;
            }
            words.next();
        } else if w.starts_with("-S") || w.starts_with("--split-string=") || !(w.starts_with('-') || w.contains('=')) {
            return false;
        }
    }
    true
}

/// Programs that work through the person's daemons or with the credentials in home, each group
/// with why: with no box, every use but a version or help asks (rt7 B4). In a box they reach no
/// daemon (the box has no socket of the person's, and its environment no `DOCKER_HOST`) and no
/// credential (home's are hidden), so their rules there are the usual ones (`rules`).
const PERSONS_SERVICES: &[(&[&str], &str)] = &[
    (
        &["docker", "podman", "nerdctl", "crictl", "ctr", "lxc", "incus", "virsh"],
        "talks to the person's container daemon through its socket, which shows every container's environment \
         (`inspect`), output (`logs`) and settings (`compose config`)",
    ),
    (
        &["kubectl", "oc", "k9s", "helm", "kind", "minikube", "k3d", "argocd", "flux", "kubectx", "kubens"],
        "talks to a Kubernetes cluster with the credentials in home's kubeconfig, which shows its pods' \
         environments, config maps and secrets",
    ),
    (
        &["terraform", "tofu", "terragrunt", "pulumi", "cdk", "cdktf", "serverless", "sls"],
        "reads infrastructure state, often remote and fetched with the cloud credentials in home, which holds the \
         sensitive outputs and the secrets of what it describes (`output`, `show`)",
    ),
    (
        &[
            "aws",
            "gcloud",
            "gsutil",
            "bq",
            "az",
            "doctl",
            "flyctl",
            "fly",
            "heroku",
            "vercel",
            "netlify",
            "wrangler",
            "firebase",
            "s3cmd",
            "rclone",
            "oci",
            "ibmcloud",
            "hcloud",
            "linode-cli",
            "scw",
            "railway",
        ],
        "signs in to a cloud account with the credentials in home",
    ),
    (&["gh", "glab", "hub", "tea"], "signs in to the code-hosting service with the token in home"),
    (
        &["vault", "op", "bw", "lpass", "pass", "gopass", "doppler", "infisical", "chamber", "sops"],
        "reads a secret store with the person's credentials",
    ),
];

/// Where `argv` works through the person's daemons or with home's credentials, which the box
/// would not have reached: its program's name and why.
pub fn service(argv: &[String]) -> Option<(String, &'static str)> {
    let name = argv.first()?.rsplit('/').next().unwrap_or_default();
    let (_, why) = PERSONS_SERVICES.iter().find(|(names, _)| names.contains(&name))?;
    let args = &argv[1..];
    // Only its version or help: `docker --version`, `kubectl version`, `gh help`.
    let first = args.iter().find(|a| !a.starts_with('-'));
    let about_itself = match first {
        Some(sub) => matches!(sub.as_str(), "version" | "help" | "completion"),
        None => args.iter().all(|a| matches!(a.as_str(), "--version" | "-v" | "-V" | "--help" | "-h")),
    };
    (!about_itself).then(|| (name.to_string(), *why))
}

/// Package managers' subcommands that print their settings, where the registries' passwords
/// and tokens are (rt7 B5): `pip config list` prints `pip.conf`'s index URL with its password,
/// `bundle config` `~/.bundle/config`'s gem servers' credentials, `go env` a `GOPROXY` with its
/// password. In a box home's settings files are hidden and the environment's secrets left out.
const PRINTS_SETTINGS: &[(&[&str], &[&str])] = &[
    (&["pip", "pip3", "pipx"], &["config"]),
    (&["npm", "pnpm", "yarn", "bun"], &["config", "c", "get"]),
    (&["poetry", "pdm", "conda", "mamba", "micromamba", "composer", "hatch", "cargo", "nuget"], &["config"]),
    (&["bundle", "bundler"], &["config", "env"]),
    (&["gem"], &["env", "environment", "sources"]),
    (&["go"], &["env"]),
];

/// Settings a package manager prints that hold no credential: `go env GOPATH`, `npm config get
/// prefix`. Anything else it may print (`GOPROXY`, `registry`, `//host/:_authToken`) may.
const PLAIN_SETTINGS: &[&str] = &[
    "GOPATH",
    "GOROOT",
    "GOOS",
    "GOARCH",
    "GOVERSION",
    "GOMODCACHE",
    "GOCACHE",
    "GOBIN",
    "GOMOD",
    "GOWORK",
    "GOEXE",
    "GOHOSTOS",
    "GOHOSTARCH",
    "GOTOOLDIR",
    "CGO_ENABLED",
    "prefix",
    "cache",
];

/// Where `argv` prints a package manager's settings, which may hold home's registry
/// credentials: its program's name.
pub fn settings(argv: &[String]) -> Option<String> {
    let name = argv.first()?.rsplit('/').next().unwrap_or_default();
    let (_, subs) = PRINTS_SETTINGS.iter().find(|(names, _)| names.contains(&name))?;
    let args = &argv[1..];
    // Any word, not only the first: an option before the subcommand may take a value
    // (`npm --prefix x config list`).
    let at = args.iter().position(|a| subs.contains(&a.as_str()))?;
    let rest: Vec<&String> = args[at + 1..].iter().filter(|a| !a.starts_with('-')).collect();
    let read = rest.first().map(|w| w.as_str());
    let names = match read {
        Some("get") => &rest[1..],
        _ if args[at] == "env" || args[at] == "get" => &rest[..],
        _ => return Some(name.to_string()),
    };
    let plain = !names.is_empty() && names.iter().all(|n| PLAIN_SETTINGS.contains(&n.as_str()));
    (!plain).then(|| name.to_string())
}

/// Devices the box shows too, which hold nothing of anyone's: the command's own streams and
/// descriptors, and the ones that give bytes of nothing. Bash's `/dev/tcp` and `/dev/udp` are
/// no files (the network's rules judge them).
const HARMLESS_DEVICES: &[&str] =
    &["null", "zero", "full", "random", "urandom", "tty", "stdin", "stdout", "stderr", "ptmx", "fd", "tcp", "udp"];

/// Whether `path` (absolute, normalized) is in `/dev` (but for [`HARMLESS_DEVICES`], `/dev`
/// itself too: what walks it reads its disks), or is the kernel's memory (`/proc/kcore`) or its
/// firmware's (`/sys/firmware`): with no box, reading it reads the raw disk that holds home and
/// every other file, another terminal's keystrokes, or every process's memory (rt7 B3). A
/// disk by another name (`/dev/disk/by-uuid/…`, `/dev/block/254:0`, `/dev/mapper/…`) is in
/// `/dev` too; a link elsewhere to one is followed by `unboxed`. The box's `/dev` holds only
/// the harmless ones, and its `/proc/kcore` is covered.
pub fn raw_device(path: &str) -> bool {
    if let Some(rest) = path.strip_prefix("/dev").filter(|r| r.is_empty() || r.starts_with('/')) {
        let mut parts = rest.split('/').filter(|c| !c.is_empty());
        return match (parts.next(), parts.next()) {
            (Some(first), None) => !HARMLESS_DEVICES.contains(&first),
            (Some("fd" | "tcp" | "udp"), Some(_)) => false,
            (Some("pts"), Some("ptmx")) => parts.next().is_some(),
            _ => true,
        };
    }
    path == "/proc/kcore" || path == "/sys/firmware" || path.starts_with("/sys/firmware/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    /// rt7 B1: what prints a secret of the environment, or every variable, with no box.
    #[test]
    fn printing_the_environments_secrets_is_found() {
        let secrets = ["GITHUB_TOKEN".to_string(), "ANTHROPIC_API_KEY".to_string()];
        let found = |text: &str| {
            let argvs: Vec<Vec<String>> = text.split(['|', ';']).map(argv).filter(|a| !a.is_empty()).collect();
            let refs: Vec<&[String]> = argvs.iter().map(Vec::as_slice).collect();
            environment(text, &refs, &secrets)
        };
        for text in [
            "echo $GITHUB_TOKEN",
            "echo ${GITHUB_TOKEN:0:4}",
            "printenv GITHUB_TOKEN",
            "printenv GITHUB_TOK''EN",
            "printenv $'GITHUB_\\x54OKEN'",
            "awk 'BEGIN{print ENVIRON[\"ANTHROPIC_API_KEY\"]}'",
            "curl -H \"Authorization: token $GITHUB_TOKEN\" https://x",
            "printenv",
            "env",
            "env -0",
            "env -u PATH",
            "env | grep -i token",
            "export -p",
            "export",
            "declare -p",
            "declare -px",
            "typeset",
            "set",
            "echo ${!GITHUB*}",
            "echo ${!n}",
            "printenv $n",
            "declare -n r=GITHUB_TOK",
            "awk 'BEGIN{for(k in ENVIRON)print k,ENVIRON[k]}'",
            "jq -n env",
            "jq -n $ENV",
            "yq -n strenv(X)",
            "envsubst",
            "tr '\\0' '\\n' </proc/$$/environ",
            "cat /proc/thread-self/environ",
        ] {
            assert!(found(text).is_some(), "{text}");
        }
        for text in [
            "echo hi",
            "echo $HOME",
            "echo $GITHUB_TOKENS",
            "echo $MY_GITHUB_TOKEN",
            "printenv PATH",
            "env FOO=1 make",
            "export PATH=$PATH:/x",
            "declare -a xs",
            "set -e",
            "set -o pipefail",
            "awk '{print $1}'",
            "jq .environment",
            "cat README",
        ] {
            assert_eq!(found(text), None, "{text}");
        }
        // No secret in the environment: nothing to hide.
        assert_eq!(environment("printenv", &[&argv("printenv")], &[]), None);
    }

    /// rt7 B4: the person's daemons and credentials, but for a version or help.
    #[test]
    fn the_persons_daemons_and_credentials_are_found() {
        for text in [
            "docker inspect web",
            "docker logs web",
            "docker compose config",
            "docker ps",
            "podman logs web",
            "kubectl get pod x -o yaml",
            "kubectl get configmap -o yaml",
            "helm get values r",
            "terraform output -raw db_password",
            "terraform show",
            "/usr/bin/aws s3 ls",
            "gh auth token",
            "vault kv get secret/x",
        ] {
            assert!(service(&argv(text)).is_some(), "{text}");
        }
        for text in ["docker --version", "docker version", "kubectl version --client", "gh help", "terraform -h", "ls"]
        {
            assert_eq!(service(&argv(text)), None, "{text}");
        }
    }

    /// rt7 B5: package managers printing their settings.
    #[test]
    fn package_managers_printing_their_settings_are_found() {
        for text in [
            "pip config list",
            "pip3 config get global.index-url",
            "pip config debug",
            "bundle config",
            "bundle env",
            "yarn config get npmAuthToken",
            "npm config list -l",
            "npm get //registry.npmjs.org/:_authToken",
            "pnpm config list",
            "poetry config --list",
            "conda config --show",
            "composer config -g --list",
            "go env",
            "go env GOPROXY",
            "go env -json",
            "gem env",
            "cargo config get",
        ] {
            assert!(settings(&argv(text)).is_some(), "{text}");
        }
        for text in ["go env GOPATH", "go env GOOS GOARCH", "npm config get prefix", "pip list", "go build", "npm test"]
        {
            assert_eq!(settings(&argv(text)), None, "{text}");
        }
    }

    /// rt7 B3: the raw disk, other terminals, the kernel's memory; not the harmless devices.
    #[test]
    fn raw_devices_and_kernel_memory_are_found() {
        for p in [
            "/dev/vda",
            "/dev/sda1",
            "/dev/nvme0n1p2",
            "/dev/mem",
            "/dev/kmem",
            "/dev/block/254:0",
            "/dev/disk/by-uuid/x",
            "/dev/mapper/root",
            "/dev/pts/3",
            "/dev/shm/x",
            "/dev/*",
            "/dev",
            "/proc/kcore",
            "/sys/firmware/efi/efivars/x",
        ] {
            assert!(raw_device(p), "{p}");
        }
        for p in [
            "/dev/null",
            "/dev/urandom",
            "/dev/tty",
            "/dev/stderr",
            "/dev/fd/3",
            "/dev/pts/ptmx",
            "/dev/tcp/example.com/80",
            "/device",
            "/proc/cpuinfo",
            "/sys/class/net",
        ] {
            assert!(!raw_device(p), "{p}");
        }
    }
}
