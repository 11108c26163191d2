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
//! | 2 | plan mode and not read-only → **PLAN_MODE** | plan mode → **PLAN_MODE** | plan mode → **PLAN_MODE** |
//! | 3 | a session allow rule (from *allow always*) → allow | target not a literal path, or relative after a `cd` → **ask** | → **ask** (dontAsk: deny) |
//! | 4 | an `ask` rule matching any view → ask | session allow → allow | |
//! | 5 | an `allow` rule matching the looked-through command² → allow | `ask` `Edit`/`Write` rule → ask | |
//! | 6 | otherwise the mode | `allow` `Edit`/`Write` rule → allow | |
//! | 7 | | into a protected directory ([`PROTECTED_DIRS`]) in acceptEdits or bypassPermissions → ask | |
//! | 8 | | acceptEdits and inside the working directories → allow; otherwise the mode | |
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
//! Modes decide what no rule matched: `default` asks (allows tools annotated
//! read-only), `acceptEdits` also allows edits inside the working directory
//! (file-edit tools by their path argument, and bash writes), `plan` lets
//! through only read-only tools and bash command lines whose every part is
//! read-only by [`READ_ONLY_COMMANDS`] (anything else is `PLAN_MODE`:
//! [`PLAN_MODE_MESSAGE`]), `dontAsk` denies (read-only tools still run;
//! what an `ask` rule matches is denied too, as nobody may be asked),
//! `bypassPermissions` allows. Edits into `.git`, `.claude`, `.vscode` or
//! `.idea` (anywhere in the path; `.claude/commands`, `.claude/agents` and
//! `.claude/skills` exempt) are still asked about in `acceptEdits` and
//! `bypassPermissions`, as Claude Code protects them: what is in them
//! configures what runs (git hooks, `core.fsmonitor`, editor tasks). An
//! explicit allow rule for the path still allows. Something we cannot analyse is never allowed
//! by a mode or by an allow rule — not even a tool-wide `allow Bash`.
//!
//! ### Edits and redirections
//!
//! A write is an **edit of its target file**, decided by `Edit(…)` and
//! `Write(…)` rules and the mode — never by `Bash` rules. So with
//! `allow Bash(echo:*)`, `echo hi > notes.txt` still asks in `default`
//! mode, is allowed in `acceptEdits` (inside the working directory), and
//! `deny Edit(/etc/**)` denies `echo x >> /etc/hosts` under any allow rule.
//! `/dev/null`, `/dev/stdout`, `/dev/stderr` and `/dev/tty` are not edits;
//! `2>&1` is not a write.
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
//! ### Path globs
//!
//! Any other tool's specifier is a path glob matched against the call's
//! `file_path`, `path`, `notebook_path` or `filePath` argument: `*` and `?`
//! within a segment, `**` across segments; `/abs/…` absolute, `~/…` under the
//! home directory, `dir/…` or `./…` under the working directory, and a
//! pattern without `/` (`*.env`) matches a file name anywhere. A call without
//! a path argument matches only tool-wide rules. `Edit(…)`/`Write(…)` rules
//! also apply to every file-edit tool ([`DEFAULT_EDIT_TOOLS`]).
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
//! * The command table knows the code-running and writing options of the
//!   programs it lists (git, rg, tar, sed, awk, sort, tree, fd, man, less,
//!   curl, wget, ssh, scp, rsync, cargo, zip); a prefix allow rule for any
//!   other program allows whatever its options can make it do.
//! * Values are not known before the command runs: `rm $X` is matched as
//!   written; `bash` arithmetic can execute code stored in a variable's
//!   value, which is refused only for values assigned in the same command.
//! * `git` can run programs from repository configuration (pagers, diff
//!   drivers, `core.fsmonitor`) even for read-only subcommands; plan mode
//!   trusts the repository's configuration.
//! * Paths are compared lexically: a symbolic link inside the working
//!   directory that points outside it counts as inside. A relative write
//!   target after a `cd` is asked about, not resolved.
//! * Only redirections, `tee`, `find -fprint*` and `find -delete` are edits.
//!   Commands that write files themselves (`cp`, `mv`, `sed -i`, `dd of=`,
//!   `truncate`) are ordinary commands decided by `Bash` rules: add
//!   `deny Bash(cp:*)`-style rules if `Edit` denials must hold for them.
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
//!   line up to 1 MiB is decided in linear time, within about 40 ms and
//!   15 MiB on a 2-core VM (`cargo bench -p dsh-policy`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod approval;
mod commands;
mod files;
mod middleware;
mod path;
mod places;
mod policy;
mod readonly;
mod rule;
mod scripts;
mod settings;
mod shell;

pub use approval::{ApprovalAnswer, ApprovalRequest, ApproveAll, Approver, FnApprover};
pub use middleware::{PermissionMiddleware, RememberRule};
pub use policy::{
    Decision, Evaluation, Mode, Origin, PartEvaluation, PartKind, PermissionPolicy, UnknownMode,
    DEFAULT_EDIT_TOOLS, PLAN_MODE_MESSAGE, PROTECTED_DIRS,
};
pub use readonly::{is_read_only_command, READ_ONLY_COMMANDS};
pub use rule::{PermissionRules, Rule, RuleError, RuleList};
pub use settings::{
    discover, project_claude_dir, remember_rule, RuleSource, CLAUDE_CODE_IGNORED_KEYS,
};
pub use settings::{
    BashSettings, HookCommand, HookEvent, HookMatcher, HookSettings, McpSettings,
    PermissionSettings, SandboxMode, SandboxSettings, Settings, SettingsError, SettingsErrorKind,
};
