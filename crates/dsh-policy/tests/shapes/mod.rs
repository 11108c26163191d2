//! The worst shapes of command line known for the analysis, for the memory
//! test and the bench: each at the 1 MiB input limit (past the parser's
//! budget, so decided whole) and at the largest size still analysed in full,
//! decided in a real project directory ([`Project`]). Includes the
//! allocation counter both use to measure a decision's peak.

use dsh_policy::{Decision, Mode, PermissionPolicy, PermissionRules};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The input limit of the analysis.
pub const LIMIT: usize = 1 << 20;

/// What a decision may take at most, for any shape at any size.
pub const MEMORY_TARGET: usize = 64 << 20;

/// Counts bytes in use and the peak since the last reset.
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One decision of `command`: what it decided, its reason, how long it
/// took and the most memory it held at once. The counter is process-wide:
/// measure one decision at a time.
pub fn measure(policy: &PermissionPolicy, command: &str) -> (Decision, String, Duration, usize) {
    let args = json!({ "command": command });
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let started = Instant::now();
    let e = policy.check("bash", &args);
    let took = started.elapsed();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    (e.decision, e.reason, took, peak)
}

/// Rules with prefix, two- and three-star patterns, and a path rule that
/// matches at any depth.
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
            "Read(**/.env)",
        ],
    )
    .expect("rules parse")
}

/// A real project directory, removed on drop: the shapes' working
/// directory, so their paths are resolved and their globs expanded on disk
/// as in a real call (a directory that does not exist makes both trivial).
pub struct Project(PathBuf);

impl Project {
    pub fn new() -> Project {
        // One per test, as tests run side by side.
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("dsh-shapes-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).expect("shapes project");
        for f in ["Cargo.toml", ".env", "a.rs", "b.rs", "c.rs", "src/lib.rs"] {
            std::fs::write(dir.join(f), "x").expect("shapes project");
        }
        // Rules are matched on disk too: start from the real path.
        Project(std::fs::canonicalize(&dir).expect("shapes project"))
    }

    /// The shapes' rules on this directory.
    pub fn policy(&self) -> PermissionPolicy {
        PermissionPolicy::new(rules(), Mode::Default, &self.0)
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `head`, `unit` repeated, `tail`.
pub struct Shape {
    pub name: &'static str,
    head: String,
    unit: &'static str,
    tail: String,
    /// The decision when the analysis reads the command line in full.
    pub full: Decision,
    /// The decision past the parser's budget (asked about whole, deny and
    /// ask rules found anywhere in the text).
    pub whole: Decision,
}

/// Whether the analysis decided `command` whole, past the parser's budget
/// (asked about with no rules, for the reason to be the analysis's own).
pub fn decided_whole(command: &str) -> bool {
    let neutral = PermissionPolicy::new(PermissionRules::default(), Mode::Default, "/work/proj");
    let args = json!({ "command": command });
    neutral
        .check("bash", &args)
        .reason
        .contains("too large to analyse in full")
}

impl Shape {
    pub fn build(&self, repeats: usize) -> String {
        let mut s = String::with_capacity(self.head.len() + self.unit.len() * repeats);
        s.push_str(&self.head);
        for _ in 0..repeats {
            s.push_str(self.unit);
        }
        s.push_str(&self.tail);
        s
    }

    /// The shape just under the input limit.
    pub fn at_limit(&self) -> String {
        self.build((LIMIT - self.head.len() - self.tail.len()) / self.unit.len())
    }

    /// The largest instance the analysis still reads in full (found by
    /// bisection on the policy's own answer).
    pub fn largest_analysed(&self) -> String {
        let whole = |n: usize| decided_whole(&self.build(n));
        let (mut lo, mut hi) = (
            0,
            (LIMIT - self.head.len() - self.tail.len()) / self.unit.len(),
        );
        assert!(
            !whole(lo),
            "{}: the smallest instance is too large",
            self.name
        );
        assert!(whole(hi), "{}: the limit is analysed in full", self.name);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if whole(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        self.build(lo)
    }
}

fn shape(
    name: &'static str,
    head: &str,
    unit: &'static str,
    tail: &str,
    full: Decision,
    whole: Decision,
) -> Shape {
    Shape {
        name,
        head: head.to_owned(),
        unit,
        tail: tail.to_owned(),
        full,
        whole,
    }
}

/// Every shape, with the decisions the rules imply.
pub fn shapes() -> Vec<Shape> {
    use Decision::{Allow, Ask, Deny};
    vec![
        shape("nohup chain", "", "nohup ", "rm x", Deny, Deny),
        shape("env chain", "", "env ", "rm x", Deny, Deny),
        shape("timeout chain", "", "timeout 5 ", "rm x", Deny, Deny),
        shape("sudo chain", "", "sudo ", "rm x", Deny, Deny),
        shape(
            "mixed chain",
            "",
            "env LANG=C nohup timeout 5 nice -n 1 ",
            "rm x",
            Deny,
            Deny,
        ),
        shape("xargs chain", "", "xargs ", "rm x", Deny, Deny),
        shape("unknown launcher", "flock ", "l ", "rm x", Deny, Deny),
        shape("many && parts", "", "ls -la && ", "ls", Allow, Ask),
        shape("many ; parts", "", "echo a; ", "echo a", Allow, Ask),
        shape("many | parts", "", "cat x | ", "cat x", Allow, Ask),
        // Past 2 000 nesting characters a command line is asked about whole.
        shape("substitutions", "echo ", "$(echo a) ", "", Ask, Ask),
        shape("arithmetic commands", "", "(( 1 )); ", "true", Ask, Ask),
        // `a` is not known to be harmless in a command's environment.
        shape("assignments", "", "a=1 ", "ls", Ask, Ask),
        shape("redirections", "", "echo x > f; ", "true", Ask, Ask),
        shape("one long word, star rules", "git fetch ", "a", "", Ask, Ask),
        shape("many words, star rules", "git ", "a b ", "", Ask, Ask),
        shape("main words, star rule", "git ", "main ", "", Allow, Ask),
        shape(
            "long here-document",
            "cat <<EOF\n",
            "line $x\n",
            "EOF\n",
            Allow,
            Ask,
        ),
        shape("long single-quoted", "echo '", "a ", "'", Allow, Ask),
        shape("long double-quoted", "echo \"", "ab $v ", "\"", Allow, Ask),
        shape("bash -c script", "bash -c '", "ls; ", "'", Allow, Ask),
        shape("ssh string", "ssh host '", "ls; ", "rm x'", Deny, Deny),
        shape("braces", "echo ", "{a,b} ", "", Ask, Ask),
        shape(
            "nested substitutions",
            &"echo $(".repeat(60),
            "a",
            &")".repeat(60),
            Ask,
            Ask,
        ),
        shape(
            "nested groups",
            &"{ ".repeat(1000),
            "ls; ",
            &"} ".repeat(1000),
            Allow,
            Ask,
        ),
        // A path hundreds of thousands of names deep against `**/.env`
        // (matching each directory above it on its own was quadratic).
        shape("deep path, **/ rule", "cat ", "a/", ".env", Deny, Ask),
        // The same glob over and over, in one command and in many: each
        // names the project's files (expanding each copy again was slow,
        // and so were the copies' places).
        shape("repeated glob operand", "cat ", "*.rs ", "", Allow, Ask),
        // `*` names the project's `.env` too.
        shape("repeated glob commands", "", "ls *; ", "ls", Deny, Ask),
    ]
}
