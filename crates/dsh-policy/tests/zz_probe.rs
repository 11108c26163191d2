// Scratch probe (not committed): decisions for the lines of $PROBE.
use dsh_policy::{Mode, PermissionPolicy, PermissionRules};
use serde_json::json;
#[test]
fn probe() {
    let Ok(file) = std::env::var("PROBE") else {
        return;
    };
    let text = std::fs::read_to_string(file).unwrap();
    let rules = PermissionRules::parse(
        ["Bash(npm test:*)", "Bash(go test:*)"],
        Vec::<&str>::new(),
        ["Bash(git push:*)", "Read(//etc/**)", "Bash(rm:*)"],
    )
    .unwrap();
    for mode in [Mode::Default, Mode::Plan] {
        let policy = PermissionPolicy::new(rules.clone(), mode, "/tmp/probe");
        for line in text.split("\n===\n") {
            let line = line.trim_end_matches('\n');
            if line.is_empty() {
                continue;
            }
            let e = policy.check("bash", &json!({"command": line}));
            println!(
                "{mode:?} {:?} {:5} {}",
                line,
                e.decision.as_str(),
                e.reason.chars().take(160).collect::<String>()
            );
        }
    }
}
