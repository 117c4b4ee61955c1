//! The handle naming a mesh of a context, apart from the mesh itself so that the modules that only name meshes
//! (queries, trackers, the C types) need no `mesh.rs`.

/// A generational handle to a mesh of a [`crate::Context`]; all-zero is the null id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MeshId {
    /// Slot index plus one (0 means null).
    pub index1: u32,
    /// Tag of the context that made it, so ids from another context are refused.
    pub context: u32,
    /// Bumped each time the slot is reused, so destroyed ids are detected.
    pub generation: u32,
}

impl MeshId {
    /// The null id.
    pub const NULL: Self = Self {
        index1: 0,
        context: 0,
        generation: 0,
    };

    /// True for the all-zero id.
    pub fn is_null(&self) -> bool {
        *self == Self::NULL
    }
}
