//! Which locks of a crate lockmatrix measures, and with which features:
//! what the crate declares in `[package.metadata.lockmatrix]`, else what
//! lockmatrix knows of the two crates people ask about most.
//!
//! ```toml
//! [package.metadata.lockmatrix]
//! features = ["lock_api"]          # enabled for the measurement
//! default-features = true          # the default
//! mutex = ["RawSpinlock"]          # types implementing lock_api::RawMutex
//! rwlock = ["rw::RawRwSpinlock"]   # ... lock_api::RawRwLock
//! ```
//!
//! Paths are from the crate's root, written as a user of the crate would
//! (`mutex::SpinMutex<()>` for a generic type). Rust cannot list a crate's
//! trait implementations, so the list is declared, not discovered.

use super::error::SubjectError;
use serde::Deserialize;

/// A crate's locks and the features they need.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    #[serde(default)]
    pub features: Vec<String>,
    #[serde(default = "yes", rename = "default-features")]
    pub default_features: bool,
    #[serde(default)]
    pub mutex: Vec<String>,
    #[serde(default)]
    pub rwlock: Vec<String>,
}

fn yes() -> bool {
    true
}

/// What lockmatrix knows of `name` when the crate declares nothing: spin
/// (0.9 to 0.12: the same types and features) and parking_lot.
pub fn known(name: &str) -> Option<Declared> {
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    match name {
        "spin" => Some(Declared {
            features: own(&[
                "lock_api",
                "spin_mutex",
                "ticket_mutex",
                "fair_mutex",
                "rwlock",
            ]),
            default_features: false,
            mutex: own(&[
                "mutex::SpinMutex<()>",
                "mutex::TicketMutex<()>",
                "mutex::FairMutex<()>",
            ]),
            rwlock: own(&["rwlock::RwLock<()>"]),
        }),
        "parking_lot" => Some(Declared {
            features: Vec::new(),
            default_features: true,
            mutex: own(&["RawMutex", "RawFairMutex"]),
            rwlock: own(&["RawRwLock"]),
        }),
        _ => None,
    }
}

impl Declared {
    /// Reads `package.metadata.lockmatrix` (as `cargo metadata` gives it).
    pub fn from_metadata(value: &serde_json::Value) -> Result<Declared, SubjectError> {
        let bad = SubjectError::Metadata;
        let d: Declared = serde_json::from_value(value.clone())
            .map_err(|e| bad(format!("[package.metadata.lockmatrix]: {e}")))?;
        for f in &d.features {
            if f.is_empty()
                || !f
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-/".contains(c))
            {
                return Err(bad(format!(
                    "[package.metadata.lockmatrix] features: `{}` is not a feature name",
                    f.escape_debug()
                )));
            }
        }
        for t in d.mutex.iter().chain(&d.rwlock) {
            type_name(t)?;
        }
        if d.mutex.is_empty() && d.rwlock.is_empty() {
            return Err(bad(
                "[package.metadata.lockmatrix] lists no `mutex` and no `rwlock`".into(),
            ));
        }
        Ok(d)
    }
}

/// The short name of a declared type: its last path segment, generics
/// dropped (`mutex::SpinMutex<()>` is `SpinMutex`). The type is pasted
/// into Rust code, so it is parsed as Rust (`syn`) and taken only if it is
/// a plain path from the crate's root whose generic arguments are types
/// of the same kind (or tuples of them, `()`): no leading `::`, no
/// `self`/`super`/`crate`, no `<T as Trait>`, lifetimes, constants,
/// macros or anything after the type.
pub fn type_name(path: &str) -> Result<&str, SubjectError> {
    let bad = || {
        SubjectError::LockType(format!(
            "lock type `{}`: expected a path from the crate's root, like `mutex::SpinMutex<()>`",
            crate::name::shown(path)
        ))
    };
    // Comments and other characters are refused before parsing: what is
    // pasted must be what was parsed.
    let alphabet = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_:<>(), ".contains(c));
    if path.is_empty() || path.len() > 200 || !alphabet {
        return Err(bad());
    }
    let ty: syn::Type = syn::parse_str(path).map_err(|_| bad())?;
    if !plain_type(&ty, true) {
        return Err(bad());
    }
    let head = path.split('<').next().unwrap_or("");
    Ok(head.rsplit("::").next().unwrap_or("").trim())
}

/// Whether `ty` is a plain path with plain generic arguments (`outer`:
/// the declared type itself, which must be a path, not a tuple).
fn plain_type(ty: &syn::Type, outer: bool) -> bool {
    match ty {
        syn::Type::Path(p) => {
            p.qself.is_none()
                && p.path.leading_colon.is_none()
                && p.path.segments.iter().all(|s| {
                    let id = s.ident.to_string();
                    !matches!(id.as_str(), "self" | "super" | "crate" | "Self")
                        && match &s.arguments {
                            syn::PathArguments::None => true,
                            syn::PathArguments::AngleBracketed(a) => {
                                a.colon2_token.is_none()
                                    && a.args.iter().all(|g| match g {
                                        syn::GenericArgument::Type(t) => plain_type(t, false),
                                        _ => false,
                                    })
                            }
                            syn::PathArguments::Parenthesized(_) => false,
                        }
                })
        }
        syn::Type::Tuple(t) if !outer => t.elems.iter().all(|e| plain_type(e, false)),
        syn::Type::Paren(p) if !outer => plain_type(&p.elem, false),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_read_and_checked() {
        let d = Declared::from_metadata(&serde_json::json!({
            "mutex": ["RawTinyLock", "ticket::Ticket<()>"],
        }))
        .unwrap();
        assert!(d.default_features);
        assert_eq!(type_name(&d.mutex[1]).unwrap(), "Ticket");
        for bad in [
            serde_json::json!({}),
            serde_json::json!({"mutex": ["a; fn evil() {}"]}),
            // Round four: balanced brackets that close the generated
            // struct and open another.
            serde_json::json!({"mutex": ["RawTinyLock<()>), pub struct Evil(u8"]}),
            serde_json::json!({"mutex": ["X"], "features": ["a\"b"]}),
            serde_json::json!({"mutex": ["X"], "typo": 1}),
        ] {
            assert!(Declared::from_metadata(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_plain_paths_with_plain_generic_arguments_are_types() {
        for good in [
            "RawTinyLock",
            "mutex::SpinMutex<()>",
            "rw::RwLock<(), a::B<u8>>",
            "x::Y<(u8, u16)>",
        ] {
            assert!(type_name(good).is_ok(), "{good}");
        }
        for bad in [
            "RawTinyLock<()>), pub struct Evil(u8",
            "::spin::Mutex",
            "crate::X",
            "super::X",
            "X<'a>",
            "X<3>",
            "<X as Y>::Z",
            "Fn(u8)",
            "()",
            "X Y",
            "X<()>,",
            "X // comment",
            "X<()>)",
            "",
        ] {
            let e = type_name(bad).unwrap_err().to_string();
            assert!(e.contains("expected a path"), "{bad}: {e}");
        }
    }

    #[test]
    fn known_crates_name_their_types() {
        let spin = known("spin").unwrap();
        let names: Vec<_> = spin.mutex.iter().map(|t| type_name(t).unwrap()).collect();
        assert_eq!(names, ["SpinMutex", "TicketMutex", "FairMutex"]);
        assert!(known("no-such-crate").is_none());
    }
}
