//! A kernel older than the sandbox needs: the call fails with
//! `SANDBOX_UNAVAILABLE` naming what is missing, and nothing runs. (Its own
//! test binary: it pretends, through `DSH_SANDBOX_ABI`, that the kernel is
//! older, which must not leak into other tests.)

use dsh_sandbox::{SandboxMode, SandboxPolicy};
use dsh_tool_bash::{ErrorKind, Executor, ExecutorConfig, RunRequest};

#[tokio::test]
async fn an_older_abi_fails_the_call_and_runs_nothing() {
    // Before any thread reads it: the test binary runs this one test.
    std::env::set_var("DSH_SANDBOX_ABI", "3");
    let dir = std::env::temp_dir().join(format!("dsh-sandbox-old-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("ran");
    let ex = |network: bool| {
        Executor::new(ExecutorConfig {
            cwd: dir.clone(),
            sandbox: Some(SandboxPolicy {
                mode: SandboxMode::WorkspaceWrite,
                writable_roots: vec![],
                network,
            }),
            ..ExecutorConfig::default()
        })
        .unwrap()
    };
    let err = ex(false)
        .run(RunRequest::new(format!("touch {}", marker.display())))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SandboxUnavailable);
    let message = err.to_string();
    assert!(
        message.contains("TCP blocking (Landlock ABI 4)"),
        "{message}"
    );
    assert!(
        message.contains("this kernel has Landlock ABI 3"),
        "{message}"
    );
    assert!(message.contains("nothing ran"), "{message}");
    assert!(!marker.exists());
    // With the network on, ABI 3 is enough for the files.
    let out = ex(true).run(RunRequest::new("echo ok")).await.unwrap();
    assert_eq!(out.stdout.text, "ok\n");
    // No Landlock at all: refused too.
    std::env::set_var("DSH_SANDBOX_ABI", "0");
    let err = ex(true).run(RunRequest::new("echo ok")).await.unwrap_err();
    assert!(err.to_string().contains("ABI 0 (none)"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
