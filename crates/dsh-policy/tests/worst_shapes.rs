//! Memory of a decision: every worst shape, at the 1 MiB input limit and at
//! the largest size the analysis still reads in full, is decided as its
//! rules say within 64 MiB at its peak. Memory is deterministic, so this
//! guards against the quadratic shapes coming back (a chain of `nohup` took
//! over 5 GB before, and brush-parser's tree of a 1 MiB command line of
//! short words takes 100–300 MiB, which the parser's budget now prevents).
//! Time is the bench's (`cargo bench -p dsh-policy`).

use dsh_policy::{Mode, PermissionPolicy};

mod shapes;

#[test]
fn every_worst_shape_is_decided_within_the_memory_target() {
    let policy = PermissionPolicy::new(shapes::rules(), Mode::Default, "/work/proj");
    let mut failures = Vec::new();
    for shape in shapes::shapes() {
        let sizes = [
            ("in full", shape.largest_analysed(), shape.full),
            ("at the limit", shape.at_limit(), shape.whole),
        ];
        for (size, command, expect) in sizes {
            assert!(
                command.len() <= shapes::LIMIT,
                "{} is over the limit",
                shape.name
            );
            let (decision, reason, took, peak) = shapes::measure(&policy, &command);
            let bytes = command.len();
            let whole = shapes::decided_whole(&command);
            drop(command);
            eprintln!(
                "{} {size} ({} KiB): {decision}, {took:?}, peak {:.1} MiB",
                shape.name,
                bytes >> 10,
                peak as f64 / (1 << 20) as f64
            );
            if peak > shapes::MEMORY_TARGET {
                failures.push(format!("{} {size}: peak {} MiB", shape.name, peak >> 20));
            }
            if whole != (size == "at the limit") {
                failures.push(format!("{} {size}: decided whole: {whole}", shape.name));
            }
            if decision != expect {
                let reason: String = reason.chars().take(200).collect();
                failures.push(format!(
                    "{} {size}: {decision} instead of {expect} ({reason})",
                    shape.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
