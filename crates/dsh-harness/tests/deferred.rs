//! What building a pipeline leaves for the first command: the executor's
//! spill directory, cgroup and watchdog. A test binary of its own: it points
//! `TMPDIR` elsewhere, which no other test may see.

use dsh_harness::{HarnessError, Pipeline, PipelineOptions};
use dsh_tools::ToolExecution;
use std::path::PathBuf;

fn options(cwd: &std::path::Path, settings: &std::path::Path) -> PipelineOptions {
    PipelineOptions::default()
        .no_user_settings(true)
        .settings_only(true)
        .settings(settings)
        .cwd(cwd)
}

#[tokio::test]
async fn the_executor_is_set_up_before_the_first_command_not_at_build() {
    let base = std::env::temp_dir().join(format!("dsh-harness-deferred-{}", std::process::id()));
    let cwd = base.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    let settings = base.join("settings.json");
    std::fs::write(&settings, r#"{"permissions": {"allow": ["Bash(echo:*)"]}}"#).unwrap();

    // A bad settings file is still an error of the build.
    let bad = base.join("bad.json");
    std::fs::write(&bad, r#"{"permissions": {"alow": []}}"#).unwrap();
    let err = Pipeline::build(&options(&cwd, &bad))
        .err()
        .expect("a bad key passed");
    assert!(matches!(err, HarnessError::Settings(_)), "{err}");

    // Built: nothing of the executor exists yet.
    let pipeline = Pipeline::build(&options(&cwd, &settings)).unwrap();
    let spill: PathBuf = pipeline.executor().spill_dir().to_owned();
    assert!(!spill.exists(), "the spill directory was made at build");
    // The first command sets it up.
    let result = pipeline
        .registry()
        .execute(ToolExecution::new("c1", "bash", r#"{"command":"echo hi"}"#))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert!(spill.is_dir(), "no spill directory after the first command");
    drop(pipeline);
    assert!(!spill.exists(), "the spill directory outlived the pipeline");

    // Where it cannot be set up, the first call says so, and so does an
    // explicit set-up.
    // This test binary has no other test to see the changed environment.
    std::env::set_var("TMPDIR", base.join("missing"));
    let pipeline = Pipeline::build(&options(&cwd, &settings)).unwrap();
    let result = pipeline
        .registry()
        .execute(ToolExecution::new("c2", "bash", r#"{"command":"echo hi"}"#))
        .await;
    assert!(result.is_error, "{result:?}");
    let text = serde_json::to_string(&result).unwrap();
    assert!(
        text.contains("could not set up the bash executor"),
        "{text}"
    );
    let err = pipeline
        .set_up_executor()
        .expect_err("set up in a missing TMPDIR");
    assert!(matches!(err, HarnessError::Executor(_)), "{err}");
    std::env::remove_var("TMPDIR");
    let _ = std::fs::remove_dir_all(&base);
}
