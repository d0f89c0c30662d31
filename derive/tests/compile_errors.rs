//! What cannot be a structural schema, or is misspelled, fails to compile
//! with an error naming it and pointing at it (`tests/ui/*.rs`, each
//! beside the compiler's expected output).

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
