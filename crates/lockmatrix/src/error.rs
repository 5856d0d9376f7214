//! An error as the command line prints it: its own words, then each of
//! its sources', joined by `: ` (as `anyhow`'s `{:#}` prints a chain of
//! contexts). The library's errors are typed enums whose variants that
//! add context to a cause keep it as their `#[source]`: [`chain`] gives
//! their whole text where the library says it itself (a warning, a
//! refusal that lists several).

/// `e` and its sources, each after a `: `.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::chain;

    #[derive(Debug, thiserror::Error)]
    #[error("reading x.json")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn chain_prints_as_anyhow_prints_a_context_chain() {
        let e = Outer(std::io::Error::other("disk on fire"));
        assert_eq!(chain(&e), "reading x.json: disk on fire");
        assert_eq!(chain(&std::io::Error::other("alone")), "alone");
    }
}
