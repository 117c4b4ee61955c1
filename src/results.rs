//! Query results, reused across steps so that a warmed-up query allocates nothing.

use crate::error::{Error, ErrorKind, Result};
use crate::haptic::Contact;
use crate::haptic::tool_contact::tool_contact;
use crate::haptic::view::HapticView;
use crate::mesh_id::MeshId;
use crate::mesh_store::MeshStore;
use crate::query::{Hit, QueryOutput};
use parking_lot::{Mutex, RwLockUpgradableReadGuard, RwLockWriteGuard};
use std::sync::{Arc, Weak};

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
    /// The context's meshes, read again for a query's contact; gone once the context is.
    meshes: Weak<MeshStore>,
    /// The haptic views of the meshes whose contacts were read: held, so that their meshes keep them current.
    views: Mutex<Vec<(MeshId, Arc<HapticView>)>>,
}

impl Results {
    pub(crate) fn new(context: u32, meshes: Weak<MeshStore>) -> Self {
        Self {
            context,
            outputs: Vec::new(),
            len: 0,
            scratch: Default::default(),
            pending: None,
            ran: None,
            meshes,
            views: Mutex::new(Vec::new()),
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

    /// The tool's contact with the organ for query `i` of the last run: the round tool (radius `s`, axis from
    /// the entry point to the tip, or to the new tip of a dynamic query: the tool at the end of the step,
    /// whatever the volume kind) measured by a [`crate::Tracker`]'s rule, once, as one segment: a tip inside
    /// is as deep as its distance to the nearest surface of the whole mesh, its penetration that depth plus the
    /// radius. `None` when the tool at the end of the step comes within its radius of no triangle.
    ///
    /// Computed on the mesh as the query read it: refused ([`ErrorKind::StaleHandle`]) once the mesh has been
    /// updated, cut or destroyed since. The first contact read on a mesh builds its haptic view (adjacency,
    /// windings and bounding hierarchy, as creating a tracker does), which the mesh then keeps current, as for a
    /// tracker, while this results object lives; each read then costs a few exact tests and two tree searches.
    pub fn contact(&self, i: usize) -> Result<Option<Contact>> {
        if self.is_pending() {
            return Err(Error::new(
                ErrorKind::Pending,
                "results object has a submitted batch: wait for it first",
            ));
        }
        let out = self.get(i).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "query index {i} but the last run answered {} queries",
                    self.len
                ),
            )
        })?;
        let query = &self.scratch.prepared[i];
        let id = query.mesh;
        let store = self.meshes.upgrade().ok_or_else(|| {
            Error::new(
                ErrorKind::StaleHandle,
                "the context of this results object was destroyed",
            )
        })?;
        let table = store.table();
        let lock = table.get(id)?;
        let mut mesh = lock.upgradable_read();
        if mesh.version() != out.mesh_version {
            return Err(Error::new(
                ErrorKind::StaleHandle,
                format!(
                    "mesh {}:{} changed since the query read it: read the contact before updating or cutting it",
                    id.index1, id.generation
                ),
            ));
        }
        let view = match mesh.attached_haptic_view() {
            Some(view) => view,
            None => {
                let mut writer = RwLockUpgradableReadGuard::upgrade(mesh);
                let view = writer.haptic_view();
                mesh = RwLockWriteGuard::downgrade_to_upgradable(writer);
                view?
            }
        };
        self.hold(id, &view);
        let topology = view.topology();
        let axis = query.volume.final_axis();
        let radius = query.volume.radius;
        let (contact, _) = topology
            .mirror
            .read(|positions| tool_contact(positions, &topology, axis, radius));
        drop(mesh);
        Ok(contact)
    }

    /// Holds `view`, mesh `id`'s, dropping those of destroyed meshes.
    fn hold(&self, id: MeshId, view: &Arc<HapticView>) {
        let mut views = self.views.lock();
        views.retain(|(_, v)| v.is_alive());
        match views.iter_mut().find(|(held, _)| *held == id) {
            Some((_, held)) => *held = view.clone(),
            None => views.push((id, view.clone())),
        }
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
