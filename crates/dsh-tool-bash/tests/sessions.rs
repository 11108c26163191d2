//! Interactive sessions with real processes in real pseudo-terminals.

use std::fs;
use std::time::{Duration, Instant};

use dsh_tool_bash::{
    ErrorKind, Executor, ExecutorConfig, RunRequest, SessionRequest, SessionStart, TaskId,
};
use tokio_util::sync::CancellationToken;

fn executor() -> Executor {
    Executor::new(ExecutorConfig {
        cwd: std::env::temp_dir(),
        ..ExecutorConfig::default()
    })
    .unwrap()
}

fn gone(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
            state == 'Z' || state == 'X'
        }
    }
}

async fn start(ex: &Executor, command: &str) -> (TaskId, String) {
    let mut request = SessionRequest::new(command);
    request.yield_time = Some(Duration::from_secs(10));
    match ex.start_session(request, Some("agent")).await.unwrap() {
        SessionStart::Running { id, output } => (id, output),
        SessionStart::Finished { output } => panic!("ended at once: {output}"),
    }
}

async fn write(ex: &Executor, id: TaskId, input: &str) -> String {
    ex.write_session(
        &id.to_string(),
        Some("agent"),
        input,
        Some(Duration::from_secs(10)),
        &CancellationToken::new(),
    )
    .await
    .unwrap()
}

/// Reads until `check` holds on everything read so far (up to 10 s).
async fn read_until(ex: &Executor, id: TaskId, mut check: impl FnMut(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut all = String::new();
    loop {
        let text = ex
            .read_output(
                &id.to_string(),
                Some("agent"),
                Some(Duration::from_millis(500)),
                None,
            )
            .await
            .unwrap();
        all.push_str(&text);
        all.push('\n');
        if check(&all) {
            return all;
        }
        assert!(Instant::now() < deadline, "never came; read so far:\n{all}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_repl_keeps_its_state_over_several_writes() {
    let ex = executor();
    let (id, banner) = start(&ex, "python3 -q").await;
    assert!(banner.ends_with(">>> \n[status: running]"), "{banner}");
    let out = write(&ex, id, "x = 21<Enter>").await;
    assert!(out.starts_with(">>> x = 21\n"), "{out}");
    let out = write(&ex, id, "print(x * 2)\n").await;
    assert!(out.contains("print(x * 2)\n42\n>>> "), "{out}");
    let out = write(&ex, id, "<C-d>").await;
    let out = if out.contains("[status: completed") {
        out
    } else {
        read_until(&ex, id, |t| t.contains("[status: completed")).await
    };
    assert!(out.contains("[status: completed, exit code: 0]"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_d_ends_a_repl_and_the_exit_code_is_reported() {
    let ex = executor();
    let (id, _) = start(&ex, "python3 -q; echo repl-ended; exit 5").await;
    let out = write(&ex, id, "<C-d>").await;
    let all = read_until(&ex, id, |t| t.contains("[status: completed")).await;
    let all = format!("{out}\n{all}");
    assert!(all.contains("repl-ended"), "{all}");
    assert!(all.contains("[status: completed, exit code: 5]"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_prompt_is_answered() {
    let ex = executor();
    let (id, prompt) = start(&ex, r#"read -p "Name: " name; echo "hello, $name""#).await;
    assert!(prompt.starts_with("Name: \n"), "{prompt}");
    let out = write(&ex, id, "Ada<Enter>").await;
    let all = if out.contains("[status: completed") {
        out
    } else {
        format!(
            "{out}{}",
            read_until(&ex, id, |t| t.contains("[status: completed")).await
        )
    };
    assert!(all.contains("Name: Ada\nhello, Ada\n"), "{all}");
    assert!(all.contains("[status: completed, exit code: 0]"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_interrupts_a_running_loop() {
    let ex = executor();
    let (id, out) = start(&ex, "echo looping; while :; do sleep 0.05; done").await;
    assert!(out.starts_with("looping\n"), "{out}");
    let out = write(&ex, id, "<C-c>").await;
    let all = format!(
        "{out}{}",
        if out.contains("[status: killed") {
            String::new()
        } else {
            read_until(&ex, id, |t| t.contains("[status: killed")).await
        }
    );
    assert!(all.contains("[status: killed by SIGINT]"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_keeps_printing_while_other_calls_run() {
    let ex = executor();
    let (id, _) = start(
        &ex,
        "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.02; done",
    )
    .await;
    let other = ex.run(RunRequest::new("echo other")).await.unwrap();
    assert_eq!(other.model_text(), "other\n[exit code: 0]");
    let first = read_until(&ex, id, |t| t.contains("tick")).await;
    let later = read_until(&ex, id, |t| t.contains("tick")).await;
    let last_tick = |t: &str| -> u32 {
        t.lines()
            .filter_map(|l| l.strip_prefix("tick "))
            .filter_map(|n| n.trim().parse().ok())
            .max()
            .unwrap()
    };
    assert!(
        last_tick(&later) > last_tick(&first),
        "{first}\n---\n{later}"
    );
    assert!(ex
        .kill(&id.to_string(), Some("agent"))
        .await
        .unwrap()
        .starts_with("killed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_bar_shows_its_last_state_on_screen_and_in_text() {
    let ex = executor();
    let marker = std::env::temp_dir().join(format!("dsh-progress-{}", std::process::id()));
    let _ = fs::remove_file(&marker);
    let command = format!(
        r"for i in 10 50 100; do printf '\r\033[Kprogress %s%%' $i; sleep 0.05; done; echo; echo done; touch {}; sleep 60",
        marker.display()
    );
    let (id, first) = start(&ex, &command).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the bar never finished");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let text = if first.contains("done") {
        first
    } else {
        format!(
            "{first}{}",
            read_until(&ex, id, |t| t.contains("done")).await
        )
    };
    assert!(text.contains("progress 100%\ndone\n"), "{text}");
    assert!(!text.contains("progress 50%"), "{text}");
    let screen = ex
        .read_screen(&id.to_string(), Some("agent"), None)
        .await
        .unwrap();
    assert!(screen.starts_with("progress 100%\ndone"), "{screen}");
    assert!(screen.ends_with("[status: running]"), "{screen}");
    let _ = fs::remove_file(&marker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_and_timeout_leave_no_process() {
    let ex = executor();
    let (id, out) = start(&ex, "sleep 1000 & echo pid=$!; wait").await;
    let pid: i32 = out
        .lines()
        .find_map(|l| l.strip_prefix("pid="))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!gone(pid));
    let killed = ex.kill(&id.to_string(), Some("agent")).await.unwrap();
    assert_eq!(killed, format!("killed background task {id}"));
    assert!(gone(pid), "the session's sleep survived the kill");

    let mut request = SessionRequest::new("sleep 1000 & echo pid=$!; wait");
    request.timeout = Some(Duration::from_millis(300));
    request.yield_time = Some(Duration::from_secs(5));
    let SessionStart::Running { id, output } =
        ex.start_session(request, Some("agent")).await.unwrap()
    else {
        panic!("ended at once");
    };
    let pid: i32 = output
        .lines()
        .find_map(|l| l.strip_prefix("pid="))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let all = read_until(&ex, id, |t| t.contains("[status: killed")).await;
    assert!(all.contains("[timed out after 300ms]"), "{all}");
    assert!(gone(pid), "the session's sleep survived the timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_64_sessions_and_the_oldest_idle_one_is_closed_with_a_notice() {
    let ex = executor();
    let mut ids = Vec::new();
    for _ in 0..64 {
        let mut request = SessionRequest::new("echo up; sleep 1000");
        request.yield_time = Some(Duration::from_millis(100));
        match ex.start_session(request, Some("agent")).await.unwrap() {
            SessionStart::Running { id, .. } => ids.push(id),
            SessionStart::Finished { output } => panic!("{output}"),
        }
    }
    // Using the first one makes the second the least recently used.
    write(&ex, ids[0], "x").await;
    let (newest, _) = start(&ex, "echo newest; sleep 1000").await;
    let closed = read_until(&ex, ids[1], |t| t.contains("[status: killed")).await;
    assert!(
        closed.contains(&format!(
            "[session {} was closed to make room for a new one: at most 64 sessions run at once]",
            ids[1]
        )),
        "{closed}"
    );
    let alive = ex.task_exit(&ids[0].to_string(), Some("agent")).unwrap();
    assert_eq!(alive, None, "the recently used session was closed");
    assert_eq!(
        ex.task_exit(&newest.to_string(), Some("agent")).unwrap(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_belong_to_their_agent_and_plain_tasks_take_no_input() {
    let ex = executor();
    let (id, _) = start(&ex, "cat").await;
    let err = ex
        .write_session(
            &id.to_string(),
            Some("other"),
            "x",
            None,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ForeignTask);
    let err = ex
        .write_session(
            &id.to_string(),
            Some("agent"),
            "<C-1>",
            None,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let task = ex
        .spawn_background("sleep 100", None, Some("agent"))
        .unwrap();
    let err = ex
        .write_session(
            &task.to_string(),
            Some("agent"),
            "x",
            None,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NoInput);
    assert!(err.message().contains("tty: true"), "{}", err.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_ends_within_the_yield_gives_its_final_result() {
    let ex = executor();
    let request = SessionRequest::new("test -t 0 && echo on a terminal; exit 3");
    let out = ex.start_session(request, Some("agent")).await.unwrap();
    assert_eq!(
        out,
        SessionStart::Finished {
            output: "on a terminal\n[exit code: 3]".into()
        }
    );
}
