//! Maturity levels as one table of data: for each row (a category with its programs) and each
//! level, whether a command runs, needs approval or is blocked. Pure lookups; no I/O, and it
//! decides nothing on its own (`decide` composes it with risk, rules and the lists).
//!
//! A part's rows are every row that names its program or a wrapper around it (`sudo` is in the
//! `blocked` row, so `sudo ls` is blocked at every level), plus the row of its built-in category
//! (`find -delete` is a delete, `curl -o f` a write). The strictest cell among them applies, so a
//! command can only be held back by a second row, never let through by one. A part in no row is
//! `unlisted`.

use crate::judge::assess::{self, Assessment};
use crate::model::Category;
use serde::Serialize;
use std::fmt;

/// How far an agent is trusted. Ordered from the strictest to the loosest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Student,
    Intern,
    Supervised,
    Autonomous,
}

pub const LEVELS: [Level; 4] = [Level::Student, Level::Intern, Level::Supervised, Level::Autonomous];

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Student => "student",
            Level::Intern => "intern",
            Level::Supervised => "supervised",
            Level::Autonomous => "autonomous",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        LEVELS.into_iter().find(|l| l.as_str().eq_ignore_ascii_case(text.trim()))
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One cell of the table. Ordered: the strictest cell wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cell {
    Runs,
    Approval,
    Blocked,
}

impl Cell {
    pub fn as_str(self) -> &'static str {
        match self {
            Cell::Runs => "runs",
            Cell::Approval => "approval",
            Cell::Blocked => "blocked",
        }
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub name: &'static str,
    /// Programs in this row, whatever their built-in category.
    pub programs: &'static [&'static str],
    /// The built-in category (see `rules`) that also puts a command in this row.
    #[serde(skip)]
    pub category: Option<Category>,
    /// Cells in the order of `LEVELS`: student, intern, supervised, autonomous.
    pub cells: [Cell; 4],
}

impl Row {
    pub fn cell(&self, level: Level) -> Cell {
        self.cells[level.index()]
    }
}

use Cell::*;

/// The specification's table (its program lists are the minimum; a command also lands in a row
/// through its built-in category).
#[rustfmt::skip]
pub static ROWS: &[Row] = &[
    Row { name: "file_read", category: Some(Category::FileRead),
          programs: &["ls", "pwd", "cat", "head", "tail", "grep", "find", "wc"],
          cells: [Approval, Approval, Runs, Runs] },
    Row { name: "network", category: Some(Category::Network),
          programs: &["curl", "wget", "ping", "nslookup", "dig", "netstat"],
          cells: [Approval, Approval, Runs, Runs] },
    Row { name: "file_write", category: Some(Category::FileWrite),
          programs: &["cp", "mv", "mkdir", "touch"],
          cells: [Blocked, Blocked, Approval, Runs] },
    Row { name: "build_tools", category: Some(Category::BuildTools),
          programs: &["make", "npm", "pip", "python3", "node", "yarn", "cargo"],
          cells: [Blocked, Blocked, Approval, Runs] },
    Row { name: "dev_ops", category: Some(Category::DevOps),
          programs: &["git", "docker", "kubectl", "terraform", "ansible"],
          cells: [Blocked, Blocked, Approval, Runs] },
    Row { name: "file_delete", category: Some(Category::FileDelete),
          programs: &["rm"],
          cells: [Blocked, Blocked, Blocked, Runs] },
    Row { name: "blocked", category: Some(Category::Blocked),
          programs: &["chmod", "chown", "kill", "killall", "pkill", "sudo", "su", "reboot", "shutdown", "halt",
                      "iptables", "ufw", "firewall-cmd", "usermod", "userdel", "dd", "mkfs", "fdisk", "mount",
                      "umount"],
          cells: [Blocked, Blocked, Blocked, Blocked] },
];

/// Commands in no row: student and intern cannot run them, supervised asks, autonomous trusts
/// unknown programs (their risk still applies).
pub static UNLISTED: Row =
    Row { name: "unlisted", category: None, programs: &[], cells: [Blocked, Blocked, Approval, Runs] };

/// Why a part landed in a row: a program it names, or its built-in category.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Placement {
    pub row: &'static str,
    /// `` `git` ``, `` `sudo` ``, `category file_delete`, or `in no other row`.
    pub via: String,
    #[serde(skip)]
    cells: [Cell; 4],
}

/// The level's verdict on one part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LevelHit {
    pub level: Level,
    pub cell: Cell,
    pub row: &'static str,
    pub via: String,
    /// The strictest level at which the part would no longer be blocked, if any.
    pub unblocked_at: Option<Level>,
}

impl LevelHit {
    /// "level student: dev_ops row (`git`): blocked; level supervised would allow it".
    pub fn describe(&self) -> String {
        let what = match self.cell {
            Runs => "runs".to_string(),
            Approval => "needs a person's approval".to_string(),
            Blocked => match self.unblocked_at {
                Some(l) => format!("blocked; level {l} would allow it"),
                None => "blocked at every level".to_string(),
            },
        };
        format!("level {}: {} row ({}): {what}", self.level, self.row, self.via)
    }
}

/// The rows a part belongs to; empty when the level has nothing to say about it (a nested
/// shell's own part, which only runs the parts judged separately, or an empty command).
pub fn placements(a: &Assessment) -> Vec<Placement> {
    let mut out: Vec<Placement> = Vec::new();
    let add = |out: &mut Vec<Placement>, row: &Row, via: String| {
        if !out.iter().any(|p| p.row == row.name && p.via == via) {
            out.push(Placement { row: row.name, via, cells: row.cells });
        }
    };
    for name in wrapper_names(a) {
        if let Some(row) = row_of_program(name) {
            add(&mut out, row, format!("`{name}`"));
        }
    }
    if matches!(a.rule.as_str(), "shell" | "empty") {
        return out;
    }
    let program = if a.program.is_empty() { a.argv.first().map(|w| assess::basename(w)) } else { Some(&*a.program) };
    if let Some(name) = program
        && let Some(row) = row_of_program(name)
    {
        add(&mut out, row, format!("`{name}`"));
    }
    if let Some(row) = ROWS.iter().find(|r| r.category == Some(a.category)) {
        add(&mut out, row, format!("category {}", a.category));
    }
    if out.is_empty() {
        add(&mut out, &UNLISTED, "in no other row".to_string());
    }
    out
}

/// The level's verdict: the strictest cell among the part's rows, or `None` when it has none.
pub fn judge(a: &Assessment, level: Level) -> Option<LevelHit> {
    let places = placements(a);
    // The first of the strictest rows: a program's own row before its category's.
    let top = places.iter().rev().max_by_key(|p| p.cells[level.index()])?;
    let cell = top.cells[level.index()];
    let unblocked_at = LEVELS.into_iter().find(|l| places.iter().all(|p| p.cells[l.index()] != Blocked));
    Some(LevelHit { level, cell, row: top.row, via: top.via.clone(), unblocked_at })
}

fn row_of_program(name: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.programs.contains(&name))
}

/// The wrappers written before the program that runs (`sudo`, `env`, `timeout` ...), so that
/// `sudo git push` is in the `blocked` row as well as in `dev_ops`.
fn wrapper_names(a: &Assessment) -> Vec<&str> {
    let n = a.argv.len().saturating_sub(a.inner().len());
    let before = if a.argv.ends_with(a.inner()) { &a.argv[..n] } else { &a.argv[..a.argv.len().min(1)] };
    before
        .iter()
        .map(|w| assess::basename(w))
        .filter(|name| crate::judge::rules::find_wrapper(name).is_some() || row_of_program(name).is_some())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::parse;

    fn hit(text: &str, level: Level) -> Option<LevelHit> {
        let parts = assess::assess(&parse::parse(text).unwrap());
        parts.iter().filter_map(|a| judge(a, level)).max_by_key(|h| h.cell)
    }

    fn cell(text: &str, level: Level) -> Cell {
        hit(text, level).map(|h| h.cell).unwrap_or(Runs)
    }

    #[test]
    fn every_listed_program_gets_its_rows_cells() {
        for row in ROWS {
            for program in row.programs {
                for level in LEVELS {
                    let a = Assessment { program: program.to_string(), ..assessment(&[program]) };
                    let got = judge(&a, level).unwrap().cell;
                    // A program's built-in category may add a stricter row, never a looser one.
                    assert!(got >= row.cell(level), "{program} at {level}: {got} < {}", row.cell(level));
                }
            }
        }
    }

    fn assessment(argv: &[&str]) -> Assessment {
        let parts = assess::assess(&parse::parse(&argv.join(" ")).unwrap());
        parts.into_iter().last().unwrap()
    }

    #[test]
    fn wrappers_and_categories_add_rows() {
        // sudo is in the blocked row: no level lets `sudo ls` through.
        let h = hit("sudo ls", Level::Autonomous).unwrap();
        assert_eq!((h.cell, h.row, h.unblocked_at), (Blocked, "blocked", None));
        assert_eq!(cell("env timeout 5 sudo ls", Level::Autonomous), Blocked);
        // find is listed as a read, but -delete deletes.
        assert_eq!(cell("find . -name x -delete", Level::Supervised), Blocked);
        assert_eq!(cell("find . -name x", Level::Supervised), Runs);
        // A redirect writes a file.
        assert_eq!(cell("ls > out.txt", Level::Intern), Blocked);
        assert_eq!(cell("ls > /dev/null", Level::Intern), Approval);
    }

    #[test]
    fn unlisted_commands_follow_their_own_row() {
        for (level, want) in [(Level::Student, Blocked), (Level::Intern, Blocked), (Level::Supervised, Approval)] {
            assert_eq!(cell("frobnicate --now", level), want, "{level}");
        }
        assert_eq!(cell("frobnicate --now", Level::Autonomous), Runs);
        // The shell running nested text adds nothing; what it runs is judged on its own.
        assert_eq!(cell("bash -c 'ls'", Level::Supervised), Runs);
        assert_eq!(cell("bash -c 'rm x'", Level::Supervised), Blocked);
    }

    #[test]
    fn a_blocked_part_names_the_level_that_would_allow_it() {
        let h = hit("rm notes.txt", Level::Student).unwrap();
        assert_eq!(h.unblocked_at, Some(Level::Autonomous));
        assert!(h.describe().contains("level autonomous would allow it"), "{}", h.describe());
        assert_eq!(hit("git status", Level::Intern).unwrap().unblocked_at, Some(Level::Supervised));
        assert!(hit("chmod 644 f", Level::Intern).unwrap().describe().contains("blocked at every level"));
    }

    #[test]
    fn levels_parse_and_order() {
        assert_eq!(Level::parse(" Intern"), Some(Level::Intern));
        assert_eq!(Level::parse("root"), None);
        assert!(Level::Student < Level::Autonomous);
    }
}
