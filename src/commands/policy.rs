//! `agentsh policy`: the effective policy for commands run in a directory: the level table, the
//! built-in rules summarized by category (generated from `rules::PROGRAMS`), the custom rules,
//! the whitelist and blacklist, and where each setting came from. It only reads.

use crate::cli::PolicyArgs;
use crate::judge::levels::{self, Level, Row};
use crate::judge::rules;
use crate::model::{Category, Risk};
use crate::policy::config::{self, Config, FileSettings};
use crate::text::sanitize::sanitize;
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub fn run(args: PolicyArgs) -> Result<i32> {
    let cwd = match args.cwd {
        Some(d) if d.is_dir() => d,
        Some(d) => bail!("--cwd {}: not a directory", d.display()),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let config = config::load(&cwd);
    crate::run::explain::print_warnings(&config.warnings);
    let files: Vec<(PathBuf, FileSettings)> = config.files.iter().map(|f| (f.clone(), config::read_file(f))).collect();
    let mut view = view(&config, &files);
    view["sandbox"] = sandbox_view(&config, &cwd);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&view).context("cannot serialize the policy")?);
    } else {
        crate::ask::tty::print_fitted(&text(&view));
    }
    Ok(0)
}

/// "user file /home/me/.config/agentsh/config.json" or "project file /src/x/.agents/terminal.json".
/// A file's trust state, in words (issue 17, item 9): the user file is the person's own; a
/// project file's loosening settings apply only while trusted.
fn trust_state(path: &Path) -> String {
    use crate::policy::trust::State;
    if config::user_file().as_deref() == Some(path) {
        return "the person's own: applies".into();
    }
    let Ok(bytes) = config::read_bytes(path) else { return "cannot be read: every command needs a person".into() };
    match crate::policy::trust::state(path, &config::Content::new(bytes, None)) {
        State::Trusted => "trusted: applies".into(),
        State::NeverTrusted => "not trusted: only its stricter settings apply; `agentsh trust` to trust it".into(),
        State::Changed => "edited since it was trusted: only its stricter settings apply; `agentsh trust` again".into(),
        State::StoreRefused(why) => format!("not trusted: the trust records cannot be relied on ({why})"),
    }
}

fn origin(path: &Path) -> String {
    let kind = if config::user_file().as_deref() == Some(path) { "user file" } else { "project file" };
    format!("{kind} {}", path.display())
}

/// Where a merged scalar came from: the files whose own value is the merged one.
fn source_of<T: PartialEq>(
    files: &[(PathBuf, FileSettings)],
    merged: Option<T>,
    get: impl Fn(&FileSettings) -> Option<T>,
) -> String {
    let from: Vec<String> =
        files.iter().filter(|(_, s)| merged.is_some() && get(s) == merged).map(|(p, _)| origin(p)).collect();
    if from.is_empty() { "built-in".to_string() } else { from.join(", ") }
}

fn row_json(r: &Row) -> Value {
    let cells: serde_json::Map<String, Value> =
        levels::LEVELS.iter().map(|l| (l.as_str().to_string(), json!(r.cell(*l).as_str()))).collect();
    json!({"row": r.name, "programs": r.programs, "category": r.category.map(Category::as_str), "cells": cells})
}

/// The built-in table grouped by category, then by the program's base risk.
fn builtin_summary() -> Value {
    let mut by: BTreeMap<&str, BTreeMap<Risk, Vec<&str>>> = BTreeMap::new();
    for p in rules::PROGRAMS {
        let names = by.entry(p.category.as_str()).or_default().entry(p.risk).or_default();
        for n in p.names {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    let categories: Vec<Value> = by
        .into_iter()
        .map(|(cat, risks)| {
            let risks: serde_json::Map<String, Value> =
                risks.into_iter().map(|(r, names)| (r.as_str().to_string(), json!(names))).collect();
            json!({"category": cat, "programs_by_base_risk": risks})
        })
        .collect();
    let wrappers: Vec<&str> = rules::WRAPPERS.iter().flat_map(|w| w.names.iter().copied()).collect();
    json!({
        "source": "built-in (src/judge/rules.rs)",
        "note": "a program's base risk; its checks can raise or lower it (`agentsh check` shows the one that applies)",
        "categories": categories,
        "wrappers": wrappers,
    })
}

fn view(config: &Config, files: &[(PathBuf, FileSettings)]) -> Value {
    let p = &config.policy;
    let list = |entries: &crate::judge::decide::Entries| -> Vec<Value> {
        entries.iter().map(|e| json!({"entry": e.text, "source": origin(Path::new(e.source))})).collect()
    };
    let custom: Vec<Value> = p
        .rules
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            v["source"] = json!(r.at);
            v
        })
        .collect();
    let mut levels_rows: Vec<Value> = levels::ROWS.iter().map(row_json).collect();
    levels_rows.push(row_json(&levels::UNLISTED));
    json!({
        "files": files.iter().map(|(f, _)| format!("{} ({})", origin(f), trust_state(f))).collect::<Vec<_>>(),
        "level": {
            "value": p.level.map(Level::as_str),
            "source": source_of(files, p.level, |s| s.level),
            "meaning": if p.level.is_some() {
                "the level's table and the risk assessment both apply; the stricter wins"
            } else {
                "no level: the risk-based policy alone"
            },
        },
        "level_table": levels_rows,
        "settings": {
            "requireCommandConfirmation": {
                "value": p.require_confirmation,
                "source": source_of(files, Some(p.require_confirmation), |s| s.require_confirmation),
            },
            "confirmationTimeoutSeconds": {
                "value": config.confirmation_timeout,
                "source": source_of(files, Some(config.confirmation_timeout), |s| s.confirmation_timeout),
            },
            "commandTimeoutSeconds": {
                "value": config.command_timeout,
                "source": source_of(files, Some(config.command_timeout).filter(|t| *t > 0), |s| s.command_timeout),
            },
        },
        "rules": custom,
        "rules_broken": p.rules_broken,
        "whitelist": list(&p.whitelist),
        "blacklist": list(&p.blacklist),
        "blacklist_broken": p.blacklist_broken,
        "builtin": builtin_summary(),
        "warnings": config.warnings,
    })
}

/// The box commands run in from here (issue 15), and where each of its parts comes from.
fn sandbox_view(config: &Config, cwd: &Path) -> Value {
    use crate::run::sandbox::{self, Confinement};
    let support = sandbox::probe();
    let kernel =
        json!({"landlock_abi": support.landlock_abi, "min_abi": sandbox::MIN_ABI, "namespaces": support.namespaces});
    let settings = &config.sandbox;
    let from = |f: &Option<String>| f.clone().unwrap_or_else(|| "built-in".to_string());
    let hosts = |list: &[crate::policy::sandbox_settings::Sourced]| -> Vec<Value> {
        list.iter().map(|h| json!({"path": h.path, "from": h.source})).collect()
    };
    let (confinement, judged) = crate::run::gate::sandbox_for(settings, cwd);
    match confinement {
        Confinement::Unconfined => {
            let why = match judged {
                crate::judge::decide::Sandbox::Off(w) => w,
                crate::judge::decide::Sandbox::On(_) => String::new(),
            };
            json!({"on": false, "why": why, "kernel": kernel, "enabled_source": from(&settings.enabled_from)})
        }
        Confinement::Boxed(mut plan) => {
            // As a box made now would be: with what only its making looks for.
            let spec = plan.spec_for_box();
            // What the box shows is what exists when it is made.
            let existing = |roots: &[crate::run::sandbox::Root]| -> Vec<crate::run::sandbox::Root> {
                roots.iter().filter(|r| r.path.to_string_lossy().contains('*') || r.path.exists()).cloned().collect()
            };
            json!({
            "on": true,
            "kernel": kernel,
            "workspace": spec.workspace,
            "home": spec.home,
            "network": {
                "value": spec.network.as_str(),
                "source": from(&settings.network_from),
                "registries": sandbox::proxy::REGISTRIES,
                "git_remotes": spec.net.git_dir.as_deref().map(sandbox::proxy::git_remotes).unwrap_or_default(),
                "allow_hosts": hosts(&settings.allow_hosts),
                "deny_hosts": hosts(&settings.deny_hosts),
                // Never the value: the header, and which of its variables are set.
                "credentials": settings.credentials.iter().map(|c| json!({
                    "host": c.host,
                    "header": c.header,
                    "variables": c.variables(),
                    "missing": c.variables().into_iter().filter(|v| std::env::var_os(v).is_none()).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            },
            "write": spec.write,
            "private": spec.private,
            "store": spec.store,
            "caches": existing(&spec.caches),
            // Package directories holding files linked from a store: copy-on-write in the box.
            "linked": spec.workspace.as_deref().map(sandbox::hardlinks::link_farms).unwrap_or_default(),
            "visible": existing(&spec.visible),
            "hidden": spec.hidden,
            "devices": spec.devices,
            // With what the person's git runs from the workspace, as the builder will find it.
            "read_only": spec.read_only.iter().cloned().chain(sandbox::holder::git_code(spec, false).roots()).collect::<Vec<_>>(),
            "deny": spec.deny,
            "refused": spec.refused,
            "pass_env": settings.pass_env,
            "max_processes": crate::run::sandbox::spawn::MAX_PROCESSES,
            })
        }
    }
}

fn sandbox_text(v: &Value) -> String {
    let mut out = String::new();
    let k = &v["kernel"];
    let abi = k["landlock_abi"].as_u64().map(|a| a.to_string()).unwrap_or_else(|| "none".into());
    let ns = s(&k["namespaces"]["state"]);
    if v["on"] != json!(true) {
        let _ = writeln!(out, "\nsandbox: off ({})", s(&v["why"]));
        let _ = writeln!(out, "  kernel: Landlock ABI {abi} (needs {}); user namespaces {ns}", k["min_abi"]);
        let _ = writeln!(out, "  commands run unconfined, and only what the judge allows runs without a person");
        return out;
    }
    let _ = writeln!(out, "\nsandbox: on (Landlock ABI {abi}; user, mount, PID, IPC and UTS namespaces)");
    let secs = crate::run::sandbox::holder::LIFETIME.as_secs();
    let _ = writeln!(
        out,
        "  kept: a holder process keeps each box for the next commands ({secs} s idle, or while a process is left in it)"
    );
    let _ = writeln!(
        out,
        "  workspace: {}",
        if v["workspace"].is_null() {
            "none (nothing of the person's is writable)".to_string()
        } else {
            s(&v["workspace"])
        }
    );
    let root = |r: &Value| {
        let source = r["source"].as_str().map(|x| format!(", {}", sanitize(x))).unwrap_or_default();
        format!("{} ({}{source})", s(&r["path"]), s(&r["from"]))
    };
    let net = &v["network"];
    let _ = writeln!(out, "  network: {} ({})", s(&net["value"]), s(&net["source"]));
    if net["value"] == json!("proxy") {
        let list = |key: &str| -> Vec<String> {
            net[key].as_array().into_iter().flatten().map(|h| if h.is_string() { s(h) } else { root(h) }).collect()
        };
        let _ = writeln!(
            out,
            "    only through agentsh's proxy (no direct network, UDP or DNS); a host not listed asks the person"
        );
        let _ = writeln!(out, "    package registries: {}", list("registries").join(", "));
        let shown = |items: Vec<String>| if items.is_empty() { "(none)".to_string() } else { items.join(", ") };
        let _ = writeln!(out, "    the project's git remotes: {}", shown(list("git_remotes")));
        let _ = writeln!(out, "    sandbox.allowHosts: {}", shown(list("allow_hosts")));
        let _ = writeln!(out, "    sandbox.denyHosts (never): {}", shown(list("deny_hosts")));
        for c in net["credentials"].as_array().into_iter().flatten() {
            let missing: Vec<String> = c["missing"].as_array().into_iter().flatten().map(s).collect();
            let state = if missing.is_empty() {
                "added by the proxy, over HTTP and HTTPS".to_string()
            } else {
                format!("not added: {} not set in agentsh's environment", missing.join(", "))
            };
            let _ = writeln!(out, "    credential: {} for {} ({state})", s(&c["header"]), s(&c["host"]));
        }
    }
    let sections: [(&str, String); 7] = [
        ("write", "writable, the person's (everything else of theirs is read-only or hidden):".to_string()),
        ("private", format!("the box's own, kept in {}:", s(&v["store"]))),
        ("caches", "the person's caches, copied on write (the box writes its own copy):".to_string()),
        ("visible", "shown read-only from hidden places (toolchains, harmless configuration, $PATH):".to_string()),
        ("hidden", "hidden whole, but for what is shown above:".to_string()),
        ("read_only", "read-only inside the workspace (code the person's own tools run):".to_string()),
        ("deny", "covered (neither readable nor writable):".to_string()),
    ];
    for (key, title) in sections {
        let items = v[key].as_array().cloned().unwrap_or_default();
        let _ = writeln!(out, "  {title}");
        if items.is_empty() {
            let _ = writeln!(out, "    (none)");
        }
        for r in &items {
            let _ = writeln!(out, "    {}", root(r));
        }
    }
    let _ =
        writeln!(out, "  home: {} is the box's own; of the person's, only what is shown above is in it", s(&v["home"]));
    let passed: Vec<String> = v["pass_env"].as_array().into_iter().flatten().map(s).collect();
    let _ = writeln!(
        out,
        "  environment: secrets and socket addresses removed ({}); /dev: null, zero, full, random, urandom, tty and the command's own terminal",
        if passed.is_empty() {
            "none passed by sandbox.passEnv".to_string()
        } else {
            format!("passed by sandbox.passEnv: {}", passed.join(", "))
        }
    );
    let _ = writeln!(
        out,
        "  kernel calls refused: ptrace, other processes' memory, keyrings, io_uring, bpf, TIOCSTI, raw sockets, set-user-ID bits; at most {} processes",
        v["max_processes"]
    );
    for r in v["refused"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "  not granted: {}: {}", s(&r["path"]), s(&r["why"]));
    }
    out
}

fn s(v: &Value) -> String {
    sanitize(v.as_str().unwrap_or(""))
}

/// Wraps a list of names to lines of about 96 characters, indented.
fn wrapped(names: &[Value], indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for n in names {
        let n = s(n);
        if !line.is_empty() && line.len() + n.len() + 1 > 96 {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&n);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
    out
}

fn text(v: &Value) -> String {
    let mut out = String::new();
    let level = &v["level"];
    let current = level["value"].as_str();
    let _ = writeln!(out, "level: {} ({})", current.map(sanitize).unwrap_or("none".into()), s(&level["source"]));
    let _ = writeln!(out, "  {}", s(&level["meaning"]));
    let _ = writeln!(out, "\nlevel table (* marks the level in force):");
    let mut header = format!("  {:<13}", "row");
    for l in levels::LEVELS {
        let mark = if current == Some(l.as_str()) { "*" } else { "" };
        let _ = write!(header, "{:<12}", format!("{l}{mark}"));
    }
    let _ = writeln!(out, "{}", header.trim_end());
    for row in v["level_table"].as_array().into_iter().flatten() {
        let mut line = format!("  {:<13}", s(&row["row"]));
        for l in levels::LEVELS {
            let _ = write!(line, "{:<12}", s(&row["cells"][l.as_str()]));
        }
        let programs: Vec<String> = row["programs"].as_array().into_iter().flatten().map(s).collect();
        let what = if programs.is_empty() {
            "commands in no other row".to_string()
        } else {
            format!("{} and every {} command", programs.join(" "), s(&row["category"]))
        };
        let _ = writeln!(out, "{}  {what}", line.trim_end());
    }
    out.push_str(&sandbox_text(&v["sandbox"]));
    let _ = writeln!(out, "\nsettings:");
    for (key, setting) in v["settings"].as_object().into_iter().flatten() {
        let _ = writeln!(out, "  {key}: {} ({})", setting["value"], s(&setting["source"]));
    }
    let _ = writeln!(out, "\ncustom rules (the strictest matching rule wins):");
    let rules = v["rules"].as_array().cloned().unwrap_or_default();
    if rules.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for r in &rules {
        let pattern: Vec<String> = r["pattern"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|alts| {
                let a: Vec<String> = alts.as_array().into_iter().flatten().map(s).collect();
                if a.len() == 1 { a[0].clone() } else { format!("[{}]", a.join("|")) }
            })
            .collect();
        let mut cond = String::new();
        if let Some(f) = r["hasFlag"].as_array() {
            let _ = write!(cond, " with {}", f.iter().map(s).collect::<Vec<_>>().join(" or "));
        }
        if let Some(g) = r["anyArgMatches"].as_array() {
            let _ = write!(cond, " with an argument like {}", g.iter().map(s).collect::<Vec<_>>().join(" or "));
        }
        let _ = writeln!(
            out,
            "  {:<5} {}{cond}: {} ({})",
            s(&r["decision"]),
            pattern.join(" "),
            s(&r["reason"]),
            s(&r["at"])
        );
    }
    if let Some(why) = v["rules_broken"].as_str() {
        let _ = writeln!(out, "  ! a rule cannot be read ({}): every command needs a person", sanitize(why));
    }
    for key in ["whitelist", "blacklist"] {
        let how = if key == "whitelist" {
            "whole words at the start of a command"
        } else {
            "as words at the start, or as tokens: its flags anywhere, clustered or spelled long or short"
        };
        let _ = writeln!(out, "\n{key} (matches {how}):");
        let entries = v[key].as_array().cloned().unwrap_or_default();
        if entries.is_empty() {
            let _ = writeln!(out, "  (none)");
        }
        for e in &entries {
            let _ = writeln!(out, "  {} ({})", s(&e["entry"]), s(&e["source"]));
        }
    }
    if let Some(why) = v["blacklist_broken"].as_str() {
        let _ = writeln!(out, "  ! the blacklist cannot be read ({}): every command needs a person", sanitize(why));
    }
    let b = &v["builtin"];
    let _ = writeln!(out, "\nbuilt-in rules by category ({}; {}):", s(&b["source"]), s(&b["note"]));
    for c in b["categories"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "  {}:", s(&c["category"]));
        for (risk, names) in c["programs_by_base_risk"].as_object().into_iter().flatten() {
            let names = names.as_array().cloned().unwrap_or_default();
            let _ = writeln!(out, "    {risk} ({}):", names.len());
            out.push_str(&wrapped(&names, "      "));
        }
    }
    let _ = writeln!(out, "  wrappers (judged by the command they run):");
    out.push_str(&wrapped(b["wrappers"].as_array().map(Vec::as_slice).unwrap_or(&[]), "      "));
    let files = v["files"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(out, "\nfiles read:");
    if files.is_empty() {
        let _ = writeln!(out, "  (none: built-in defaults)");
    }
    for f in &files {
        let _ = writeln!(out, "  {}", s(f));
    }
    out
}
