//! The bash tools through a real `ToolRegistry`: results, presentations,
//! agents, cancellation and the timeout middleware.

use dsh_tool_bash::{register_bash_tools, Executor, ExecutorConfig};
use dsh_tools::{
    CancellationToken, ErrorCode, TerminalExit, TimeoutMiddleware, ToolCallKind, ToolExecution,
    ToolRegistry,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn setup() -> (ToolRegistry, Executor, tempdir::Dir) {
    let dir = tempdir::Dir::new();
    let config = ExecutorConfig {
        cwd: dir.path.clone(),
        ..ExecutorConfig::default()
    };
    let executor = Executor::new(config).unwrap();
    let registry = ToolRegistry::new();
    register_bash_tools(&registry, &executor).unwrap();
    (registry, executor, dir)
}

/// A private directory removed at the end of the test.
mod tempdir {
    use std::path::PathBuf;

    pub struct Dir {
        pub path: PathBuf,
    }

    impl Dir {
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicU32, Ordering};
            static N: AtomicU32 = AtomicU32::new(0);
            let path = std::env::temp_dir().join(format!(
                "dsh-bash-tools-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).unwrap();
            Dir {
                path: path.canonicalize().unwrap(),
            }
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

async fn call(
    registry: &ToolRegistry,
    name: &str,
    args: Value,
    agent: &str,
) -> dsh_tools::ToolExecutionResult {
    registry
        .execute(ToolExecution::new("c", name, args).with_agent(agent))
        .await
}

fn alive(pid: i32) -> bool {
    // A zombie has been killed and only waits to be reaped.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test]
async fn foreground_call_result_and_presentation() {
    let (registry, _executor, dir) = setup();
    let args = json!({"command": "printf 'one\\ntwo\\n'; exit 4", "description": "Count"});
    let result = call(&registry, "bash", args.clone(), "a").await;
    assert!(!result.is_error);
    assert_eq!(result.text(), "one\ntwo\n[exit code: 4]");

    let pending = registry.present_call("bash", &args);
    assert_eq!(pending.title, "printf 'one\\ntwo\\n'; exit 4");
    assert_eq!(pending.kind, ToolCallKind::Execute);
    assert_eq!(
        pending.raw_input,
        Some(json!("printf 'one\\ntwo\\n'; exit 4"))
    );
    assert_eq!(pending.content[0].as_text(), Some("Count"));
    assert_eq!(
        pending.terminal.unwrap().cwd.as_deref(),
        Some(dir.path.to_str().unwrap())
    );

    let done = registry.present_result("bash", &args, &result);
    assert_eq!(
        done.content[0].as_text(),
        Some("```console\none\ntwo\n[exit code: 4]\n```")
    );
    let terminal = done.terminal.unwrap();
    assert_eq!(terminal.output.as_deref(), Some("one\ntwo"));
    assert_eq!(terminal.exit, Some(TerminalExit::ExitCode(4)));
}

#[tokio::test]
async fn killed_by_signal_is_presented_as_a_signal() {
    let (registry, _executor, _dir) = setup();
    let args = json!({"command": "kill -KILL $$"});
    let result = call(&registry, "bash", args.clone(), "a").await;
    assert_eq!(result.text(), "(no output)\n[killed by signal: SIGKILL]");
    let terminal = registry
        .present_result("bash", &args, &result)
        .terminal
        .unwrap();
    assert_eq!(terminal.exit, Some(TerminalExit::Signal("SIGKILL".into())));
}

#[tokio::test]
async fn relative_workdir_and_missing_workdir() {
    let (registry, _executor, dir) = setup();
    std::fs::create_dir(dir.path.join("sub")).unwrap();
    let args = json!({"command": "pwd", "workdir": "sub"});
    let result = call(&registry, "bash", args.clone(), "a").await;
    assert_eq!(
        result.text(),
        format!("{}/sub\n[exit code: 0]", dir.path.display())
    );
    let pending = registry.present_call("bash", &args);
    assert_eq!(
        pending.terminal.unwrap().cwd,
        Some(format!("{}/sub", dir.path.display()))
    );
    let missing = call(
        &registry,
        "bash",
        json!({"command": "pwd", "workdir": "nope"}),
        "a",
    )
    .await;
    assert!(missing.is_error);
    assert_eq!(missing.code(), Some(ErrorCode::ToolError));
    assert!(
        missing
            .text()
            .contains(&format!("{}/nope", dir.path.display())),
        "{}",
        missing.text()
    );
}

#[tokio::test]
async fn background_tasks_through_the_tools() {
    let (registry, _executor, _dir) = setup();
    let args = json!({"command": "echo ready; sleep 1000", "run_in_background": true});
    let started = call(&registry, "bash", args.clone(), "agent-1").await;
    assert_eq!(started.text(), "started background task bash-1");
    assert!(registry.present_call("bash", &args).terminal.is_none());
    assert!(registry
        .present_result("bash", &args, &started)
        .terminal
        .is_none());

    let read = call(
        &registry,
        "bash_output",
        json!({"task_id": "bash-1", "wait_ms": 5000}),
        "agent-1",
    )
    .await;
    assert_eq!(read.text(), "ready\n[status: running]");
    let again = call(
        &registry,
        "bash_output",
        json!({"task_id": "bash-1"}),
        "agent-1",
    )
    .await;
    assert_eq!(again.text(), "(no new output)\n[status: running]");

    let foreign = call(
        &registry,
        "bash_kill",
        json!({"task_id": "bash-1"}),
        "agent-2",
    )
    .await;
    assert!(foreign.is_error);
    assert_eq!(
        foreign.text(),
        "Error: task bash-1 belongs to another agent"
    );

    let killed = call(
        &registry,
        "bash_kill",
        json!({"task_id": "bash-1"}),
        "agent-1",
    )
    .await;
    assert_eq!(killed.text(), "killed background task bash-1");
    let unknown = call(
        &registry,
        "bash_kill",
        json!({"task_id": "bash-9"}),
        "agent-1",
    )
    .await;
    assert_eq!(unknown.text(), "Error: unknown bash task \"bash-9\"");

    assert_eq!(
        registry
            .present_call("bash_output", &json!({"task_id": "bash-1"}))
            .title,
        "Read output from background task bash-1"
    );
    assert_eq!(
        registry
            .present_call("bash_kill", &json!({"task_id": "bash-1"}))
            .title,
        "Kill background task bash-1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_through_the_registry_kills_its_daemon() {
    let (registry, _executor, dir) = setup();
    let pidfile = dir.path.join("daemon.pid");
    let command = format!(
        "setsid sh -c 'trap \"\" TERM; echo $$ > {}; exec sleep 1000' & sleep 1000",
        pidfile.display()
    );
    let cancel = CancellationToken::new();
    let exec =
        ToolExecution::new("c", "bash", json!({"command": command})).with_cancel(cancel.clone());
    let call = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(exec).await }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the daemon never wrote its pid");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(alive(pid));
    cancel.cancel();
    let fired = Instant::now();
    let result = call.await.unwrap();
    assert!(
        fired.elapsed() < Duration::from_millis(500),
        "{:?}",
        fired.elapsed()
    );
    assert_eq!(result.code(), Some(ErrorCode::Aborted));
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "daemon {pid} survived the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_timeout_middleware_does_not_cut_in_before_the_bash_timeout() {
    let (registry, _executor, _dir) = setup();
    registry.use_middleware(TimeoutMiddleware::new(Duration::from_millis(20)));
    let result = call(
        &registry,
        "bash",
        json!({"command": "sleep 0.2; echo done"}),
        "a",
    )
    .await;
    assert_eq!(result.text(), "done\n[exit code: 0]");
    let timed_out = call(
        &registry,
        "bash",
        json!({"command": "echo start; sleep 5", "timeout_ms": 100}),
        "a",
    )
    .await;
    assert!(!timed_out.is_error);
    let text = timed_out.text();
    assert!(text.starts_with("start\n"), "{text}");
    assert!(text.contains("[timed out after 100ms]"), "{text}");
}

#[test]
fn model_facing_schemas() {
    let (registry, _executor, _dir) = setup();
    let schemas = registry.schemas(dsh_tools::Dialect::Mcp);
    let bash = &schemas[0];
    assert_eq!(bash.name, "bash");
    let props: Vec<_> = bash.parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        props,
        [
            "command",
            "description",
            "timeout_ms",
            "workdir",
            "run_in_background",
            "sandbox_permissions",
            "justification",
            "tty",
            "yield_time_ms",
            "rows",
            "cols"
        ]
    );
    assert_eq!(bash.parameters["required"], json!(["command"]));
    for schema in &schemas {
        assert!(
            schema.description.len() < 2100,
            "{}: {}",
            schema.name,
            schema.description.len()
        );
    }
    assert!(bash.description.contains("run_in_background"));
    assert!(bash.description.contains("bash_output"));
    assert!(bash.description.contains("Stdin is closed"));
    // The argument objects are closed, and say so to the model.
    for schema in &schemas {
        assert_eq!(
            schema.parameters["additionalProperties"],
            json!(false),
            "{}",
            schema.name
        );
    }
}

#[tokio::test]
async fn unknown_properties_are_refused_with_the_likely_one_meant() {
    let (registry, _executor, dir) = setup();
    // Claude Code calls it `timeout`; ours is `timeout_ms`. Nothing runs.
    let marker = dir.path.join("ran");
    let command = format!("touch {}", marker.display());
    let result = call(
        &registry,
        "bash",
        json!({"command": command, "timeout": 5000}),
        "a",
    )
    .await;
    assert!(result.is_error);
    assert_eq!(result.code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        result.text(),
        r#"Error: invalid arguments: "timeout" is not a declared property (did you mean "timeout_ms"?)"#
    );
    assert!(!marker.exists());

    for (name, args, message) in [
        // One typo away.
        (
            "bash",
            json!({"comand": "ls"}),
            r#"missing required property "command"; "comand" is not a declared property (did you mean "command"?)"#,
        ),
        // Contained in a declared name.
        (
            "bash",
            json!({"command": "ls", "dir": "/tmp"}),
            r#""dir" is not a declared property (did you mean "workdir"?)"#,
        ),
        (
            "bash_output",
            json!({"task_id": "bash-1", "wait": 10}),
            r#""wait" is not a declared property (did you mean "wait_ms"?)"#,
        ),
        (
            "bash_kill",
            json!({"taskid": "bash-1"}),
            r#"missing required property "task_id"; "taskid" is not a declared property (did you mean "task_id"?)"#,
        ),
        // Nothing close: no guess.
        (
            "bash",
            json!({"command": "ls", "env": {"A": "1"}}),
            r#""env" is not a declared property"#,
        ),
        (
            "bash_kill",
            json!({"task_id": "bash-1", "signal": "KILL"}),
            r#""signal" is not a declared property"#,
        ),
    ] {
        let result = call(&registry, name, args, "a").await;
        assert_eq!(result.code(), Some(ErrorCode::InvalidArgs), "{name}");
        assert_eq!(
            result.text(),
            format!("Error: invalid arguments: {message}"),
            "{name}"
        );
    }
}

fn small_executor(dir: &tempdir::Dir, max_output_bytes: usize) -> Executor {
    Executor::new(ExecutorConfig {
        cwd: dir.path.clone(),
        max_output_bytes,
        ..ExecutorConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn background_head_is_cut_on_a_character_boundary() {
    let dir = tempdir::Dir::new();
    let executor = small_executor(&dir, 10);
    // 'a' then 20 two-byte characters: the 2-byte head budget ends inside the first 'é'.
    let task = executor
        .spawn_background(&format!("printf 'a{}'", "é".repeat(20)), None, None)
        .unwrap()
        .to_string();
    let text = executor
        .read_output(&task, None, Some(Duration::from_secs(10)), None)
        .await
        .unwrap();
    assert!(!text.contains('\u{FFFD}'), "{text:?}");
    assert!(!text.contains("invalid UTF-8"), "{text:?}");
    assert!(text.starts_with("a\n[… "), "{text:?}");
    assert!(text.contains("éééé\n["), "{text:?}");
}

#[tokio::test]
async fn every_read_with_replaced_bytes_says_so() {
    let (registry, _executor, dir) = setup();
    let go = dir.path.join("go");
    let command = format!(
        "printf 'x\\377'; while [ ! -e {} ]; do sleep 0.01; done; printf 'y\\376'",
        go.display()
    );
    let started = call(
        &registry,
        "bash",
        json!({"command": command, "run_in_background": true}),
        "a",
    )
    .await;
    assert_eq!(started.text(), "started background task bash-1");
    let first = call(
        &registry,
        "bash_output",
        json!({"task_id": "bash-1", "wait_ms": 10000}),
        "a",
    )
    .await;
    assert_eq!(
        first.text(),
        "x\u{FFFD}\n[invalid UTF-8 replaced with U+FFFD]\n[status: running]"
    );
    std::fs::write(&go, "").unwrap();
    let reads = read_until_done(&registry, "bash-1", "a").await;
    let with_y = reads
        .iter()
        .find(|r| r.starts_with('y'))
        .expect("the second output was read");
    assert!(
        with_y.starts_with("y\u{FFFD}\n[invalid UTF-8 replaced with U+FFFD]\n[status: "),
        "{reads:?}"
    );
}

/// Reads a task's output until it finishes; every answer, in order.
async fn read_until_done(registry: &ToolRegistry, task: &str, agent: &str) -> Vec<String> {
    let mut reads = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !reads
        .last()
        .is_some_and(|r: &String| r.contains("[status: completed"))
    {
        assert!(
            Instant::now() < deadline,
            "task {task} did not finish: {reads:?}"
        );
        let read = call(
            registry,
            "bash_output",
            json!({"task_id": task, "wait_ms": 10000}),
            agent,
        )
        .await;
        reads.push(read.text());
    }
    reads
}

#[tokio::test]
async fn cancelling_the_call_that_started_a_background_task_does_not_stop_it() {
    let (registry, executor, _dir) = setup();
    let cancel = CancellationToken::new();
    let exec = ToolExecution::new(
        "c",
        "bash",
        json!({"command": "sleep 1000", "run_in_background": true}),
    )
    .with_agent("a")
    .with_cancel(cancel.clone());
    let started = registry.execute(exec).await;
    assert_eq!(started.text(), "started background task bash-1");
    cancel.cancel();
    assert_eq!(executor.task_exit("bash-1", Some("a")).unwrap(), None);
    let read = call(&registry, "bash_output", json!({"task_id": "bash-1"}), "a").await;
    assert_eq!(read.text(), "(no new output)\n[status: running]");
}

#[tokio::test]
async fn no_timeout_applies_to_background_tasks() {
    let dir = tempdir::Dir::new();
    let executor = Executor::new(ExecutorConfig {
        cwd: dir.path.clone(),
        default_timeout: Duration::from_millis(50),
        ..ExecutorConfig::default()
    })
    .unwrap();
    let registry = ToolRegistry::new();
    register_bash_tools(&registry, &executor).unwrap();
    let started = call(
        &registry,
        "bash",
        json!({"command": "sleep 0.5; echo survived", "run_in_background": true}),
        "a",
    )
    .await;
    assert_eq!(started.text(), "started background task bash-1");
    let reads = read_until_done(&registry, "bash-1", "a").await.concat();
    assert!(reads.starts_with("survived\n"), "{reads:?}");
    assert!(
        reads.ends_with("[status: completed, exit code: 0]"),
        "{reads:?}"
    );
}

#[test]
fn defaults_are_the_documented_ones() {
    let config = ExecutorConfig::default();
    assert_eq!(config.default_timeout, Duration::from_secs(120));
    assert_eq!(config.max_timeout, Duration::from_secs(600));
    assert_eq!(config.kill_grace, Duration::from_secs(3));
    assert_eq!(config.max_output_bytes, 64_000);
    assert_eq!(config.spill_cap_bytes, 256 * 1024 * 1024);
    assert_eq!(config.max_background_tasks, 64);
    assert_eq!(config.max_wait, Duration::from_secs(30));
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[tokio::test]
async fn finished_background_tasks_give_back_their_resources() {
    let dir = tempdir::Dir::new();
    let executor = small_executor(&dir, 1000);
    // Warm up (the cgroup pool, the runtime's own descriptors).
    let warm = executor
        .spawn_background("true", None, None)
        .unwrap()
        .to_string();
    executor
        .read_output(&warm, None, Some(Duration::from_secs(10)), None)
        .await
        .unwrap();
    let before = open_fds();
    for _ in 0..40 {
        let task = executor
            .spawn_background("echo x", None, None)
            .unwrap()
            .to_string();
        let deadline = Instant::now() + Duration::from_secs(10);
        while executor.task_exit(&task, None).unwrap().is_none() {
            assert!(Instant::now() < deadline, "{task} did not finish");
            executor
                .read_output(&task, None, Some(Duration::from_secs(1)), None)
                .await
                .unwrap();
        }
    }
    // Other tests of this binary run in parallel and open descriptors too;
    // forty leaked cgroup handles would be far above this margin.
    let after = open_fds();
    assert!(
        after < before + 20,
        "{before} descriptors before, {after} after 40 tasks"
    );
}
