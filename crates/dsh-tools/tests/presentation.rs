//! The presentation vocabulary, typed `Tool` presenters and the generic fallback.

use dsh_tools::{
    ContentBlock, TerminalExit, Tool, ToolArgs, ToolCallKind, ToolCallPresentation, ToolContext,
    ToolError, ToolExecution, ToolExecutionResult, ToolRegistry, ToolResultPresentation,
    ToolTerminal,
};
use serde::Deserialize;
use serde_json::json;

#[derive(ToolArgs, Deserialize)]
struct ReadArgs {
    /// File to read.
    path: String,
}

struct ReadFile;

impl Tool for ReadFile {
    type Args = ReadArgs;

    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Reads a file."
    }

    async fn call(
        &self,
        args: ReadArgs,
        _ctx: ToolContext,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(vec![ContentBlock::text(format!(
            "contents of {}",
            args.path
        ))])
    }

    fn present_call(&self, args: &ReadArgs) -> Option<ToolCallPresentation> {
        Some(ToolCallPresentation {
            title: format!("Read {}", args.path),
            kind: ToolCallKind::Read,
            raw_input: Some(json!(args.path)),
            content: vec![],
            terminal: None,
            locations: Vec::new(),
        })
    }

    fn present_result(
        &self,
        args: &ReadArgs,
        result: &ToolExecutionResult,
    ) -> Option<ToolResultPresentation> {
        if args.path == "panic" {
            panic!("presenter bug");
        }
        Some(ToolResultPresentation {
            title: Some(format!(
                "Read {} ({} blocks)",
                args.path,
                result.content.len()
            )),
            ..Default::default()
        })
    }
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register_tool(ReadFile).unwrap();
    registry
}

#[tokio::test]
async fn typed_tool_runs_and_presents_with_typed_args() {
    let registry = registry();
    let args = json!({"path": "src/main.rs"});
    let result = registry
        .execute(ToolExecution::new("c1", "read_file", args.clone()))
        .await;
    assert_eq!(result.text(), "contents of src/main.rs");
    let pending = registry.present_call("read_file", &args);
    assert_eq!(pending.title, "Read src/main.rs");
    assert_eq!(pending.kind, ToolCallKind::Read);
    let done = registry.present_result("read_file", &args, &result);
    assert_eq!(done.title.as_deref(), Some("Read src/main.rs (1 blocks)"));
}

#[test]
fn invalid_args_fall_back_to_the_generic_presentation() {
    let registry = registry();
    let args = json!({"path": 7});
    assert_eq!(
        registry.present_call("read_file", &args),
        ToolCallPresentation::generic("read_file", &args)
    );
    let result = ToolExecutionResult::ok("c", vec![ContentBlock::text("raw")]);
    let done = registry.present_result("read_file", &args, &result);
    assert_eq!(done.title, None);
    assert_eq!(done.content, result.content);
}

#[test]
fn unknown_tools_and_panicking_presenters_fall_back() {
    let registry = registry();
    let args = json!({"q": 1});
    let generic = registry.present_call("nope", &args);
    assert_eq!(generic.title, "nope");
    assert_eq!(generic.kind, ToolCallKind::Other);
    assert_eq!(generic.raw_input, Some(args));
    let result = ToolExecutionResult::ok("c", vec![ContentBlock::text("x")]);
    let done = registry.present_result("read_file", &json!({"path": "panic"}), &result);
    assert_eq!(done, ToolResultPresentation::generic(&result.content));
}

#[test]
fn wire_names_are_camel_case() {
    let pending = ToolCallPresentation {
        title: "ls -la".into(),
        kind: ToolCallKind::Execute,
        raw_input: Some(json!("ls -la")),
        content: vec![ContentBlock::text("List files")],
        terminal: Some(ToolTerminal {
            cwd: Some("/work".into()),
            ..Default::default()
        }),
        locations: Vec::new(),
    };
    assert_eq!(
        serde_json::to_value(&pending).unwrap(),
        json!({
            "title": "ls -la",
            "kind": "execute",
            "rawInput": "ls -la",
            "content": [{"type": "text", "text": "List files"}],
            "terminal": {"cwd": "/work"}
        })
    );
    let done = ToolResultPresentation {
        title: None,
        content: vec![],
        terminal: Some(ToolTerminal {
            cwd: None,
            output: Some("a\nb".into()),
            exit: Some(TerminalExit::ExitCode(2)),
        }),
        locations: Vec::new(),
        diffs: Vec::new(),
    };
    assert_eq!(
        serde_json::to_value(&done).unwrap(),
        json!({"terminal": {"output": "a\nb", "exitCode": 2}})
    );
    let killed = ToolTerminal {
        exit: Some(TerminalExit::Signal("SIGKILL".into())),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_value(&killed).unwrap(),
        json!({"signal": "SIGKILL"})
    );
    let back: ToolTerminal = serde_json::from_value(json!({"cwd": "/", "exitCode": 0})).unwrap();
    assert_eq!(back.exit, Some(TerminalExit::ExitCode(0)));
    let image = ContentBlock::image("aGk=", "image/png");
    assert_eq!(
        serde_json::to_value(&image).unwrap(),
        json!({"type": "image", "data": "aGk=", "mimeType": "image/png"})
    );
    for (kind, name) in [
        (ToolCallKind::Read, "read"),
        (ToolCallKind::Edit, "edit"),
        (ToolCallKind::Delete, "delete"),
        (ToolCallKind::Move, "move"),
        (ToolCallKind::Search, "search"),
        (ToolCallKind::Execute, "execute"),
        (ToolCallKind::Fetch, "fetch"),
        (ToolCallKind::Other, "other"),
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(name));
    }
}
