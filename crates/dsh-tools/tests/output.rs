//! A tool with a whole output (structured content, its own failure
//! content), as a proxied MCP tool has: both reach the result unchanged.

use dsh_tools::{
    ContentBlock, Dialect, ErrorCode, OutputFuture, ToolArguments, ToolContext, ToolDefinition,
    ToolExecution, ToolFuture, ToolOutput, ToolRegistry,
};
use serde_json::{json, Value};
use std::sync::Arc;

struct Whole;

impl ToolDefinition for Whole {
    fn name(&self) -> &str {
        "whole"
    }
    fn description(&self) -> &str {
        "Returns structured content, or fails with its own content."
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object", "properties": {"fail": {"type": "boolean"}}})
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async { Ok(vec![ContentBlock::text("content only")]) })
    }
    fn has_output(&self) -> bool {
        true
    }
    fn execute_output(
        self: Arc<Self>,
        args: ToolArguments,
        _ctx: ToolContext,
    ) -> OutputFuture<'static> {
        Box::pin(async move {
            let fail = args.as_value().and_then(|a| a.get("fail")) == Some(&Value::Bool(true));
            Ok(ToolOutput {
                content: vec![ContentBlock::text(if fail {
                    "upstream says no"
                } else {
                    "42"
                })],
                structured_content: (!fail).then(|| json!({"answer": 42})),
                is_error: fail,
            })
        })
    }
}

#[tokio::test]
async fn structured_content_and_a_tools_own_failure_reach_the_result() {
    let registry = ToolRegistry::new();
    registry.register(Whole).unwrap();
    let ok = registry
        .execute(ToolExecution::new("c1", "whole", json!({})))
        .await;
    assert!(!ok.is_error);
    assert_eq!(ok.structured_content, Some(json!({"answer": 42})));
    assert_eq!(ok.text(), "42");
    assert_eq!(
        serde_json::to_value(&ok).unwrap()["structuredContent"],
        json!({"answer": 42})
    );

    let failed = registry
        .execute(ToolExecution::new("c2", "whole", json!({"fail": true})))
        .await;
    assert!(failed.is_error);
    assert_eq!(failed.code(), Some(ErrorCode::ToolError));
    // The tool's own words, without our `Error: ` prefix.
    assert_eq!(failed.text(), "upstream says no");
    assert_eq!(failed.structured_content, None);
}
