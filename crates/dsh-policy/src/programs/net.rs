//! Grammars of the programs that talk to other machines: what `curl` and
//! `wget` read from `@FILE` arguments and write under names a server
//! gives, and which `ssh -o` settings name no program.

use super::Understanding;
use crate::options::Scan;
use crate::word::Arg;

/// `curl`: `@FILE` in a data, form, header or cookie value reads FILE;
/// `-O`, `-J` and `--output-dir` write under a name the server gives;
/// `-w '%output{F}'` writes F.
pub(super) fn curl(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    for g in &scan.options {
        let Some(value) = g.values.first() else {
            continue;
        };
        let v = value.value.as_str();
        if g.is(
            "dHbT",
            &[
                "data",
                "data-raw",
                "data-binary",
                "data-ascii",
                "json",
                "header",
                "cookie",
                "upload-file",
                "variable",
            ],
        ) && !g.is("", &["data-raw"])
        {
            if let Some(file) = v.strip_prefix('@').filter(|f| *f != "-") {
                u.reads.push(Arg::plain(file));
            } else if g.is("b", &["cookie"]) && !v.contains('=') {
                // A cookie value without `=` is a file of cookies.
                u.reads.push(value.clone());
            }
        }
        if g.is("F", &["form", "data-urlencode", "variable"]) {
            // `name=@file`, `name=<file`, `name@file`.
            let after = v.split_once(['=', '@']).map_or(v, |(_, rest)| rest);
            let file = after.trim_start_matches(['@', '<']);
            if (v.contains("=@") || v.contains("=<") || (!v.contains('=') && v.contains('@')))
                && !file.is_empty()
                && file != "-"
            {
                u.reads.push(Arg::plain(file));
            }
        }
        if g.is("w", &["write-out"]) && v.contains("%output{") {
            u.write(Arg::unknown("the file -w names"), "curl -w");
        }
    }
    if scan.options.iter().any(|g| {
        g.is(
            "OJ",
            &["remote-name", "remote-name-all", "remote-header-name"],
        )
    }) {
        u.write(Arg::unknown("the name the server gives"), "curl -O");
    }
}

/// `wget` without `-O` writes what it fetches under the name the server
/// gives.
pub(super) fn wget(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    let named = scan.options.iter().any(|g| g.is("O", &["output-document"]));
    if !named && !scan.operands.is_empty() {
        u.write(Arg::unknown("the name the server gives"), "wget");
    }
}

/// `ssh -o` keys that name no program and no configuration file.
const SSH_SAFE_OPTIONS: &[&str] = &[
    "stricthostkeychecking",
    "userknownhostsfile",
    "connecttimeout",
    "batchmode",
    "serveraliveinterval",
    "serveralivecountmax",
    "loglevel",
    "port",
    "user",
    "identityfile",
    "identitiesonly",
    "compression",
    "requesttty",
    "controlmaster",
    "controlpath",
    "controlpersist",
    "hostname",
    "addressfamily",
    "connectionattempts",
    "passwordauthentication",
    "pubkeyauthentication",
    "preferredauthentications",
    "forwardagent",
    "tcpkeepalive",
    "globalknownhostsfile",
    "updatehostkeys",
    "checkhostip",
    "hashknownhosts",
    "exitonforwardfailure",
];

/// `ssh`, `scp`, `sftp`: an `-o` setting nobody listed may run a command
/// (`ProxyCommand`, `LocalCommand`, `Match exec`).
pub(super) fn ssh(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    for g in &scan.options {
        if g.is("o", &[]) {
            let value = g.values.first().map(|v| v.value.as_str()).unwrap_or("");
            let key = value
                .split(['=', ' ', '\t'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if !SSH_SAFE_OPTIONS.contains(&key.as_str()) {
                u.run("an ssh -o option we do not know can run a command (ProxyCommand, LocalCommand, Match exec, …)");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::understand;
    use crate::word::Arg;

    fn args(words: &[&str]) -> Vec<Arg> {
        words.iter().map(|w| Arg::plain(w)).collect()
    }

    #[test]
    fn curl_reads_at_files_and_writes_server_names() {
        let u = understand("curl", &args(&["-d", "@/etc/shadow", "https://x"]));
        assert_eq!(u.reads[0].value, "/etc/shadow");
        let u = understand("curl", &args(&["-F", "f=@secret.txt", "https://x"]));
        assert_eq!(u.reads[0].value, "secret.txt");
        let u = understand("curl", &args(&["-O", "https://x/a"]));
        assert!(!u.writes[0].target.literal);
        let u = understand("curl", &args(&["-o", "-", "https://x"]));
        assert!(u.writes.is_empty(), "-o - is standard output");
    }
}
