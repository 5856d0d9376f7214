//! Escaping for each medium a report is written in, one function each.
//!
//! Runs and baselines may come from a stranger's CI job: every string of
//! theirs that reaches an output goes through the function of that
//! output's medium, so it is shown as text and never acts as markup, a
//! link, a mention or a terminal control sequence. Names are already plain
//! words ([`crate::name`]); free text (stderr lines, check details, CPU
//! models, versions, commands) is what these are for.

/// The first character of `s` that would act instead of showing in a
/// one-line field (a CPU model, a version): a control character (a line
/// break forges a line of a report) or a bidirectional-text control
/// (U+202E shows what follows reversed). Such a field is refused where it
/// is read.
pub fn acting_char(s: &str) -> Option<char> {
    s.chars().find(|&c| c.is_control() || bidi(c))
}

/// A bidirectional-text control, or a Unicode line or paragraph
/// separator: shown, it changes how the text around it reads.
fn bidi(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}'
    ) || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Why a one-line field read from a file is refused ([`acting_char`]),
/// naming the field.
pub fn check_line(field: &str, s: &str) -> Result<(), ActingChar> {
    match acting_char(s) {
        None => Ok(()),
        Some(c) => Err(ActingChar {
            field: field.to_string(),
            c,
        }),
    }
}

/// A one-line field holding a character that acts on a terminal or a
/// page ([`check_line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActingChar {
    pub field: String,
    pub c: char,
}

impl std::fmt::Display for ActingChar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: holds U+{:04X}, a line break, control or bidirectional-text character: refused (edited by hand?)",
            self.field, self.c as u32
        )
    }
}

impl std::error::Error for ActingChar {}

/// Text for HTML element content and attribute values (quoted with `"` or
/// `'`).
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {
                out.push_str(&format!("&#x{:x};", c as u32))
            }
            // An entity would still reorder the text: shown as its name.
            c if bidi(c) => out.push_str(&format!("U+{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Text for GitHub Markdown, as a code span: inside one, GitHub renders no
/// emphasis, link, autolink, image, mention, emoji or HTML. The span's
/// fence is longer than any run of backticks in `s`; a `|` is escaped so
/// that a table cell stays one cell; line breaks become spaces.
pub fn markdown(s: &str) -> String {
    let text: String = s
        .chars()
        .map(|c| if c.is_control() || bidi(c) { ' ' } else { c })
        .collect::<String>()
        .replace('|', "\\|");
    if text.trim().is_empty() {
        return String::new();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A space between fence and text when the text starts or ends with a
    // backtick (CommonMark strips one such space on each side).
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Text for a terminal: every control character but newline and tab (C0,
/// DEL and C1, which start escape sequences) is shown as an escape
/// (`\x1b`, `\u{9b}`) instead of being sent.
pub fn terminal(s: &str) -> String {
    if !s
        .chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || bidi(c))
    {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() || bidi(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// The first `n` characters of `s` (a commit's short form): never cuts a
/// character in two, whatever `s` holds.
pub fn prefix(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidirectional_controls_never_act_in_any_medium() {
        let s = "cpu \u{202e}evil";
        assert_eq!(acting_char(s), Some('\u{202e}'));
        assert_eq!(acting_char("two\nlines"), Some('\n'));
        assert_eq!(acting_char("Intel(R) Xeon(R) 2.2GHz"), None);
        for out in [html(s), markdown(s), terminal(s)] {
            assert!(!out.contains('\u{202e}'), "{out}");
        }
        assert!(check_line("testbed.cpu_model", s)
            .unwrap_err()
            .to_string()
            .starts_with("testbed.cpu_model: holds U+202E"));
    }

    #[test]
    fn html_leaves_no_markup_and_no_attribute_breakout() {
        let p = "x\"><img src=x onerror=alert(1)>'&\u{7}";
        let e = html(p);
        assert_eq!(
            e,
            "x&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&#39;&amp;&#x7;"
        );
        assert!(!e.contains(['<', '>', '"', '\'']));
    }

    #[test]
    fn markdown_is_a_code_span_that_cannot_be_closed_from_inside() {
        assert_eq!(markdown("ticket"), "`ticket`");
        assert_eq!(markdown("a|b"), "`a\\|b`");
        assert_eq!(markdown("x ` y"), "``x ` y``");
        assert_eq!(markdown("`x``"), "``` `x`` ```");
        assert_eq!(markdown("two\nlines"), "`two lines`");
        assert_eq!(markdown(""), "");
        for hostile in [
            "@org/team [x](http://evil) ![i](http://e/i.png) <b>b</b> :tada: **bold** www.evil.com",
            "```\n# heading\n```",
        ] {
            let m = markdown(hostile);
            let fence = m.chars().take_while(|c| *c == '`').count();
            let inner = &m[fence..m.len() - fence];
            // The fence never appears inside, so the span holds all of it.
            assert!(!inner.contains(&"`".repeat(fence)), "{m}");
            assert!(!m.contains('\n'));
        }
    }

    #[test]
    fn terminal_shows_control_characters_instead_of_sending_them() {
        assert_eq!(terminal("ok\tfine\n"), "ok\tfine\n");
        assert_eq!(
            terminal("a\u{1b}[2Jb\r\u{9b}31m\u{7f}"),
            "a\\x1b[2Jb\\x0d\\u{9b}31m\\x7f"
        );
        assert!(!terminal("\u{1b}]8;;http://evil\u{7}").contains('\u{1b}'));
    }

    #[test]
    fn prefix_never_splits_a_character() {
        assert_eq!(prefix("0123456789abcdef", 12), "0123456789ab");
        assert_eq!(prefix("aéééééééééééé", 12), "aééééééééééé");
        assert_eq!(prefix("short", 12), "short");
    }
}
