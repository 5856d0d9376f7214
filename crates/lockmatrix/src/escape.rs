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

/// Whether `c` ends a line where it is shown: a line feed or carriage
/// return, a vertical tab or form feed (a terminal moves down a line), NEL,
/// or a Unicode line or paragraph separator.
fn line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// `s` as one line: every line break in it shown as its escape (`\n`), so
/// that a value read from a file (a status's reason, a failure's text)
/// never starts a line of its own in the terminal or a report and cannot
/// forge one (`"x\n## FAKE PASS"`). The one rule for values shown inside
/// a line; [`terminal`] then escapes the other control characters.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains(line_break) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if line_break(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The most characters of a value taken from input that an error echoes
/// ([`echo`]); past it the value is named by its length alone, so that a
/// token or a password line (40 characters and up) is never shown, not
/// even cut.
pub const ECHO_LIMIT: usize = 24;

/// A value taken from input, as an error shows it: in backticks and on
/// one line when at most [`ECHO_LIMIT`] characters, else only its length
/// (`a value of 41 characters`).
pub fn echo(value: &str) -> String {
    let count = value.chars().count();
    if count > ECHO_LIMIT {
        format!("a value of {count} characters")
    } else {
        format!("`{}`", one_line(value))
    }
}

/// A parser's message (serde_json's, serde_norway's) about a file that
/// may be anything (`--config ~/.git-credentials`, a 5 MB string in a
/// run.json): the parser quotes what it found (`invalid type: string
/// "https://alice:ghp_...@github.com"`, `unknown field `root:$y$...``),
/// and that is the file's contents. Each quoted value of the part before
/// `, expected` (what was found) is replaced by its length, unless it is
/// what a key or a number looks like (lower-case letters, digits and `_`,
/// or digits, at most [`ECHO_LIMIT`]: `colour`, `70000`) or within two
/// edits of a word the message expects (a typo: `runer` for `runner`);
/// the expected part is the schema's own words and stays. A token, a
/// password line or a URL is never either. A message with no expected
/// part is lockmatrix's own (a name's or a commit's check, which shows at
/// most 80 characters of the value, escaped) and keeps its values. The
/// result is one line, at most 400 characters.
pub fn without_values(message: &str) -> String {
    let (found, expected) = match message.find(", expected ") {
        Some(i) => message.split_at(i),
        None => (message, ""),
    };
    let words = quoted(expected);
    let keep = |v: &str| {
        // `70000`, `1e9`, `NaN`, `-inf`: what a number field was given.
        let number = v.parse::<f64>().is_ok();
        // A field or variant name (`colour`, `vm`): what a key looks like.
        let identifier = v.starts_with(|c: char| c.is_ascii_lowercase())
            && v.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        let typo = v.chars().count() <= 32
            && !v.contains(line_break)
            && words.iter().any(|(_, w)| near(v, w));
        expected.is_empty()
            || ((1..=ECHO_LIMIT).contains(&v.len()) && (number || identifier))
            || typo
    };
    let mut out = String::new();
    let mut at = 0;
    for (range, value) in quoted(found) {
        out.push_str(&found[at..range.start]);
        if keep(value) {
            out.push_str(&found[range.clone()]);
        } else {
            out.push_str(&format!("of {} characters", value.chars().count()));
        }
        at = range.end;
    }
    out.push_str(&found[at..]);
    out.push_str(expected);
    let out = one_line(&out).into_owned();
    match out.char_indices().nth(400) {
        Some((i, _)) => format!("{}...", &out[..i]),
        None => out,
    }
}

/// The quoted values of `s` (`"..."` or `` `...` ``, a backslash escaping
/// the next character): each one's range with its quotes, and its text.
fn quoted(s: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = s[from..].find(['"', '`']).map(|i| i + from) {
        let quote = s.as_bytes()[open] as char;
        let body = open + 1;
        let mut escaped = false;
        let mut close = s.len();
        for (i, c) in s[body..].char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                c if c == quote && !escaped => {
                    close = body + i;
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = (close + 1).min(s.len());
        out.push((open..end, &s[body..close]));
        from = end;
    }
    out
}

/// Whether `a` is within two single-character edits of `b`.
fn near(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 2 {
        return false;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()] <= 2
}

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

/// `s` with the user-info of every URL in it removed
/// (`https://user:token@host/x` is `https://host/x`): for anything stored,
/// printed or rendered that may hold a URL from the command line.
///
/// The user-info ends at the last `@` of the URL after which a host
/// follows (host characters up to `/`, `?`, `#` or the URL's end), not at
/// the first `/`: a password with an unescaped `/`, `#` or `?`
/// (`https://u:a/b#c@host/x`) goes whole. A URL ends at white space or a
/// quote. An `@` in a path (`https://host/@scope/x`) is taken for the end
/// of user-info too: the message loses a piece of path, never a secret.
pub fn redact(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || "\"'`<>".contains(c))
            .unwrap_or(tail.len());
        let url = &tail[..end];
        out.push_str(without_user_info(url));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `url` (what follows `scheme://`) from its host on: after the last `@`
/// that a host follows, else whole.
fn without_user_info(url: &str) -> &str {
    let host_char = |c: char| c.is_ascii_alphanumeric() || "-._~%:[]!$&()*+,;=".contains(c);
    for (i, _) in url.rmatch_indices('@') {
        let after = &url[i + 1..];
        let host = after.split(['/', '?', '#']).next().unwrap_or("");
        if !host.is_empty() && host.chars().all(host_char) {
            return after;
        }
    }
    url
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
    fn a_value_on_one_line_never_starts_a_line() {
        let forged = "x\n## FAKE PASS\r\nPASS\u{2028}y\u{0b}z\u{85}";
        let shown = one_line(forged);
        assert_eq!(shown, "x\\n## FAKE PASS\\r\\nPASS\\u{2028}y\\u{b}z\\u{85}");
        assert!(!shown.contains(line_break), "{shown}");
        assert!(!terminal(&shown).contains(line_break));
        assert!(matches!(one_line("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn a_parsers_message_names_what_it_found_without_echoing_it() {
        let token = format!("ghp_{}", "a1".repeat(18));
        assert_eq!(token.len(), 40);
        for (message, shown) in [
            (
                format!("invalid type: string \"https://alice:{token}@github.com\", expected struct File"),
                "invalid type: string of 65 characters, expected struct File".to_string(),
            ),
            (
                format!("invalid type: string \"{token}\", expected struct File"),
                "invalid type: string of 40 characters, expected struct File".into(),
            ),
            (
                "unknown field `root:$y$j9T$abc:19000:0:99999:7:::`, expected `defaults` or `targets`".into(),
                "unknown field of 34 characters, expected `defaults` or `targets`".into(),
            ),
            (
                "unknown field `Hunter2!`, expected `defaults` or `targets`".into(),
                "unknown field of 8 characters, expected `defaults` or `targets`".into(),
            ),
            (
                "unknown field `colour`, expected `defaults` or `targets`".into(),
                "unknown field `colour`, expected `defaults` or `targets`".into(),
            ),
            (
                "unknown field `runer`, expected one of `name`, `runner`".into(),
                "unknown field `runer`, expected one of `name`, `runner`".into(),
            ),
            (
                "unknown variant `lower\nFORGED`, expected `lower` or `higher` at line 1 column 9".into(),
                "unknown variant of 12 characters, expected `lower` or `higher` at line 1 column 9".into(),
            ),
            (
                "invalid value: integer `70000`, expected u16".into(),
                "invalid value: integer `70000`, expected u16".into(),
            ),
            (
                "invalid value: floating point `NaN`, expected a fraction".into(),
                "invalid value: floating point `NaN`, expected a fraction".into(),
            ),
            (
                "missing field `name`".into(),
                "missing field `name`".into(),
            ),
            (
                "name `x\"><img`: has a character outside the alphabet".into(),
                "name `x\"><img`: has a character outside the alphabet".into(),
            ),
        ] {
            assert_eq!(without_values(&message), shown);
        }
        let huge = format!(
            "invalid type: string \"{}\", expected u32",
            "x".repeat(5 << 20)
        );
        assert_eq!(
            without_values(&huge),
            "invalid type: string of 5242880 characters, expected u32"
        );
        assert!(without_values(&"`a` ".repeat(1000)).len() < 410);
        assert_eq!(echo("x86 64"), "`x86 64`");
        assert_eq!(echo(&token), "a value of 40 characters");
        assert_eq!(echo("a\nb"), "`a\\nb`");
    }

    #[test]
    fn prefix_never_splits_a_character() {
        assert_eq!(prefix("0123456789abcdef", 12), "0123456789ab");
        assert_eq!(prefix("aéééééééééééé", 12), "aééééééééééé");
        assert_eq!(prefix("short", 12), "short");
    }
}
