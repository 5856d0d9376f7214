//! The regression gate (in progress).
