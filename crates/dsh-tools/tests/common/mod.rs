//! What several test files share: a realistic nested spec (the snapshot
//! tests, the validation tests and the bench) and a registry with an `echo` tool.
#![allow(dead_code)]

use dsh_tools::{SchemaProp, SchemaSpec};

/// A deployment tool's parameters: 9 properties, a nested closed object, an
/// array of objects, string and integer enums, defaults.
pub fn deploy_spec() -> SchemaSpec {
    SchemaSpec::new()
        .prop(
            "service",
            SchemaProp::string()
                .required()
                .description("Service to deploy"),
        )
        .prop(
            "version",
            SchemaProp::string()
                .required()
                .description("Image tag, e.g. v1.4.2"),
        )
        .prop(
            "strategy",
            SchemaProp::string()
                .one_of(["rolling", "recreate", "canary"])
                .default_value("rolling"),
        )
        .prop(
            "replicas",
            SchemaProp::integer()
                .description("Instances to run")
                .default_value(1),
        )
        .prop(
            "priority",
            SchemaProp::integer().enum_values([1.into(), 2.into(), 3.into()]),
        )
        .prop("dry_run", SchemaProp::boolean().description(""))
        .prop(
            "max_cpu",
            SchemaProp::number().description("CPU cores per instance"),
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
        )
        .prop(
            "servers",
            SchemaProp::array(SchemaProp::object(
                SchemaSpec::new()
                    .prop("host", SchemaProp::string().required())
                    .prop("port", SchemaProp::integer())
                    .prop("role", SchemaProp::string().one_of(["primary", "replica"])),
            ))
            .required()
            .description("Target servers"),
        )
        .prop("tags", SchemaProp::array(SchemaProp::string()))
}

/// Arguments of the `echo` tool.
#[derive(dsh_tools::ToolArgs, serde::Deserialize)]
pub struct EchoArgs {
    /// Text to echo.
    pub text: String,
}

/// A tool that takes no arguments.
#[derive(dsh_tools::ToolArgs, serde::Deserialize)]
pub struct NoArgs {}

/// A registry with one tool, `echo`, that returns its text.
pub fn echo_registry() -> dsh_tools::ToolRegistry {
    let registry = dsh_tools::ToolRegistry::new();
    registry
        .register(dsh_tools::define_tool(
            "echo",
            "Echoes text.",
            |args: EchoArgs, _| async move { Ok(vec![dsh_tools::ContentBlock::text(args.text)]) },
        ))
        .unwrap();
    registry
}
