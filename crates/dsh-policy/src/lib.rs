//! # dsh-policy
//!
//! Permission rules that understand the shell, permission modes, plan mode
//! and approval, as a middleware of the [`dsh_tools`] pipeline; and the
//! settings file that configures them.
//!
//! ```
//! use dsh_policy::{Decision, Mode, PermissionPolicy, PermissionRules};
//! use serde_json::json;
//!
//! let rules = PermissionRules::parse(
//!     ["Bash(cd:*)", "Bash(npm test:*)", "Bash(git status)"], // allow
//!     ["Bash(git push:*)"],                                   // ask
//!     ["Bash(rm -rf:*)"],                                     // deny
//! )
//! .unwrap();
//! let policy = PermissionPolicy::new(rules, Mode::Default, "/work/proj");
//! let decide = |cmd: &str| policy.check("bash", &json!({ "command": cmd }));
//!
//! assert_eq!(decide("npm test -- --watch").decision, Decision::Allow);
//! // Every simple command counts, wherever it hides.
//! assert_eq!(decide("cd x && rm -rf y").decision, Decision::Deny);
//! assert_eq!(decide("echo $(rm -rf /tmp/x)").decision, Decision::Deny);
//! assert_eq!(decide("timeout 5 rm -rf y").decision, Decision::Deny);
//! assert_eq!(decide("bash -c 'git status; rm -rf y'").decision, Decision::Deny);
//! // Not every part is allowed: ask.
//! assert_eq!(decide("git status; make").decision, Decision::Ask);
//!
//! let denied = decide("cd x && rm -rf y");
//! assert_eq!(denied.rule.as_deref(), Some("Bash(rm -rf:*)"));
//! assert_eq!(
//!     serde_json::to_value(&denied).unwrap()["decision"],
//!     json!("deny")
//! );
//! ```
//!
//! As a middleware, with an approver (a terminal prompt, an ACP permission
//! request):
//!
//! ```
//! use dsh_policy::{ApprovalAnswer, FnApprover, Mode, PermissionMiddleware, PermissionPolicy, PermissionRules};
//! use dsh_tools::ToolRegistry;
//!
//! let policy = PermissionPolicy::new(PermissionRules::new(), Mode::Default, "/work/proj");
//! let permissions = PermissionMiddleware::new(policy)
//!     .with_approver(FnApprover(|_req| async { ApprovalAnswer::AllowOnce }));
//! let registry = ToolRegistry::new();
//! registry.use_middleware(permissions.clone());
//! // Later, e.g. when the user approves a plan:
//! permissions.set_mode(Mode::AcceptEdits);
//! ```
//!
//! Or from a settings file:
//!
//! ```
//! use dsh_policy::{Mode, Settings};
//! let settings: Settings = r#"{"permissions": {"allow": ["Bash(npm test:*)"], "defaultMode": "acceptEdits"}}"#
//!     .parse()
//!     .unwrap();
//! assert_eq!(settings.mode(), Mode::AcceptEdits);
//! let policy = settings.policy("/work/proj", None);
//! # let _ = policy;
//! ```
//!
//! ## The decision model
//!
//! A bash command line is parsed and split into **parts**:
//!
//! * every **simple command** — across `&&`, `||`, `;`, `|`, `|&`, `&`,
//!   newlines, subshells `( )`, groups `{ …; }`, `$( )`, backticks, `<( )`
//!   and `>( )`, here-documents that expand, the values of assignments, the
//!   bodies of `if`/`for`/`while`/`until`/`case`, functions and
//!   `coproc`, `[[ … ]]` and arithmetic;
//! * every **file written**: `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&file`,
//!   `tee FILE`, `find -fprint FILE` and `find ROOT -delete`;
//! * everything we **cannot analyse**: a syntax error, a command name that
//!   is not a literal word (`$CMD`, `$(echo rm)`, `{rm,-rf}`, `r?`), `eval`,
//!   `bash -c`, `watch` or `trap` of a non-literal string, a shell reading a
//!   script from a pipe or from a non-literal path (`source <(…)`), `env -S`,
//!   assignments to variables that change what runs (`PATH`, `LD_PRELOAD`,
//!   `GIT_*`, …), alias definitions, `hash -p`, `enable`, `/dev/tcp` and
//!   `/dev/udp` redirections, nesting beyond the analyser's limits; an
//!   arithmetic command or arithmetic `for` unless it is plainly `((…))`
//!   with no `[`, `$` or backtick; an operand of `[[`, `[`, `test`, `let`,
//!   `printf`, `declare`, `read`, … holding `[` with `$` or a backtick (an
//!   array subscript runs code); a wrapper or `find` option that is not an
//!   exactly spelled known option or not a plain literal word; `xargs -I`
//!   into a shell or a command name; a shell's startup file (`--rcfile`,
//!   `-i`, `BASH_ENV=`, `ENV=`, `ZDOTDIR=`) or a script read from a stream
//!   (`bash /dev/stdin`, `source /dev/fd/0`).
//!
//! Looking through: leading `VAR=value` assignments and the wrappers
//! `timeout`, `time` (also `time --`), `nice`, `nohup`, `stdbuf`, `env`,
//! `command`, `builtin`, `exec`, `setsid`, `ionice`, `taskset`, `busybox`,
//! `xargs`, `sudo` and `doas` (with their options) are stripped; `bash -c '…'`
//! (and `sh`, `dash`, `zsh`, `ksh`, `mksh`, `ash`), `eval '…'`, `trap '…' SIG`,
//! `watch '…'`, `find -exec CMD ;` and a shell fed a literal here-document or
//! here-string are analysed recursively.
//!
//! **Programs nobody listed.** Deny and ask rules are conservative where
//! allow rules are strict: for a simple command whose program is not known
//! to take only data as arguments (the short list in the command table:
//! `echo`, `printf`, `cat`, `grep`, `git commit -m …` and the other git
//! subcommands whose arguments are data, …), a deny or ask rule matches
//! when the denied command appears anywhere among its arguments — as a
//! word sequence (`flock L rm x`, `strace /bin/rm x`, `my-tool --cmd=rm x`)
//! or as shell code in a string argument, which is parsed and walked
//! (`ssh host 'cd /tmp && rm -rf x'`, `tmux new -d 'rm x'`). What is found
//! there never needs an allow of its own: the program is decided as its
//! own part. The same holds inside unanalysable parts: a deny rule sees its
//! command anywhere in their text.
//!
//! **Read-only means understood.** What the policy knows about programs
//! is one table (`src/programs/table.rs`): a row per program or subcommand
//! with its options (which take a value; whether the value is data, a file
//! read, a file written or code run), its operands, the global options
//! before a subcommand, and examples a test checks against both the
//! policy and [`is_read_only_command`]. A simple command is read-only only
//! when its row says the program reads and every option and operand it is
//! given has a read-only place in the row; an option nobody listed, an
//! abbreviation, or a program without a row is not read-only. The read-only
//! verdict, the files a command reads and writes, the options that run code
//! and the subcommand a deny rule sees (`git -C . push` is `git push`) all
//! come from the same row.
//!
//! **Constructs the walk does not model** make the line unanalysable: a
//! function definition, `trap`, `shopt -s|-u`, `set` beyond `-e -u -x -v
//! -o pipefail`, `bash -O`, `history` with options, `fc`, `compgen`,
//! `complete`, `bind`, `mapfile -C`, `declare -n|-i`, arithmetic over a
//! value the analysis cannot see (`$(( $(…) ))`, `${x:$(…)}`, `${a[$i]}`,
//! `[[ $x -eq 1 ]]`, `let "$x"`), `-v` of a name it cannot see, a
//! substitution inside `${…}`, a backslash-newline in an expanding
//! here-document, a `for` loop over a variable that changes what runs,
//! `exec -a`, `xargs --process-slot-var`, and an unquoted expansion given to
//! `test` or `[`. Their bodies are still walked for deny and ask rules. An
//! unquoted expansion may split into several words, so it is a word the
//! analysis cannot see wherever it stands, an option's value included.
//!
//! **Options that run code or write files.** An allow rule for a prefix
//! allows only what the program does without being told to run something
//! else: options and script arguments that run code (`git -c KEY=…` for any
//! key not known to be inert, `git fetch --upload-pack`, `rg --pre`, `tar
//! --to-command`, `sed 'e …'`, `awk 'BEGIN{system(…)}'`, `ssh -o
//! ProxyCommand=…`, `sort --compress-program`, `fd -x`, …) make the command
//! unanalysable; options and script commands that write (`git log
//! --output=F`, `sort -o F`, `tree -o F`, `sed -i`, `sed 'w F'`, `tar -cf F`,
//! `tar -x`, `curl -o F`, `awk '{print > "F"}'`) are edits of their target,
//! as redirections are. Options are read as getopt_long reads them
//! (bundles, attached values, abbreviated long options); an argument whose
//! value is not known could be such an option, so it is unanalysable for
//! these programs. sed and awk scripts are parsed, not searched.
//!
//! **What bash does first.** Brace expansion is followed when it is
//! provable (`{rm,-rf,x}` is `rm -rf x`) and unanalysable when a member is
//! quoted or expanded; `xargs CMD` appends unknown words to `CMD`; `find
//! -exec` ends at `;` or at a `+` right after `{}`; a shell reads its script
//! from the last redirection of descriptor 0; an expanding here-document is
//! analysed as bash expands it (`\$` is `$`); a read redirection from a
//! path that is not literal could be `/dev/tcp/…`; a command line that
//! gives a variable a value the analysis cannot see and evaluates
//! variables as code (arithmetic naming a variable, `[[ -eq ]]`, `${!x}`,
//! `${x@P}`, subscripts) is unanalysable; assignments to `BASH_CMDS`,
//! `BASH_ALIASES` and every variable named like configuration or a program
//! (`*_CONFIG*`, `*_PATH`, `*PAGER`, `XDG_*`, …) are; a variable in a
//! command's environment that is not known to be harmless (`LANG`, `TZ`,
//! `RUST_LOG`, `CI`, …) makes the command privileged, so only an allow
//! rule written with it allows it.
//!
//! Each part gets a verdict, in this order (first that applies wins):
//!
//! | | command part | write part | unanalysable part |
//! |---|---|---|---|
//! | 1 | a `deny` `Bash` rule matching any view¹ → **deny** | a `deny` `Edit`/`Write` rule matching the file → **deny** | a `deny` `Bash` rule matching its text → **deny** |
//! | 2 | a file it reads matched by a `deny` `Read` rule → **deny** | plan mode → **PLAN_MODE** | plan mode → **PLAN_MODE** |
//! | 3 | plan mode and not read-only → **PLAN_MODE** | target not placed (not a literal path, an unknown `cd` before it) → **ask** | → **ask** (dontAsk: deny) |
//! | 4 | a file operand not placed while `deny Read` rules exist → **ask** | session allow → allow | |
//! | 5 | a session allow rule (from *allow always*) → allow | `ask` `Edit`/`Write` rule → ask | |
//! | 6 | an `ask` `Bash` rule, or an `ask` `Read` rule for a file it reads → ask | `allow` `Edit`/`Write` rule for every place → allow | |
//! | 7 | an `allow` rule matching the looked-through command² → allow | into a protected directory ([`PROTECTED_DIRS`]) → ask | |
//! | 8 | read-only: every file it reads inside the working directories or allowed by a `Read` rule → allow, else ask (dontAsk: deny) | written by a file command (`cp`, `mv`, `mkdir`, `touch`, `rm`, `sed -i`, …) allowed by a `Bash` rule → allow | |
//! | 9 | acceptEdits, it only makes, changes or removes files, and reads inside → allow | acceptEdits: removes a working directory or one above it → ask; inside the working directories → allow | |
//! | 10 | otherwise the mode | otherwise the mode | |
//!
//! A **read part** (`< FILE`, `<> FILE`) is decided as a command's file
//! operands are: `deny Read` → deny, `ask Read` → ask, inside the working
//! directories or an `allow Read` → allow, otherwise the mode.
//!
//! ¹ Views: the command as written (with assignments and wrappers), each step
//! of looking through, and `rm` for `/bin/rm`. ² For `sudo`/`doas` or a
//! dangerous assignment the allow rule must match that privilege as written
//! followed by the looked-through command (`sudo -u x make`, `LD_PRELOAD=y
//! make`): a wrapper's own rule (`Bash(timeout:*)`, `Bash(env:*)`) never
//! allows its payload; `/bin/rm` is not allowed by a rule for `rm`.
//!
//! The call's verdict is the strongest part verdict (`deny` > `PLAN_MODE` >
//! `ask` > `allow`; [`Decision`] derives `Ord` so this is `max()`): a
//! compound command is allowed only if every part is, denied if any part is,
//! asked about if any part is. A `deny` tool-wide `Bash` rule denies every
//! bash call.
//!
//! Modes decide what no rule matched, as Claude Code's users know them:
//!
//! * `default`: **reads run unasked** — read-only tools, and bash command
//!   lines whose every part is read-only by the program table ([`is_read_only_command`]) and reads
//!   only inside the working directories (`ls -la`, `git status`, `grep -r x
//!   src`); anything else asks.
//! * `acceptEdits`: also edits inside the working directories — file-edit
//!   tools by their path argument, redirections, and the file commands
//!   `mkdir`, `touch`, `cp`, `mv`, `rm`, `rmdir`, `sed -i` with the options
//!   known to only make, copy, move or remove files (`cp -s`, `rm
//!   --no-preserve-root` are not), but not removing a working directory
//!   itself (`rm -r .`, `rm -rf ..`).
//! * `plan`: only read-only tools and read-only command lines, and their
//!   reads outside the working directories still ask; anything else is
//!   `PLAN_MODE` ([`PLAN_MODE_MESSAGE`]).
//! * `dontAsk`: what would ask is denied (what an `ask` rule matches too, as
//!   nobody may be asked); reads inside the working directories still run.
//! * `bypassPermissions`: allows, except edits into protected directories.
//!
//! Edits into `.git`, `.claude`, `.vscode` or `.idea` (anywhere in the
//! path, as written or after following symbolic links; `.claude/commands`,
//! `.claude/agents` and `.claude/skills` exempt) are asked about in every
//! mode, as Claude Code protects them: what is in them configures what runs
//! (git hooks, `core.fsmonitor`, editor tasks), so they are never "an edit
//! inside the working directory". An explicit allow rule for the path still
//! allows. Something we cannot analyse is never allowed by a mode or by an
//! allow rule — not even a tool-wide `allow Bash`.
//!
//! ### Reads, writes and where they are
//!
//! A read-only command's **file operands are reads** (`cat F`, `head -n 3
//! F`, `grep PAT F`, `grep -r PAT DIR` — `.` when it names none —, `cp SRC
//! DST`, `diff A B`, `jq . F`, `sed -n p F`, `awk '…' F`, `--file=F`,
//! `-fF`), and so is `< F`. A pattern operand is not a file (`grep .env
//! x.txt` reads `x.txt`). A program the command table does not describe
//! (`python3 x.py .env`, `base64 .env`) has every word that looks like a
//! path checked against `deny` `Read`, `Edit` and `Write` rules: a deny rule
//! must see its file wherever the command names it.
//!
//! A **write is an edit of its target file**, decided by `Edit(…)` and
//! `Write(…)` rules and the mode: redirections (`>`, `>>`, `>|`, `&>`,
//! `<>`, `>&file`), `tee FILE`, `find -fprint FILE`, `find ROOT -delete`,
//! the targets of `cp`, `mv`, `mkdir`, `touch`, `rm`, `rmdir`, `sed -i`,
//! and write options (`sort -o F`, `curl -o F`, …). So with `allow
//! Bash(echo:*)`, `echo hi > notes.txt` still asks in `default` mode, is
//! allowed in `acceptEdits` (inside the working directories), and `deny
//! Edit(//etc/**)` denies `echo x >> /etc/hosts` and `cp x /etc/hosts`
//! under any allow rule. A file command's own writes are also allowed by
//! a `Bash` rule for it (`Bash(mkdir:*)` allows `mkdir build`), after the
//! deny and ask rules and the protected directories. `/dev/null`,
//! `/dev/stdout`, `/dev/stderr`, `/dev/tty` and `/dev/fd/N` are no files;
//! `2>&1` is not a write.
//!
//! **Where.** A relative path is taken from the working directory after
//! the command line's own `cd`s (`cd sub && cat f` reads `sub/f`; `cd a ||
//! cd b` could be either, and both are checked; a `cd` the analysis cannot
//! follow — a variable, `cd -`, inside a loop or function, `CDPATH` set —
//! makes the later relative paths unplaced). `~` and `~/x` are the home
//! directory. Globs (`*`, `?`) are expanded against the directory at
//! decision time, dotfiles included (more files, never fewer); a `[…]`
//! glob is unplaced. Every place is checked both as written and as it is
//! on disk, symbolic links followed at decision time: a link `config ->
//! .env` is denied by `Read(./.env)`, and a link inside the working
//! directory that leads outside is outside. An unplaced read asks when
//! `deny Read` rules exist (it could be the denied file), an unplaced
//! write always asks.
//!
//! ### Command patterns
//!
//! In `Bash(pattern)`: `*` matches any characters, spaces included; a
//! trailing `:*` or ` *` means "this prefix, then a word boundary"
//! (`Bash(ls *)` matches `ls` and `ls -la`, not `lsof`; `Bash(ls*)` matches
//! `lsof`); without a wildcard the pattern matches exactly that command,
//! white space normalised. `\*` is a literal star. A command is compared in
//! a normal form: quotes removed, words joined by one space, a word with
//! spaces or quotes in single quotes (`git commit -m 'fix it'`).
//!
//! ### Path patterns
//!
//! `Read(…)`, `Edit(…)`, `Write(…)` and any other tool's specifier are
//! gitignore-style patterns, anchored as Claude Code anchors them:
//!
//! | pattern | means |
//! |---|---|
//! | `//abs/path/**` | the absolute path `/abs/path/**` |
//! | `~/path` | under the home directory |
//! | `/path` | relative to the settings file's project (the directory holding its `.claude`, else the file's directory; the working directory for rules given on the command line); in `deny` and `ask` rules also the absolute `/path`, so a rule written either way holds |
//! | `path/x`, `./path` | relative to the working directory |
//! | `name`, `*.pem`, `name/` | a file or directory of that name at any depth (for `allow` rules: under the working directory) |
//!
//! `*` and `?` match within a name, `**` across names; a pattern naming a
//! directory covers everything in it (`Read(./secrets)` denies
//! `secrets/key`). Tool calls are matched by their `file_path`, `path`,
//! `notebook_path` or `filePath` argument; a call without one matches only
//! tool-wide rules. `Edit(…)`/`Write(…)` rules apply to every file-edit
//! tool ([`DEFAULT_EDIT_TOOLS`]) and to bash writes, `Read(…)` rules to the
//! `Read` tool and to bash reads. `deny` and `ask` rules match a place as
//! written or on disk; `allow` rules only on disk, so a link cannot borrow
//! an allowed name.
//!
//! ### Approval
//!
//! *ask* goes to the [`Approver`]: *allow once*; *allow always* (adds a
//! session allow rule: the exact simple command for each part of a bash call
//! that was asked about, `Edit(/abs/file)` for a write, or the tool name;
//! session allow rules outrank ask rules but never deny rules); *reject once*
//! and *reject always* (adds session deny rules) give `PERMISSION_DENIED`
//! naming the user's rejection. Without an approver *ask* is
//! `APPROVAL_UNAVAILABLE`: it fails closed. A deny by rule is
//! `PERMISSION_DENIED` with `permission denied by rule deny RULE for "COMMAND"`.
//!
//! ## Why it is built this way
//!
//! * **A real parser.** Agents' permission bypasses come from splitting
//!   command lines with regexes (`cd x && rm`, `$(…)`, line continuations,
//!   quotes in command names). The parser is
//!   [brush-parser](https://crates.io/crates/brush-parser), the parser of the
//!   brush shell: pure Rust (no C toolchain, no FFI), maintained, and it
//!   parses as bash does — `r\<newline>m` is `rm`, `'r'm` is `rm`,
//!   here-documents, `|&`, `coproc`. tree-sitter-bash was the alternative; it
//!   is an editor grammar with error recovery and, for example, splits
//!   `r\<newline>m` into two words, which is a deny-rule bypass.
//! * **Fail closed.** Whatever is not understood becomes an *ask* part; parser
//!   panics are caught; deeply nested input is parsed on a thread whose stack
//!   grows with the nesting, and past a limit it is not parsed at all.
//! * **A fast path for plain lines.** Most command lines are plain words
//!   joined by `|`, `&&`, `||` and `;`; for those a small lexer builds the
//!   same syntax tree brush-parser would, without its general machinery
//!   (half of a decision's time). Anything else goes to brush-parser, and a
//!   property test checks that both give the same analysis.
//! * **One place for precedence.** Plan mode is a [`Mode`] of
//!   [`PermissionMiddleware`], so deny rules, plan mode, ask and allow rules
//!   merge in one function and the order is the table above.
//!
//! ## Caveats
//!
//! * Rules are only as strong as the analysis. A program that runs other
//!   programs in its own way (`make`, `npm run`, `ssh host cmd`,
//!   `parallel`) is one command to an allow rule: allow it only if you
//!   allow what it may run. Deny rules see a denied command written among
//!   its arguments, but not one inside a script file, a Makefile or
//!   `package.json`.
//! * Interpreters and scripts (`python3 -c`, `perl -e`, `node -e`, `sh
//!   x.sh`, `source x.sh`) cannot be seen into: the reason of every
//!   decision about them says so. Only a sandbox limits what their code
//!   does.
//! * The program table knows the code-running and writing options of the
//!   programs it has rows for (git, rg, tar, sed, awk, sort, tree, fd, man,
//!   less, curl, wget, ssh, rsync, cargo, go, npm, pytest, zip, …); a prefix
//!   allow rule for any other program allows whatever its options can make
//!   it do.
//! * Values are not known before the command runs: `rm $X` is matched as
//!   written; `bash` arithmetic can execute code stored in a variable's
//!   value, which is refused only for values assigned in the same command.
//! * `git` can run programs from repository configuration (pagers, diff
//!   drivers, `core.fsmonitor`) even for read-only subcommands; plan mode
//!   trusts the repository's configuration.
//! * Paths are decided when the call is: a link made or changed while the
//!   command runs (`ln -s .env x && cat x` in one line) is not seen; only a
//!   sandbox holds then.
//! * A program that reads every file under a directory (`grep -r`, `rg`,
//!   `git grep`, `diff -r`, `cp -r`) is denied when a deny `Read` rule
//!   anchored to a place (`Read(./.env)`, `Read(//etc/**)`) names a file that
//!   exists below it; a rule for a name at any depth (`Read(*.pem)`) is not
//!   searched for (that would walk the tree at every decision), and a
//!   listing (`ls -R`, `du -a`, `find`) reads names, not contents. `git diff`,
//!   `git log -p` and `git show` print tracked files without naming them: a
//!   tracked `.env` is printed. Only the sandbox's read denials hold there.
//! * `REV:PATH` (`git show HEAD:.env`) is placed from the working directory,
//!   which is the repository's root when the agent works at the root.
//! * `git config --list` and `--get` read the user's and the system's
//!   configuration too; only `--global` and `--system` name those files.
//! * Any git command may fetch missing objects in a partial clone: only a
//!   sandbox without network stops that.
//! * The words of a program the command table does not describe are
//!   guessed: one that merely looks like a denied path (`git commit -m
//!   .env`, `python3 x.py .env`) denies; a file the program opens without
//!   naming it in its arguments is not seen.
//! * `xargs CMD` reads files named on its input, which is not known: with
//!   `deny Read` rules, `… | xargs cat` asks.
//! * `select` loops are not parsed by brush-parser 0.4; they are asked about.
//! * `xargs CMD` is matched as `CMD` with the arguments written followed by
//!   `…` (what it appends); a plan-mode check of `CMD` assumes any words.
//! * The parser has a budget of about 24 000 words and operators per command
//!   line (nested texts such as `$(…)` and `bash -c` strings count again;
//!   long quoted or here-document text counts one unit per 16 bytes):
//!   brush-parser's syntax tree takes up to 1 KiB per token, so a 1 MiB
//!   line of short words would take hundreds of MiB. A command line past
//!   the budget, over 1 MiB, or with more than 2 000 nesting characters
//!   (`(`, `{`, `` ` ``, `[`, `!`, reserved words) is asked about whole
//!   (refused in plan and `dontAsk`), and deny and ask rules are matched
//!   against its text from every word start. In practice that is a chain
//!   of more than a few thousand commands or a here-document of more than
//!   about 50 KiB of source code: write big files with the edit tools. Every command
//!   line up to 1 MiB is decided in linear time, within about 55 ms and
//!   17 MiB on a 2-core VM (`cargo bench -p dsh-policy`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod approval;
mod denials;
mod middleware;
mod note;
mod options;
mod path;
mod places;
mod policy;
mod programs;
mod quick;
mod readonly;
mod rule;
mod scripts;
mod settings;
mod shell;
mod word;

pub use approval::{ApprovalAnswer, ApprovalRequest, ApproveAll, Approver, FnApprover};
pub use denials::ReadDenialPaths;
pub use middleware::{HookPermission, PermissionMiddleware, RememberRule};
pub use note::{ApprovalNote, DecisionNote, DecisionSlot};
pub use policy::{
    Decision, Evaluation, Mode, Origin, PartEvaluation, PartKind, PermissionPolicy, UnknownMode,
    DEFAULT_EDIT_TOOLS, PLAN_MODE_MESSAGE, PROTECTED_DIRS,
};
pub use readonly::{is_read_only_command, read_only_programs};
pub use rule::{PermissionRules, Rule, RuleError, RuleList};
pub use settings::TelemetrySettings;
pub use settings::{
    discover, project_claude_dir, remember_rule, RuleSource, CLAUDE_CODE_IGNORED_KEYS,
};
pub use settings::{
    AuditSettings, BashSettings, HookCommand, HookEvent, HookMatcher, HookSettings, McpSettings,
    NetworkDomains, PermissionSettings, PinsFile, SandboxMode, SandboxSettings, Settings,
    SettingsError, SettingsErrorKind,
};
