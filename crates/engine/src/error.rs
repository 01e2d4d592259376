//! The engine's one error type. Each variant maps to one Python exception class in `crates/py`.

use thiserror::Error;

/// Everything that can go wrong in the engine, by cause.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum EngineError {
    /// The scenario is invalid: `path` is the dotted key (e.g. `path.forward.rate`), empty for the
    /// document as a whole; `message` says what is wrong and what is allowed.
    #[error("{}", display_config(path, message))]
    Config { path: String, message: String },
    /// An internal invariant broke: a bug in the engine, never the user's fault.
    #[error("internal error: {0}")]
    Invariant(String),
}

fn display_config(path: &str, message: &str) -> String {
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

impl EngineError {
    /// A configuration error at `path`.
    pub fn config(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Config { path: path.into(), message: message.into() }
    }
}
