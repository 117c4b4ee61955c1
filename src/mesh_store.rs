//! The context's meshes, behind generational ids that are never reused.

use crate::error::{Error, ErrorKind, Result};
use crate::mesh::Mesh;
use crate::mesh_id::MeshId;
use parking_lot::{RwLock, RwLockReadGuard};

/// One slot: its current generation and the mesh living there, if any.
#[derive(Debug, Default)]
struct Slot {
    generation: u32,
    mesh: Option<RwLock<Mesh>>,
}

/// Meshes by slot, each behind its own lock so that updating one mesh never blocks queries on another.
///
/// Lock order: the slot table, then one mesh. Creating or destroying a mesh takes the table exclusively.
#[derive(Debug)]
pub struct MeshStore {
    context: u32,
    slots: RwLock<Vec<Slot>>,
    free: parking_lot::Mutex<Vec<u32>>,
}

/// A read view of the slot table: meshes can be looked up but not created or destroyed while it lives.
pub struct MeshTable<'a> {
    context: u32,
    slots: RwLockReadGuard<'a, Vec<Slot>>,
}

impl MeshStore {
    /// An empty store for the context tagged `context`.
    pub fn new(context: u32) -> Self {
        Self {
            context,
            slots: RwLock::new(Vec::new()),
            free: Default::default(),
        }
    }

    /// Adds a mesh and returns its id.
    pub fn insert(&self, mesh: Mesh) -> Result<MeshId> {
        let mut slots = self.slots.write();
        let index = match self.free.lock().pop() {
            Some(i) => i as usize,
            None => {
                if slots.len() >= u32::MAX as usize - 1 {
                    return Err(Error::out_of_memory("a mesh slot"));
                }
                slots
                    .try_reserve(1)
                    .map_err(|_| Error::out_of_memory("a mesh slot"))?;
                slots.push(Slot {
                    generation: 1,
                    mesh: None,
                });
                slots.len() - 1
            }
        };
        let slot = &mut slots[index];
        slot.mesh = Some(RwLock::new(mesh));
        Ok(MeshId {
            index1: index as u32 + 1,
            context: self.context,
            generation: slot.generation,
        })
    }

    /// Removes a mesh; its id (and every older id of its slot) is stale from now on.
    pub fn remove(&self, id: MeshId) -> Result<Mesh> {
        let mut slots = self.slots.write();
        let index = check_id(self.context, &slots, id)?;
        let slot = &mut slots[index];
        let mesh = slot.mesh.take().expect("checked live").into_inner();
        // A slot whose generation would wrap is retired, so an id is never handed out twice.
        if slot.generation < u32::MAX {
            slot.generation += 1;
            self.free.lock().push(index as u32);
        }
        Ok(mesh)
    }

    /// Locks the slot table for lookups.
    pub fn table(&self) -> MeshTable<'_> {
        MeshTable {
            context: self.context,
            slots: self.slots.read(),
        }
    }
}

impl MeshTable<'_> {
    /// The slot index of a live mesh, or why `id` does not name one.
    pub fn resolve(&self, id: MeshId) -> Result<usize> {
        check_id(self.context, &self.slots, id)
    }

    /// The mesh in a slot returned by [`MeshTable::resolve`].
    pub fn slot(&self, index: usize) -> &RwLock<Mesh> {
        self.slots[index]
            .mesh
            .as_ref()
            .expect("resolved slot is live")
    }

    /// The mesh named by `id`.
    pub fn get(&self, id: MeshId) -> Result<&RwLock<Mesh>> {
        Ok(self.slot(self.resolve(id)?))
    }
}

fn check_id(context: u32, slots: &[Slot], id: MeshId) -> Result<usize> {
    if id.is_null() {
        return Err(Error::invalid("null mesh id"));
    }
    if id.context != context {
        return Err(Error::invalid(format!(
            "mesh id belongs to another context (tag {}, this context is {})",
            id.context, context
        )));
    }
    // A non-null id with index1 == 0 is malformed, not "slot -1".
    let Some(index) = (id.index1 as usize).checked_sub(1) else {
        return Err(Error::invalid("malformed mesh id (index1 is 0)"));
    };
    match slots.get(index) {
        Some(slot) if slot.generation == id.generation && slot.mesh.is_some() => Ok(index),
        Some(_) => Err(Error::new(
            ErrorKind::StaleHandle,
            format!("mesh {}:{} was destroyed", id.index1, id.generation),
        )),
        None => Err(Error::invalid(format!(
            "mesh {}:{} was never created",
            id.index1, id.generation
        ))),
    }
}
