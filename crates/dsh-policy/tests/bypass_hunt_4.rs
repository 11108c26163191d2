//! Command lines found by a fourth review — of words the analysis cannot
//! see, of the git read-only rows, of option values and of the deny-rule
//! views — that the policy allows unasked (or does not deny) although they
//! run code, write, read what a deny rule covers or act against a denied
//! subcommand. None of them repeats a case of `unsafe_allows.rs` or of the
//! earlier `bypass_hunt*.rs` corpora.
//!
//! Same shape as `bypass_hunt_3.rs`: each class is one test over a table of
//! `(command, why it is dangerous)`; a test lists every failing case at
//! once; the working directory is a real directory. Every case was checked
//! against the real program (GNU coreutils 9.1 head, sort, cut and date,
//! GNU grep 3.8, GNU diffutils, jq, git 2.47, kubectl 1.32, bash 5.2) in a
//! scratch directory: `sort` ran a script named by a split word, `test`
//! ran a command substitution read from a file, `git branch` ran
//! `gpg.program`, `git send-pack` pushed to a bare repository.

mod hunt;

use dsh_policy::Mode;
use hunt::*;

// ---------------------------------------------------------------------------
// 1. An unquoted option value the analysis cannot see splits into words
// ---------------------------------------------------------------------------

/// An option that takes a value consumes the next word as that value
/// without looking at it: an unquoted `$n` or `$(…)` there is counted as
/// one word of data. Bash splits it: its first word is the value and the
/// others become options and operands of the program — `-o FILE`,
/// `--compress-program=PROG`, `-r`, `--rawfile`, a denied file. The same
/// word as an operand, or attached (`--lines=$n`), is treated as unseen;
/// as the next word after an option it is not. `date +$f` is the same
/// through the `+` exemption of an operand (a word starting with `+` is
/// taken to be no option, but only its first word is).
#[test]
fn unquoted_option_values_split_into_options() {
    let runs_or_writes: &[(&str, &str)] = &[
        (
            "k=$(echo 1 --compress-program=./pre-commit -S 100k); sort -k $k README.md",
            "sort gets --compress-program: runs ./pre-commit on its temporary files",
        ),
        (
            "k=$(echo 1 -o /tmp/hunt4-out); sort -k $k README.md",
            "sort gets `-o /tmp/hunt4-out`: writes outside the working directory",
        ),
        (
            "sort -t $t README.md",
            "the same through -t, whose value is also a word nobody looked at",
        ),
        (
            "n=$(echo 1 /etc/passwd); head -n $n README.md",
            "head gets /etc/passwd as a second file: reads outside",
        ),
        (
            "w=$(echo 80 /etc); ls -w $w",
            "ls lists /etc, outside the working directory",
        ),
    ];
    let wd = Workdir::new("split-values");
    let mut found = failures(&wd, runs_or_writes, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        (
            "n=$(echo 1 .env); head -n $n README.md",
            "head gets .env as a second file: prints it",
        ),
        ("n=$(echo 1 .env); tail -n $n README.md", "the same, tail"),
        (
            "m=$(echo 1 -r); grep -m $m TOKEN",
            "grep gets -r: searches the working directory, .env included",
        ),
        (
            "p=$(echo TOKEN .env); grep -e $p README.md",
            "the pattern's value splits into the pattern and .env",
        ),
        (
            "v=$(echo a --rawfile s .env); jq -n --arg x $v '$s'",
            "jq gets `--rawfile s .env`: prints .env as a string",
        ),
        (
            "d=$(echo = .env); cut -d $d -f2 README.md",
            "cut gets .env as a file: prints the secret after `=`",
        ),
        (
            "r=$(echo x --to-file=.env); diff -I $r README.md hex.txt",
            "diff compares each file with .env and prints .env's lines",
        ),
        (
            "f=$(echo %s -f .env); date +$f",
            "date -f .env reads .env as dates: each line is printed in the error",
        ),
    ];
    found.extend(failures(&wd, denied, NEVER_UNASKED));
    assert_none("split option values", found);
}

// ---------------------------------------------------------------------------
// 2. `test` operands that split into `-v NAME[SUBSCRIPT]`
// ---------------------------------------------------------------------------

/// `test -v "$x"` is unanalysable (the subscript of the name is evaluated
/// as arithmetic, and a `$(…)` there runs), but an unquoted word the
/// analysis cannot see may itself split into `-v` and the name: the
/// `test`/`[` row takes any words, so `test $x` is read-only. Here
/// `code.txt` holds `-v a[$(touch${IFS}P)]` (a file of the repository, or
/// one written earlier): bash runs `touch P`.
#[test]
fn test_operands_split_into_a_subscript() {
    let cases: &[(&str, &str)] = &[
        (
            "x=$(cat code.txt); test $x",
            "splits into `-v a[$(…)]`: test evaluates the subscript and runs it",
        ),
        ("test $(cat code.txt)", "the same without a variable"),
        ("[ $(cat code.txt) ]", "the same with `[`"),
        (
            "x=$(cat code.txt); [ -n x -a $x ]",
            "the same as the right side of -a",
        ),
    ];
    let wd = Workdir::new("test-split");
    std::fs::write(wd.path.join("code.txt"), "-v a[$(touch${IFS}P)]\n").unwrap();
    assert_none("test operands", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 3. grep's `--directories` value is matched by its first letters
// ---------------------------------------------------------------------------

/// `grep -d recurse` is `grep -r` and the grep row sees it so; but grep
/// reads the value with argmatch, which takes any unambiguous
/// abbreviation: `-d rec`, `--directories=recu`. A value the analysis
/// cannot see may be `recurse` too.
#[test]
fn grep_directories_value_abbreviated() {
    let denied: &[(&str, &str)] = &[
        (
            "grep -d rec TOKEN .",
            "`rec` is `recurse`: searches ., .env included",
        ),
        (
            "grep --directories=recu TOKEN .",
            "the same with the long option",
        ),
        ("grep -drec TOKEN .", "the same attached"),
        (
            "grep -d rec TOKEN",
            "with no file, grep -r searches the working directory",
        ),
    ];
    let wd = Workdir::new("grep-d");
    let mut found = failures(&wd, denied, DENIED);
    let unseen: &[(&str, &str)] = &[(
        "m=$(cat mode.txt); grep -d \"$m\" TOKEN .",
        "the value may be `recurse`: searches ., .env included",
    )];
    found.extend(failures(&wd, unseen, NEVER_UNASKED));
    assert_none("grep -d", found);
}

// ---------------------------------------------------------------------------
// 4. Signature atoms of `git branch` and `git tag` run gpg.program
// ---------------------------------------------------------------------------

/// `%(signature…)` in a ref-filter `--format`, and `--sort=signature`,
/// verify each commit's signature with the configured `gpg.program`, as
/// `%G?` does in `git log` (refused there). The `git branch` and `git tag`
/// rows take `--format` and `--sort` as data.
#[test]
fn ref_filter_signature_atoms_run_gpg() {
    let cases: &[(&str, &str)] = &[
        (
            "git branch --format='%(signature)'",
            "runs gpg.program on each branch's signed tip",
        ),
        (
            "git branch -a --format='%(refname) %(signature:key)'",
            "the same with a modifier",
        ),
        (
            "git branch --sort=signature",
            "sorting by the atom verifies too",
        ),
        (
            "git tag -l --format='%(*signature:signer)'",
            "the commit each annotated tag points to",
        ),
        ("git tag --sort=signature", "the same, git tag"),
    ];
    let wd = Workdir::new("ref-signature");
    assert_none("ref-filter signatures", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 5. git reads object names and paths from standard input
// ---------------------------------------------------------------------------

/// `git show HEAD:.env` and `git log -p -- .env` are denied; `--stdin`
/// (listed as a read-only option of `git log`, `git show`, `git shortlog`
/// and `git reflog`) reads the same names from standard input, where no
/// rule looks: `HEAD:.env` prints the committed file, `HEAD -- .env` its
/// history with patches.
#[test]
fn git_stdin_names_objects_and_paths() {
    let cases: &[(&str, &str)] = &[
        (
            "echo HEAD:.env | git show --stdin",
            "prints the committed .env",
        ),
        ("git show --stdin <<< 'HEAD:.env'", "the same, here-string"),
        (
            "printf 'HEAD\\n--\\n.env\\n' | git log -p --stdin",
            "every patch of .env, its content included",
        ),
        (
            "git log -p --stdin < revs.txt",
            "names from a file nobody looked into",
        ),
        (
            "echo HEAD:secrets/key | git show --stdin",
            "prints the committed secrets/key",
        ),
    ];
    let wd = Workdir::new("git-stdin");
    assert_none("git --stdin", failures(&wd, cases, NEVER_UNASKED));
}

// ---------------------------------------------------------------------------
// 6. git pathspecs are patterns
// ---------------------------------------------------------------------------

/// git matches its pathspecs itself: a quoted `*` or `?` is a glob, and
/// `:(…)`/`:!` magic selects by pattern or by exclusion. The rows take a
/// pathspec as a literal path, so `'*.env'` is a file named `*.env` and
/// no rule matches; the same lines with `.env`, `./.env` or the shell's
/// `.e*` are denied, and `git grep TOKEN` (every file) is denied.
#[test]
fn git_pathspecs_are_patterns() {
    let cases: &[(&str, &str)] = &[
        (
            "git grep -e TOKEN -- ':!README.md'",
            "every tracked file but README.md: prints .env's line",
        ),
        (
            "git grep -e TOKEN -- ':(glob)**'",
            "every tracked file: the same",
        ),
        ("git grep -e TOKEN -- '*.env'", "the glob matches .env"),
        (
            "git diff -- '*.env'",
            "the working .env's changes, its new content included",
        ),
        ("git diff -- ':(icase).ENV'", "case-insensitive magic"),
        ("git diff HEAD -- '.en?'", "a `?` glob"),
        (
            "git diff HEAD -- 'secret?'",
            "the directory secrets, every file under it",
        ),
        (
            "git log -p -- '*.env'",
            "every patch of .env: its content in every commit",
        ),
    ];
    let wd = Workdir::new("pathspecs");
    assert_none("git pathspecs", failures(&wd, cases, DENIED));
}

// ---------------------------------------------------------------------------
// 7. A denied subcommand out of reach of the views
// ---------------------------------------------------------------------------

const DENY_KUBECTL_DELETE: Rules = Rules {
    label: "deny Bash(kubectl delete:*)",
    allow: &[],
    ask: &[],
    deny: &["Bash(kubectl delete:*)"],
};

/// The deny view of a command with subcommands tries each place an
/// unknown global option's value may leave the subcommand in, up to eight
/// views. kubectl takes many global options the row does not list
/// (`--request-timeout`, `--cache-dir`, `--username`, …), each with the
/// next word as its value, and takes an option again when repeated: eight
/// of them use up the views before `delete`, and `bypassPermissions` runs
/// the command. Checked: kubectl then runs `delete` (it asks the server).
#[test]
fn views_used_up_before_the_subcommand() {
    let cases: &[(&str, &str)] = &[
        (
            "kubectl --request-timeout 5s --request-timeout 5s --request-timeout 5s --request-timeout 5s --request-timeout 5s --request-timeout 5s --request-timeout 5s --request-timeout 5s delete pod p",
            "one unknown valued option repeated eight times",
        ),
        (
            "kubectl --cache-dir /tmp/a --certificate-authority /tmp/ca --client-certificate /tmp/c --client-key /tmp/k --username u --password p --tls-server-name n --request-timeout 5s delete ns prod",
            "eight different ones, as a real line could hold",
        ),
    ];
    let wd = Workdir::new("views");
    let settings = [
        Setting {
            rules: &DENY_KUBECTL_DELETE,
            mode: Mode::Default,
            expect: Expect::Deny,
        },
        Setting {
            rules: &DENY_KUBECTL_DELETE,
            mode: Mode::BypassPermissions,
            expect: Expect::Deny,
        },
    ];
    assert_none("views", failures(&wd, cases, &settings));
}

// ---------------------------------------------------------------------------
// 8. git plumbing that pushes
// ---------------------------------------------------------------------------

/// `Bash(git push:*)` sees `git push` however it is spelled, `git-push`
/// included; `git send-pack` is the plumbing `git push` is built on and
/// updates the remote's refs the same way. It has no row, so it is asked
/// about — and `bypassPermissions` runs it.
#[test]
fn plumbing_that_pushes() {
    let cases: &[(&str, &str)] = &[
        (
            "git send-pack https://example.invalid/r.git main",
            "pushes main to the remote",
        ),
        (
            "git send-pack --all --force /srv/mirror.git",
            "force-pushes every branch",
        ),
        (
            "git send-pack \"$(git remote get-url origin)\" HEAD:refs/heads/main",
            "to origin, the URL looked up on the line",
        ),
    ];
    let wd = Workdir::new("send-pack");
    assert_none("git send-pack", failures(&wd, cases, DENIED));
}
