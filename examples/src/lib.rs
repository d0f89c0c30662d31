//! Examples live in `examples/`; [`greeting`] is the custom resource some of
//! them share, defined in Rust.

pub mod greeting;

#[cfg(test)]
mod tests {
    /// The README's "Writing a controller" shows `workqueue_controller`
    /// literally: each of its code blocks is a piece of the example, in
    /// order, and together they are all of it but the module docs and the
    /// `use` lines. The integration test `controller` runs the example
    /// against the apiserver.
    #[test]
    fn the_readme_shows_the_controller_example_as_it_is() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
        let example = std::fs::read_to_string(format!("{root}/examples/examples/workqueue_controller.rs")).unwrap();
        let section = readme.split("\n## Writing a controller\n").nth(1).expect("a \"Writing a controller\" section");
        let section = section.split("\n## ").next().unwrap();
        let blocks: Vec<&str> = section.split("```rust\n").skip(1).map(|b| b.split("\n```").next().unwrap()).collect();
        assert!(blocks.len() >= 2, "{section}");
        let mut rest = example.as_str();
        let mut left = String::new();
        for block in &blocks {
            let at = rest.find(block).unwrap_or_else(|| panic!("not in the example, in this order:\n{block}"));
            left.push_str(&rest[..at]);
            rest = &rest[at + block.len()..];
        }
        left.push_str(rest);
        for line in left.lines().map(str::trim) {
            assert!(
                line.is_empty() || line.starts_with("//!") || line.starts_with("use "),
                "the README leaves out this line of the example: {line}"
            );
        }
    }

    /// The greeting operator is the whole program an operator author
    /// writes on the controller runtime (its CRD types are generated):
    /// kept within 200 lines, so that nothing the runtime should do creeps
    /// into it.
    #[test]
    fn the_greeting_operator_stays_within_200_lines() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/greeting_operator.rs");
        let lines = std::fs::read_to_string(path).unwrap().lines().count();
        assert!(lines <= 200, "greeting_operator.rs has {lines} lines");
    }
}
