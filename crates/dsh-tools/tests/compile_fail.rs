//! `#[derive(ToolArgs)]` refuses what it cannot describe, with the error at
//! the right place. Regenerate the expected output with `TRYBUILD=overwrite`.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
