//! The error taxonomy shared by every layer; the C API maps each kind to a fixed `TrocarStatus` value.

use std::fmt;

/// What went wrong, coarse enough to branch on. Later versions may add kinds (the C API's statuses likewise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A required pointer was NULL.
    NullPointer,
    /// An argument is malformed: NaN/Inf, non-positive radius, entry == tip, a foreign handle.
    InvalidArgument,
    /// An index or range lies outside what it refers to.
    OutOfRange,
    /// A handle whose object was destroyed.
    StaleHandle,
    /// The requested backend cannot run on this machine.
    BackendUnavailable,
    /// The GPU device was lost or a submission failed.
    DeviceLost,
    /// An allocation failed.
    OutOfMemory,
    /// A panic was caught at the C boundary.
    Panic,
    /// The results object holds a submitted batch that has not been collected yet.
    Pending,
    /// A submitted batch found more hits than its buffers held and a mesh of it was updated or destroyed before it
    /// could be re-run.
    ResultsOverflow,
}

/// An error with a human-readable detail message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The category, stable across versions.
    pub kind: ErrorKind,
    /// What exactly failed, for logs and `trocar_last_error_message`.
    pub message: String,
}

impl Error {
    /// Builds an error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// Shorthand for [`ErrorKind::InvalidArgument`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    /// Shorthand for [`ErrorKind::OutOfRange`].
    pub fn out_of_range(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::OutOfRange, message)
    }

    /// Shorthand for [`ErrorKind::OutOfMemory`] when reserving `what` failed.
    pub fn out_of_memory(what: &str) -> Self {
        Self::new(ErrorKind::OutOfMemory, format!("could not allocate {what}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;
