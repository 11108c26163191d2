//! `DSH_SANDBOX_NO_NAMESPACES=1` turns the namespaces off (its own test
//! binary: the variable is process-wide).

use dsh_sandbox::{namespaces_available, ChildConfig, ChildPlan};

#[test]
fn the_variable_turns_namespaces_off() {
    std::env::set_var("DSH_SANDBOX_NO_NAMESPACES", "1");
    assert!(!namespaces_available());
    let dir = std::env::temp_dir();
    let err = ChildPlan::prepare(ChildConfig {
        read_only_binds: vec![dir],
        ..ChildConfig::default()
    })
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
    // An IPC namespace asked for falls back to the filter refusing IPC.
    let plan = ChildPlan::prepare(ChildConfig {
        ipc_namespace: true,
        ..ChildConfig::default()
    })
    .unwrap();
    assert!(!plan.ipc_namespace() && !plan.namespaces());
    std::env::remove_var("DSH_SANDBOX_NO_NAMESPACES");
    assert!(namespaces_available(), "this machine has namespaces");
}
