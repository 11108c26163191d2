//! The worst shapes of command line known for the analysis, each built to
//! just under the 1 MiB input limit; for the memory guard (and a bench to come).

use dsh_policy::{Decision, PermissionRules};

/// The input limit of the analysis.
pub const LIMIT: usize = 1 << 20;

/// `unit` repeated to fill `LIMIT` after `head` and before `tail`.
fn fill(head: &str, unit: &str, tail: &str) -> String {
    let room = LIMIT - head.len() - tail.len() - 16;
    let mut s = String::with_capacity(LIMIT);
    s.push_str(head);
    for _ in 0..room / unit.len() {
        s.push_str(unit);
    }
    s.push_str(tail);
    s
}

/// Rules with prefix, two- and three-star patterns.
pub fn rules() -> PermissionRules {
    PermissionRules::parse(
        [
            "Bash(ls:*)",
            "Bash(echo:*)",
            "Bash(cat:*)",
            "Bash(git * main:*)",
            "Bash(true)",
        ],
        ["Bash(git push:*)"],
        [
            "Bash(rm:*)",
            "Bash(a*b*c:*)",
            "Bash(*x*y*z*)",
            "Edit(/etc/**)",
        ],
    )
    .expect("rules parse")
}

/// Name, command, and the decision the rules imply.
pub fn shapes() -> Vec<(&'static str, String, Decision)> {
    use Decision::{Allow, Ask, Deny};
    vec![
        ("nohup chain", fill("", "nohup ", "rm x"), Deny),
        ("env chain", fill("", "env ", "rm x"), Deny),
        ("timeout chain", fill("", "timeout 5 ", "rm x"), Deny),
        ("sudo chain", fill("", "sudo ", "rm x"), Deny),
        (
            "mixed chain",
            fill("", "env LANG=C nohup timeout 5 nice -n 1 ", "rm x"),
            Deny,
        ),
        ("xargs chain", fill("", "xargs ", "rm x"), Deny),
        ("unknown launcher", fill("flock ", "l ", "rm x"), Deny),
        ("many && parts", fill("", "ls -la && ", "ls"), Allow),
        ("many ; parts", fill("", "echo a; ", "echo a"), Allow),
        ("many | parts", fill("", "cat x | ", "cat x"), Allow),
        // Past 2 000 nesting characters a command line is asked about whole.
        ("substitutions", fill("echo ", "$(echo a) ", ""), Ask),
        ("arithmetic commands", fill("", "(( 1 )); ", "true"), Ask),
        // `a` is not known to be harmless in a command's environment.
        ("assignments", fill("", "a=1 ", "ls"), Ask),
        ("redirections", fill("", "echo x > f; ", "true"), Ask),
        ("one long word, star rules", fill("git log ", "a", ""), Ask),
        ("many words, star rules", fill("git ", "a b ", ""), Ask),
        ("main words, star rule", fill("git ", "main ", ""), Allow),
        (
            "long here-document",
            fill("cat <<EOF\n", "line $x\n", "EOF\n"),
            Allow,
        ),
        ("long single-quoted", fill("echo '", "a ", "'"), Allow),
        ("long double-quoted", fill("echo \"", "ab $v ", "\""), Allow),
        ("bash -c script", fill("bash -c '", "ls; ", "'"), Allow),
        ("ssh string", fill("ssh host '", "ls; ", "rm x'"), Deny),
        ("braces", fill("echo ", "{a,b} ", ""), Ask),
        (
            "nested substitutions",
            format!(
                "{}{}{}",
                "echo $(".repeat(60),
                "a".repeat(LIMIT - 600),
                ")".repeat(60)
            ),
            Ask,
        ),
        (
            "nested groups",
            format!("{}ls; {}", "{ ".repeat(1000), "} ".repeat(1000)),
            Allow,
        ),
    ]
}
