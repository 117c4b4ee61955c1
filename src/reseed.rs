//! A tracker reseeded from clip-select results: the one place where the haptic layer reads query results,
//! so that neither depends on the other.

use crate::error::{Error, ErrorKind, Result};
use crate::geometry::tool_volume::SweptShape;
use crate::haptic::Tracker;
use crate::results::Results;

impl Tracker {
    /// Offers the hits of query `query_index` of `results` (any query on this tracker's mesh, static or dynamic,
    /// capsule or frustum, run at simulation rate) as starting points for the next update: each segment and end point starts from its
    /// nearest hit if that is closer than where it is. Safe to call from another thread than the updates';
    /// waits at most for an update to copy the previous candidates.
    pub fn reseed(&self, results: &Results, query_index: usize) -> Result<()> {
        if results.context != self.context_tag() {
            return Err(Error::invalid(
                "results object belongs to another context than the tracker",
            ));
        }
        if results.is_pending() {
            return Err(Error::new(
                ErrorKind::Pending,
                "results object has a submitted batch: wait for it before reseeding",
            ));
        }
        let output = results.get(query_index).ok_or_else(|| {
            Error::out_of_range(format!(
                "query index {query_index} but the last run answered {} queries",
                results.len()
            ))
        })?;
        // The prepared queries are those the outputs answer (a refused query changes neither).
        let query = *results.scratch.prepared.get(query_index).ok_or_else(|| {
            Error::out_of_range(format!(
                "query index {query_index} has no prepared query in the results"
            ))
        })?;
        if query.mesh != self.mesh() {
            return Err(Error::invalid(format!(
                "query {query_index} of the results was asked on another mesh than the tracker's"
            )));
        }
        let (entry, end) = match query.volume.shape {
            SweptShape::Segment(entry, tip) => (entry, tip),
            SweptShape::Triangle(entry, _, new_tip) => (entry, new_tip),
        };
        self.offer_seeds(output.hits(), entry, end)
    }
}
