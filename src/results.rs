//! Query results, reused across steps so that a warmed-up query allocates nothing.

use crate::error::{Error, Result};
use crate::query::{Hit, QueryOutput};

/// Results of the last query or batch run with it. Views stay valid until it is queried again or dropped.
pub struct Results {
    pub(crate) context: u32,
    pub(crate) outputs: Vec<QueryOutput>,
    pub(crate) len: usize,
    /// Per-backend scratch (outcodes, per-chunk buffers), kept to avoid allocating per query.
    pub(crate) scratch: crate::backend::Scratch,
    /// The backend running a submitted batch not yet collected.
    pub(crate) pending: Option<std::sync::Arc<dyn crate::backend::Backend>>,
    /// The backend that ran (or runs) the last batch, `None` before the first and after a failed one.
    pub(crate) ran: Option<crate::backend::BackendKind>,
}

impl Results {
    pub(crate) fn new(context: u32) -> Self {
        Self {
            context,
            outputs: Vec::new(),
            len: 0,
            scratch: Default::default(),
            pending: None,
            ran: None,
        }
    }

    /// The backend that ran the last batch submitted with this object ([`BackendKind::Cpu`] or
    /// [`BackendKind::Gpu`], never `Auto`: an AUTO context says which of its two it chose), or runs it while it
    /// is pending. `None` before the first batch and after one the backend failed (results left empty); a
    /// refused batch leaves it as it was.
    ///
    /// [`BackendKind::Cpu`]: crate::BackendKind::Cpu
    /// [`BackendKind::Gpu`]: crate::BackendKind::Gpu
    pub fn backend(&self) -> Option<crate::backend::BackendKind> {
        self.ran
    }

    /// True between [`crate::Context::submit`] and [`crate::Context::wait`]: nothing is readable meanwhile.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Number of queries the last run answered (0 while a batch is pending).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first run.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Output of query `i` of the last run.
    pub fn get(&self, i: usize) -> Option<&QueryOutput> {
        self.outputs[..self.len].get(i)
    }

    /// Hits of query `i` of the last run.
    pub fn hits(&self, i: usize) -> Option<&[Hit]> {
        self.get(i).map(QueryOutput::hits)
    }

    /// Feedback vertices of query `i` of the last run.
    pub fn feedback(&self, i: usize) -> Option<&[[f32; 3]]> {
        self.get(i).map(QueryOutput::feedback)
    }

    /// Makes sure `n` outputs fit without growing the list later, so that [`Results::prepare`] cannot fail.
    pub(crate) fn reserve_outputs(&mut self, n: usize) -> Result<()> {
        let more = n.saturating_sub(self.outputs.len());
        self.outputs
            .try_reserve(more)
            .map_err(|_| Error::out_of_memory("the query outputs"))
    }

    /// Makes room for `n` cleared outputs (allocates only when the batch grows); nothing is readable until the
    /// run completes and sets `len`.
    pub(crate) fn prepare(&mut self, n: usize) {
        if self.outputs.len() < n {
            self.outputs.resize_with(n, QueryOutput::default);
        }
        self.len = 0;
        for o in &mut self.outputs[..n] {
            o.clear();
        }
    }
}

impl std::fmt::Debug for Results {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Results")
            .field("context", &self.context)
            .field("outputs", &&self.outputs[..self.len])
            .field("pending", &self.pending.is_some())
            .field("backend", &self.ran)
            .finish_non_exhaustive()
    }
}
