//! GitHub Actions workflows rendered from targets.yaml (in progress).
