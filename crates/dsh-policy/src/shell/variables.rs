//! Which variables change what a command runs or reads: by exact name,
//! by prefix and by the shapes such names take, and which are known to
//! change only output, locale or logging.

/// Variables known to change which program runs, what it loads or which
/// configuration it reads: by exact name, by prefix, and by the suffixes
/// such variables are named with (`*_CONFIG`, `*_PATH`, `*PAGER`, …), so
/// that a program's variable nobody listed is usually caught by its shape.
pub(super) fn is_dangerous_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "CDPATH",
        "HOME",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "CC",
        "CXX",
        "SHELL",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTDOC",
        "ZDOTDIR",
        "TMPDIR",
        "INPUTRC",
        "TERMINFO",
        "GLOBIGNORE",
        "POSIXLY_CORRECT",
    ];
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "GIT_",
        "BASH_",
        "XDG_",
        "NPM_CONFIG_",
        "npm_config_",
        "YARN_",
        "CARGO_",
        "RUSTUP_",
        "PYTHON",
        "PIP_",
        "PERL",
        "RUBY",
        "GEM_",
        "BUNDLE_",
        "NODE_",
        "JAVA_",
        "_JAVA_",
        "JDK_",
        "MAVEN_",
        "GRADLE_",
        "GO",
        "DOCKER_",
        "KUBE",
        "SSH_",
        "GNUPG",
        "GPG_",
    ];
    const SUFFIXES: &[&str] = &[
        "PAGER",
        "EDITOR",
        "_CONFIG",
        "_CONFIG_PATH",
        "_CONFIG_FILE",
        "_CONFIG_DIR",
        "_CONFIG_HOME",
        "_HOME",
        "_PATH",
        "_OPTIONS",
        "_OPTS",
        "FLAGS",
        "_COMMAND",
        "_CMD",
        "_PROGRAM",
        "_WRAPPER",
        "_RC",
        "RC_FILE",
        "_ASKPASS",
        "_PLUGINS",
        "_PRELOAD",
    ];
    EXACT.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || SUFFIXES.iter().any(|p| name.ends_with(p))
}

/// Variables known to change only output, locale or logging.
pub(super) fn is_harmless_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLORTERM",
        "CI",
        "DEBUG",
        "VERBOSE",
        "RUST_LOG",
        "RUST_BACKTRACE",
        "RUST_LIB_BACKTRACE",
        "RUST_TEST_THREADS",
        "RUST_MIN_STACK",
        "CARGO_TERM_COLOR",
        "CARGO_TERM_VERBOSE",
        "CARGO_INCREMENTAL",
        "NODE_ENV",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONWARNINGS",
        "GIT_PAGER_IN_USE",
        "GIT_TERMINAL_PROMPT",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "LOG_LEVEL",
        "RAYON_NUM_THREADS",
        "OMP_NUM_THREADS",
        "HISTFILE",
        "HISTSIZE",
        "PORT",
        "HOST",
        "LOGNAME",
        "USER",
        "PWD",
        "OLDPWD",
        "SHLVL",
    ];
    EXACT.contains(&name) || name.starts_with("LC_")
}

/// A variable in a command's environment (`VAR=x cmd`, `env VAR=x cmd`,
/// `export VAR=x`): every program may read it, so anything not known to
/// be harmless is treated as changing what runs.
pub(super) fn exported_variable_is_risky(name: &str) -> bool {
    !is_harmless_variable(name)
}

/// A shell variable set on its own (`VAR=x`): exported only when the
/// environment already has it, which the names programs read usually are.
pub(super) fn shell_variable_is_risky(name: &str) -> bool {
    is_dangerous_variable(name) && !is_harmless_variable(name)
}

/// Variables naming a shell's startup file: setting them is unanalysable.
pub(super) fn is_startup_variable(name: &str) -> bool {
    matches!(name, "BASH_ENV" | "ENV" | "ZDOTDIR")
}
