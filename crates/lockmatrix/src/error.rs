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

/// A system call's error with what was being done (`removing DIR`,
/// `running cargo`), which it prints before the error as its source.
#[derive(Debug, thiserror::Error)]
#[error("{doing}")]
pub struct Doing {
    doing: String,
    #[source]
    error: std::io::Error,
}

/// `doing` as the context of an I/O error: `.map_err(doing(...))`.
pub fn doing(doing: String) -> impl FnOnce(std::io::Error) -> Doing {
    move |error| Doing { doing, error }
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
        let e = super::doing("removing /x".into())(std::io::Error::other("busy"));
        assert_eq!(chain(&e), "removing /x: busy");
    }
}
