//! Provider declaration envelopes: what `ToolRegistry::request_tools` puts in
//! each provider's request, snapshotted for three kinds of tool.

use dsh_tools::{
    tool_declaration, ContentBlock, Dialect, SchemaProp, SchemaSpec, ToolAnnotations,
    ToolCallPresentation, ToolContext, ToolDefinition, ToolFormat, ToolFuture, ToolRegistry,
    UnknownToolFormat,
};
use serde_json::{json, Value};
use std::time::Duration;

/// A raw definition with every host-only knob set, so that a leak would show.
struct Spec {
    name: &'static str,
    description: &'static str,
    spec: SchemaSpec,
    annotations: ToolAnnotations,
}

impl ToolDefinition for Spec {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        self.description
    }

    fn parameters(&self, dialect: Dialect) -> Value {
        self.spec.to_json_schema(dialect)
    }

    fn spec(&self) -> Option<&SchemaSpec> {
        Some(&self.spec)
    }

    fn execute(&self, _args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async { Ok(vec![ContentBlock::text("done")]) })
    }

    fn present_call(&self, _args: &Value) -> Option<ToolCallPresentation> {
        Some(ToolCallPresentation::generic(self.name, &json!({})))
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations.clone()
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(90))
    }

    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        true
    }
}

/// Required, optional, enum, default and nested properties, and annotations.
fn deploy() -> Spec {
    Spec {
        name: "deploy",
        description: "Deploys a service.",
        spec: SchemaSpec::new()
            .prop(
                "service",
                SchemaProp::string()
                    .required()
                    .description("Service to deploy"),
            )
            .prop(
                "strategy",
                SchemaProp::string()
                    .one_of(["rolling", "recreate"])
                    .default_value("rolling"),
            )
            .prop(
                "replicas",
                SchemaProp::integer()
                    .description("Instances to run")
                    .default_value(1),
            )
            .prop(
                "resources",
                SchemaProp::object(
                    SchemaSpec::new()
                        .prop("memory_mb", SchemaProp::integer().required())
                        .prop("disk_gb", SchemaProp::number()),
                )
                .closed()
                .description("Resource limits"),
            ),
        annotations: ToolAnnotations {
            title: Some("Deploy a service".into()),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
            ..ToolAnnotations::default()
        },
    }
}

/// No arguments, no annotations.
fn clock() -> Spec {
    Spec {
        name: "clock",
        description: "Tells the time.",
        spec: SchemaSpec::new(),
        annotations: ToolAnnotations::default(),
    }
}

/// A free-form object property: strict mode cannot express it.
fn annotate() -> Spec {
    Spec {
        name: "annotate",
        description: "Attaches metadata to a file.",
        spec: SchemaSpec::new()
            .prop("path", SchemaProp::string().required())
            .prop(
                "metadata",
                SchemaProp::any_object().description("Any JSON object"),
            ),
        annotations: ToolAnnotations::read_only(),
    }
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    for tool in [deploy(), clock(), annotate()] {
        registry.register(tool).unwrap();
    }
    registry
}

fn snapshot_name(format: ToolFormat) -> String {
    format!("request_tools_{}", format.as_str().replace('-', "_"))
}

#[test]
fn request_tools_snapshots() {
    let registry = registry();
    for format in ToolFormat::ALL {
        insta::assert_json_snapshot!(snapshot_name(format), registry.request_tools(format));
    }
}

#[test]
fn declarations_are_per_tool_in_registration_order() {
    let registry = registry();
    for format in ToolFormat::ALL {
        let declarations = registry.tool_declarations(format);
        let expected: Vec<Value> = [deploy(), clock(), annotate()]
            .iter()
            .map(|t| tool_declaration(t, format))
            .collect();
        assert_eq!(declarations, expected, "{format}");
        let tools = registry.request_tools(format);
        let listed = match format {
            ToolFormat::Gemini => {
                assert_eq!(tools.as_array().unwrap().len(), 1);
                tools[0]["functionDeclarations"].clone()
            }
            _ => tools,
        };
        assert_eq!(listed, Value::Array(expected), "{format}");
    }
}

#[test]
fn strict_is_what_the_schema_says_and_false_elsewhere() {
    let strict_of = |tool: &Spec, format: ToolFormat| {
        let d = tool_declaration(tool, format);
        match format {
            ToolFormat::OpenAiChat | ToolFormat::OpenAiChatStrict => d["function"].clone(),
            _ => d,
        }
    };
    for format in [
        ToolFormat::OpenAiChatStrict,
        ToolFormat::OpenAiResponsesStrict,
    ] {
        let d = strict_of(&deploy(), format);
        assert_eq!(d["strict"], json!(true), "{format}");
        assert_eq!(d["parameters"], deploy().parameters(Dialect::OpenAiStrict));
        // The fallback: plain OpenAI parameters, not a closed object only `{}` fits.
        let d = strict_of(&annotate(), format);
        assert_eq!(d["strict"], json!(false), "{format}");
        assert_eq!(d["parameters"], annotate().parameters(Dialect::OpenAi));
        assert_eq!(
            Some(false),
            annotate().schema(Dialect::OpenAiStrict).strict,
            "the envelope follows ToolSchema.strict"
        );
    }
    for format in [ToolFormat::OpenAiChat, ToolFormat::OpenAiResponses] {
        for tool in [deploy(), clock(), annotate()] {
            let d = strict_of(&tool, format);
            assert_eq!(d["strict"], json!(false), "{format} {}", tool.name);
            assert_eq!(d["parameters"], tool.parameters(Dialect::OpenAi));
        }
    }
}

#[test]
fn gemini_omits_parameters_only_for_a_tool_without_arguments() {
    assert_eq!(
        tool_declaration(&clock(), ToolFormat::Gemini),
        json!({"name": "clock", "description": "Tells the time."})
    );
    let d = tool_declaration(&deploy(), ToolFormat::Gemini);
    assert_eq!(d["parameters"], deploy().parameters(Dialect::Gemini));
    // Every other format keeps an (empty) object schema: they require one.
    assert_eq!(
        tool_declaration(&clock(), ToolFormat::Anthropic)["input_schema"],
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn mcp_carries_title_and_annotations_only_when_set() {
    let d = tool_declaration(&deploy(), ToolFormat::Mcp);
    assert_eq!(d["title"], json!("Deploy a service"));
    assert_eq!(
        d["annotations"],
        serde_json::to_value(deploy().annotations()).unwrap()
    );
    let d = tool_declaration(&clock(), ToolFormat::Mcp);
    assert_eq!(
        d,
        json!({
            "name": "clock",
            "description": "Tells the time.",
            "inputSchema": {"type": "object", "properties": {}}
        })
    );
    let d = tool_declaration(&annotate(), ToolFormat::Mcp);
    assert!(d.get("title").is_none());
    assert_eq!(d["annotations"], json!({"readOnlyHint": true}));
}

fn keys(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let here = format!("{path}/{k}");
                out.push(here.clone());
                keys(v, &here, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, path, out)),
        _ => {}
    }
}

#[test]
fn nothing_host_only_in_any_envelope() {
    const HOST_ONLY: &[&str] = &[
        "timeout",
        "timeoutMs",
        "timeout_ms",
        "concurrencySafe",
        "concurrency_safe",
        "isConcurrencySafe",
        "presentation",
        "present_call",
        "kind",
        "annotations",
        "title",
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
        "execute",
    ];
    let registry = registry();
    for format in ToolFormat::ALL {
        let mut found = Vec::new();
        keys(&registry.request_tools(format), "", &mut found);
        for key in &found {
            let last = key.rsplit('/').next().unwrap();
            // MCP's tools/list carries the hints by design, and only there.
            let allowed = format == ToolFormat::Mcp
                && (key == "/title" || key == "/annotations" || key.starts_with("/annotations/"));
            assert!(
                allowed || !HOST_ONLY.contains(&last),
                "{format}: host-only key {key}"
            );
        }
        let text = registry.request_tools(format).to_string();
        assert!(
            !text.contains("90000") && !text.contains("\"90\""),
            "{format}"
        );
    }
}

#[test]
fn top_level_keys_are_the_providers() {
    let deploy = deploy();
    let top = |format| -> Vec<String> {
        tool_declaration(&deploy, format)
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(
        top(ToolFormat::Mcp),
        ["name", "title", "description", "inputSchema", "annotations"]
    );
    assert_eq!(
        top(ToolFormat::Anthropic),
        ["name", "description", "input_schema"]
    );
    for format in [ToolFormat::OpenAiChat, ToolFormat::OpenAiChatStrict] {
        assert_eq!(top(format), ["type", "function"]);
        let function: Vec<_> = tool_declaration(&deploy, format)["function"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(function, ["name", "description", "parameters", "strict"]);
    }
    for format in [
        ToolFormat::OpenAiResponses,
        ToolFormat::OpenAiResponsesStrict,
    ] {
        assert_eq!(
            top(format),
            ["type", "name", "description", "parameters", "strict"]
        );
    }
    assert_eq!(
        top(ToolFormat::Gemini),
        ["name", "description", "parameters"]
    );
}

#[test]
fn the_spec_shape_is_unchanged() {
    let registry = registry();
    let schemas = serde_json::to_value(registry.schemas(Dialect::Mcp)).unwrap();
    assert_eq!(
        schemas[1],
        json!({
            "name": "clock",
            "description": "Tells the time.",
            "parameters": {"type": "object", "properties": {}}
        })
    );
}

#[test]
fn names_round_trip() {
    let names: Vec<_> = ToolFormat::ALL.iter().map(|f| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "mcp",
            "anthropic",
            "openai",
            "openai-strict",
            "openai-responses",
            "openai-responses-strict",
            "gemini"
        ]
    );
    for format in ToolFormat::ALL {
        assert_eq!(format.as_str().parse::<ToolFormat>(), Ok(format));
        assert_eq!(format.to_string(), format.as_str());
        assert_eq!(
            format.as_str().to_uppercase().parse::<ToolFormat>(),
            Ok(format)
        );
    }
    assert_eq!(ToolFormat::default(), ToolFormat::Mcp);
    let err = "plain".parse::<ToolFormat>().unwrap_err();
    assert_eq!(err, UnknownToolFormat("plain".into()));
    for name in names {
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn dialects() {
    use ToolFormat::*;
    for (format, dialect) in [
        (Mcp, Dialect::Mcp),
        (Anthropic, Dialect::Anthropic),
        (OpenAiChat, Dialect::OpenAi),
        (OpenAiChatStrict, Dialect::OpenAiStrict),
        (OpenAiResponses, Dialect::OpenAi),
        (OpenAiResponsesStrict, Dialect::OpenAiStrict),
        (Gemini, Dialect::Gemini),
    ] {
        assert_eq!(format.dialect(), dialect);
        assert_eq!(format.is_strict(), dialect == Dialect::OpenAiStrict);
    }
}

#[test]
fn a_subset_is_wrapped_like_the_whole() {
    let one = vec![tool_declaration(&clock(), ToolFormat::Gemini)];
    assert_eq!(
        ToolFormat::Gemini.request_tools(one.clone()),
        json!([{"functionDeclarations": one}])
    );
    assert_eq!(ToolFormat::Anthropic.request_tools(Vec::new()), json!([]));
}
