//! sed's script, read as GNU sed reads it, for the commands its `e` runs and the files its `w`
//! writes (issue 16, section 4; issue 28: `e` in every spelling). Pure.
//!
//! The script is found as sed finds it: the `-e`/`--expression` pieces (joined by newlines),
//! else the first operand; options in clusters (`-ne`, `-nl5`), with values attached or not,
//! long options abbreviated (`--expr=`), anywhere before `--`. Then each command is read with
//! its address (`1`, `$`, `/re/I`, `\%re%`, ranges, `~`, `!`), and the commands that take the
//! rest of the line (`a`, `i`, `c`, `e`, `r`, `w`, labels) take it, so `;` inside them is not a
//! separator. A script agentsh cannot read this way is reported as such, never as harmless.

/// What a sed invocation's script does beyond editing text.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Commands `e` runs: `Some(text)` for `e text`, `None` for what is only known when it runs
    /// (`e` alone and `s///e` run the pattern space).
    pub runs: Vec<Option<String>>,
    /// Files `w`, `W` and `s///w` write.
    pub writes: Vec<String>,
    /// The script is in a file (`-f`), or agentsh could not read it.
    pub unreadable: bool,
}

impl Effects {
    pub fn any(&self) -> bool {
        !self.runs.is_empty() || !self.writes.is_empty() || self.unreadable
    }
}

/// GNU sed's long options, for the abbreviations getopt accepts.
const LONG: &[&str] = &[
    "expression",
    "file",
    "in-place",
    "line-length",
    "null-data",
    "zero-terminated",
    "quiet",
    "silent",
    "sandbox",
    "separate",
    "unbuffered",
    "regexp-extended",
    "posix",
    "debug",
    "follow-symlinks",
    "binary",
    "help",
    "version",
];

/// A sed command line read as GNU sed reads it.
struct Invocation<'a> {
    /// The `-e` pieces, in order.
    pieces: Vec<String>,
    /// A `-f` script file.
    from_file: bool,
    /// The operands: the script first when there is no `-e` or `-f`, then the files.
    operands: Vec<&'a str>,
    /// An unknown or ambiguous long option.
    unknown: bool,
}

fn invocation<'a>(args: &[&'a str]) -> Invocation<'a> {
    let mut inv = Invocation { pieces: Vec::new(), from_file: false, operands: Vec::new(), unknown: false };
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if options_done || a == "-" || !a.starts_with('-') {
            inv.operands.push(a);
            continue;
        }
        if a == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let matches: Vec<&&str> = LONG.iter().filter(|l| l.starts_with(name)).collect();
            let full = match matches.as_slice() {
                [one] => **one,
                _ if LONG.contains(&name) => name,
                // Unknown or ambiguous: sed refuses to run, but agentsh cannot say so for sure.
                _ => {
                    inv.unknown = true;
                    continue;
                }
            };
            let separate = value.is_none() && matches!(full, "expression" | "file" | "line-length");
            let value =
                value.map(str::to_string).or_else(|| separate.then(|| args.get(i).map(|v| v.to_string())).flatten());
            i += usize::from(separate);
            match full {
                "expression" => inv.pieces.push(value.unwrap_or_default()),
                "file" => inv.from_file = true,
                _ => {}
            }
            continue;
        }
        // A cluster of short options: `-n`, `-ne SCRIPT`, `-nl5`, `-i.bak`.
        let cluster = &a[1..];
        for (k, c) in cluster.char_indices() {
            let rest = &cluster[k + c.len_utf8()..];
            match c {
                'e' | 'f' | 'l' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(|v| v.to_string())
                    } else {
                        Some(rest.to_string())
                    };
                    match c {
                        'e' => inv.pieces.push(value.unwrap_or_default()),
                        'f' => inv.from_file = true,
                        _ => {}
                    }
                    break;
                }
                // `-i` takes the rest of its cluster as a backup suffix.
                'i' => break,
                _ => {}
            }
        }
    }
    inv
}

/// The effects of sed run with `args` (its arguments, after the program name).
pub fn effects(args: &[&str]) -> Effects {
    let inv = invocation(args);
    let mut fx = Effects { unreadable: inv.from_file || inv.unknown, ..Effects::default() };
    if inv.unknown {
        return fx;
    }
    let script = if inv.pieces.is_empty() {
        inv.operands.first().copied().unwrap_or("").to_string()
    } else {
        inv.pieces.join("\n")
    };
    read_script(&script, &mut fx);
    fx
}

/// The files sed reads (and with `-i` rewrites): its operands after the script, which is the
/// first operand only when no `-e` or `-f` gave one. `sed -i '/^x/d' f` writes `f`, not `/^x/d`.
pub fn files<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let inv = invocation(args);
    let skip = usize::from(inv.pieces.is_empty() && !inv.from_file);
    inv.operands.into_iter().skip(skip).collect()
}

/// Reads the commands of `script` into `fx`.
fn read_script(script: &str, fx: &mut Effects) {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < b.len() && b[*i] != '\n' {
            // A backslash before the newline continues the text (`a\`, `i\`).
            if b[*i] == '\\' && *i + 1 < b.len() {
                *i += 1;
            }
            *i += 1;
        }
        b[start..*i].iter().collect::<String>()
    };
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() || c == ';' || c == '}' {
            i += 1;
            continue;
        }
        if c == '#' {
            rest_of_line(&mut i);
            continue;
        }
        // Up to two addresses, then `!`s.
        for n in 0..2 {
            if n == 1 {
                if b.get(i) != Some(&',') {
                    break;
                }
                i += 1;
            }
            while b.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
                i += 1;
            }
            match b.get(i) {
                Some(d) if d.is_ascii_digit() || *d == '+' || *d == '~' => {
                    i += 1;
                    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == '~') {
                        i += 1;
                    }
                }
                Some('$') => i += 1,
                Some('/') => {
                    i = past_delimited(&b, i + 1, '/');
                    while b.get(i).is_some_and(|c| matches!(c, 'I' | 'M')) {
                        i += 1;
                    }
                }
                Some('\\') if i + 1 < b.len() => {
                    i = past_delimited(&b, i + 2, b[i + 1]);
                    while b.get(i).is_some_and(|c| matches!(c, 'I' | 'M')) {
                        i += 1;
                    }
                }
                _ => {}
            }
        }
        while b.get(i).is_some_and(|c| matches!(c, ' ' | '\t' | '!')) {
            i += 1;
        }
        let Some(&command) = b.get(i) else { break };
        i += 1;
        match command {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            'l' | 'L' | 'q' | 'Q' => {
                while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == ' ') {
                    i += 1;
                }
            }
            // A label (and `v`'s version) ends at `;` in GNU sed (`:a;N;$!ba`). POSIX reads a
            // `;` as part of it; reading on from there only finds more.
            ':' | 'b' | 't' | 'T' | 'v' => {
                while i < b.len() && !matches!(b[i], ';' | '\n') {
                    i += 1;
                }
            }
            // Text and file names take the rest of the line, `;` included.
            'a' | 'i' | 'c' | 'r' | 'R' => {
                rest_of_line(&mut i);
            }
            'e' => {
                let text = rest_of_line(&mut i);
                let text = text.trim();
                fx.runs.push((!text.is_empty()).then(|| text.to_string()));
            }
            'w' | 'W' => {
                let file = rest_of_line(&mut i);
                fx.writes.push(file.trim().to_string());
            }
            's' | 'y' => {
                let Some(&d) = b.get(i) else {
                    fx.unreadable = true;
                    return;
                };
                i = past_delimited(&b, i + 1, d);
                i = past_delimited(&b, i, d);
                if command == 'y' {
                    continue;
                }
                // Flags: `g`, `p`, a number, `i`/`I`, `m`/`M`, `e` (runs the pattern space),
                // `w FILE` (the rest of the line).
                while let Some(&f) = b.get(i) {
                    match f {
                        'e' => {
                            fx.runs.push(None);
                            i += 1;
                        }
                        'w' => {
                            i += 1;
                            let file = rest_of_line(&mut i);
                            fx.writes.push(file.trim().to_string());
                        }
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                        d if d.is_ascii_digit() => i += 1,
                        _ => break,
                    }
                }
            }
            _ => {
                // Not a command GNU sed knows: sed refuses the script, but agentsh will not
                // guess what it was meant to be.
                fx.unreadable = true;
                return;
            }
        }
    }
}

/// The index just past the next unescaped `d` from `i` (a regular expression or replacement).
fn past_delimited(b: &[char], mut i: usize, d: char) -> usize {
    while i < b.len() {
        if b[i] == '\\' {
            i += 2;
            continue;
        }
        if b[i] == d {
            return i + 1;
        }
        // Inside a bracket expression, the delimiter is a plain character.
        if b[i] == '[' && d != '[' {
            let mut j = i + 1;
            if b.get(j) == Some(&'^') {
                j += 1;
            }
            if b.get(j) == Some(&']') {
                j += 1;
            }
            while j < b.len() && b[j] != ']' && b[j] != '\n' {
                j += 1;
            }
            if j < b.len() && b[j] == ']' {
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(args: &[&str]) -> Vec<Option<String>> {
        effects(args).runs
    }

    #[test]
    fn finds_e_in_every_spelling() {
        let rm = Some("rm -rf ~".to_string());
        // Issue 28: after `-l N`, in `$'..'` with newlines, with no space, in `-e`, and more.
        for args in [
            &["-l", "5", "1e rm -rf ~", "f"][..],
            &["-nl5", "1e rm -rf ~", "f"],
            &["1d\ne rm -rf ~\n", "f"],
            &["p\n\n  e rm -rf ~"],
            &["1erm -rf ~", "f"],
            &["-e", "1erm -rf ~", "f"],
            &["-ne", "1erm -rf ~"],
            &["-e1erm -rf ~"],
            &["--expression=1e rm -rf ~"],
            &["--expr", "1e rm -rf ~"],
            &["-e", "p", "-e", "$e rm -rf ~"],
            &["f", "-e", "e rm -rf ~"],
            &["-n", "1!e rm -rf ~"],
            &["1 ! e rm -rf ~"],
            &["/x/Ie rm -rf ~"],
            &["\\%x%e rm -rf ~"],
            &["0,/x/e rm -rf ~"],
            &["1~2e rm -rf ~"],
            &["1,+3e rm -rf ~"],
            &["1{e rm -rf ~\n}"],
            &["p;e rm -rf ~"],
            &["y/a/b/;e rm -rf ~"],
            &[":a;e rm -rf ~"],
            &["/x/b end;e rm -rf ~"],
            &["s/[/]/x/;e rm -rf ~"],
            &["s/a\\/b/c/;e rm -rf ~"],
            &["#c\ne rm -rf ~"],
            &["--posix", "-s", "-E", "e rm -rf ~"],
        ] {
            assert_eq!(runs(args), vec![rm.clone()], "{args:?}");
        }
        // The pattern space, run as a command.
        for args in [&["e"][..], &["s/x/y/e"], &["s|x|y|ge"], &["-n", "s/x/y/pe"]] {
            assert_eq!(runs(args), vec![None], "{args:?}");
        }
        assert!(effects(&["-f", "script.sed", "f"]).unreadable);
        assert!(effects(&["--file=s.sed"]).unreadable);
        assert!(effects(&["1k"]).unreadable);
        assert!(effects(&["--unknown-option", "p"]).unreadable);
        // An address with no command is an error to sed; agentsh does not guess.
        assert!(effects(&["1\ne rm -rf ~"]).unreadable);
        assert_eq!(effects(&["s/x/y/w /tmp/out"]).writes, ["/tmp/out"]);
        assert_eq!(effects(&["1w out.txt"]).writes, ["out.txt"]);
    }

    #[test]
    fn knows_the_files_from_the_script() {
        assert_eq!(files(&["-i", "/^x/d", "a.py", "b.py"]), ["a.py", "b.py"]);
        assert_eq!(files(&["-i", "-e", "/^x/d", "a.py"]), ["a.py"]);
        assert_eq!(files(&["-ni", "-f", "s.sed", "a.py"]), ["a.py"]);
        assert_eq!(files(&["--in-place=.bak", "--expression", "s/a/b/", "--", "-x.py"]), ["-x.py"]);
        assert_eq!(files(&["-l", "5", "p", "f"]), ["f"]);
    }

    #[test]
    fn ordinary_scripts_do_nothing_else() {
        for args in [
            &["-n", "80,200p", "arguments.py"][..],
            &["-i", "s/from a import b/from c import d/", "x.py"],
            &["-i.bak", "-e", "s/a/b/g", "f"],
            &["-ie", "s/a/b/", "f"],
            &["s/\\(foo\\)/\\1 bar/g; /^$/d"],
            &["-E", "s#(a|b)/c#\\1#g"],
            &["1i\\\nheader line; e text"],
            &["$a echo e rm -rf /"],
            &["/start/,/end/{s/x/y/;p}"],
            &["-n", "/foo/Ip"],
            &["s/e/E/g"],
            &["y/abc/xyz/"],
            &["-z", "s/\\n/ /g"],
            &[":a;N;$!ba;s/\\n/ /g"],
            &["--sandbox", "s/a/b/"],
            &["1r notes;e rm -rf ~"],
        ] {
            let fx = effects(args);
            assert!(!fx.any(), "{args:?}: {fx:?}");
        }
    }
}
