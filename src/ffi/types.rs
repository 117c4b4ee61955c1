//! The plain-data C types of the API and their conversions to the core types.

use crate::backend::BackendKind;
use crate::error::{Error, Result};
use crate::geometry::{Tool, VolumeKind};
use crate::mesh_id::MeshId;
use crate::query::Query;
use glam::Vec3;

/// Which backend a context runs on (`TROCAR_BACKEND_*`).
pub type TrocarBackend = u32;
/// A hardware GPU when one is usable, otherwise the CPU (never a software GPU).
pub const TROCAR_BACKEND_AUTO: TrocarBackend = 0;
/// The multi-threaded CPU backend.
pub const TROCAR_BACKEND_CPU: TrocarBackend = 1;
/// The GPU compute backend.
pub const TROCAR_BACKEND_GPU: TrocarBackend = 2;

/// Which volume decides a hit (`TROCAR_VOLUME_*`).
pub type TrocarVolume = u32;
/// The round tool: within `radius` of the axis segment (static) or of the swept triangle (dynamic).
pub const TROCAR_VOLUME_CAPSULE: TrocarVolume = 0;
/// The paper's camera volumes: orthographic box (static), perspective frustum + 2 clip planes (dynamic).
pub const TROCAR_VOLUME_FRUSTUM: TrocarVolume = 1;

/// Largest coordinate magnitude (and radius) accepted: positions and tools beyond it are refused.
pub const TROCAR_MAX_COORDINATE: f32 = 1.0e6;

/// Most segments a tracker's tool line may be split into (`TrocarTrackerDef.segment_count`).
pub const TROCAR_MAX_TRACKER_SEGMENTS: u32 = 64;
/// Longest closest strip a tracker may keep per segment (`TrocarTrackerDef.max_strip_length`).
pub const TROCAR_MAX_STRIP_LENGTH: u32 = 1024;

/// Checked by `trocar_context_create`, so a def not made by `trocar_default_context_def` is refused.
const CONTEXT_DEF_COOKIE: u32 = 0x7C0C_A201;
/// Checked by `trocar_tracker_create`, so a def not made by `trocar_default_tracker_def` is refused.
const TRACKER_DEF_COOKIE: u32 = 0x7C0C_A202;

/// Options for `trocar_context_create`; get one from `trocar_default_context_def()`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrocarContextDef {
    /// Backend to run on (`TROCAR_BACKEND_AUTO` by default).
    pub backend: TrocarBackend,
    /// Threads the CPU backend may use, and the GPU backend to copy a large batch's answers into its queries'
    /// results; a position update of 65,536 vertices or more is split over them too. 0 = one per available core.
    pub cpu_threads: u32,
    /// Nonzero: `TROCAR_BACKEND_GPU` may use a software adapter (Mesa's lavapipe) when no hardware GPU exists;
    /// the environment variable `TROCAR_ALLOW_SOFTWARE_GPU=1` does the same.
    pub allow_software_gpu: u32,
    /// Set by `trocar_default_context_def`; do not change.
    pub internal_value: u32,
}

/// Options for `trocar_tracker_create`; get one from `trocar_default_tracker_def()`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrocarTrackerDef {
    /// Segments the tool line is split into, one dynamic point each: the separate contacts a non-convex organ
    /// may make along the tool (1 to `TROCAR_MAX_TRACKER_SEGMENTS`; default 4).
    pub segment_count: u32,
    /// Most triangles in one segment's closest strip (0 to `TROCAR_MAX_STRIP_LENGTH`; 0: no strip; default 32).
    pub max_strip_length: u32,
    /// Set by `trocar_default_tracker_def`; do not change.
    pub internal_value: u32,
}

/// A generational mesh id, passed by value; all-zero is the null id.
///
/// Error messages print it as `mesh index1:generation`: `mesh 1:1` is a context's first mesh, and once it is
/// destroyed the next mesh created in its slot is `mesh 1:2` (the old id then answers
/// `TROCAR_ERROR_STALE_HANDLE`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TrocarMeshId {
    /// Slot plus one; 0 in the null id. The first number in `mesh 1:1`.
    pub index1: u32,
    /// Tag of the owning context: no two live contexts share one, so an id of another context is refused.
    pub context: u32,
    /// Generation of the slot: 1 for its first mesh, one more for each mesh created in it since. The second
    /// number in `mesh 1:1`.
    pub generation: u32,
}

/// A tool pose: a cylinder of radius `radius` from the entry point `P0` to the tip `P`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TrocarTool {
    /// `P0`, the fixed point where the tool crosses the abdominal wall.
    pub entry: [f32; 3],
    /// `P`, the tool's tip.
    pub tip: [f32; 3],
    /// `s`, the radius (> 0).
    pub radius: f32,
    /// Roll of the frustum's square section, as gluLookAt's up; all-zero: a fixed world axis (docs/conventions.md).
    pub up: [f32; 3],
}

/// One query of a batch; get one from `trocar_default_query()`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TrocarQuery {
    /// Mesh to test.
    pub mesh: TrocarMeshId,
    /// Tool pose (at the start of the step when dynamic).
    pub tool: TrocarTool,
    /// Nonzero: the tip moves linearly from `tool.tip` to `new_tip` over the step.
    pub dynamic: u32,
    /// Tip at the end of the step (dynamic queries only).
    pub new_tip: [f32; 3],
    /// `TROCAR_VOLUME_CAPSULE` or `TROCAR_VOLUME_FRUSTUM`.
    pub volume: TrocarVolume,
    /// Nonzero: the hits only, no feedback polygons (each hit's `feedback_first` and `feedback_count` are 0,
    /// `trocar_results_feedback` gives an empty array; every other field is as with 0). 0, the default: hits
    /// and polygons.
    pub hits_only: u32,
}

impl TrocarContextDef {
    /// The defaults: automatic backend, one CPU thread per core.
    pub(crate) fn default_def() -> Self {
        Self {
            backend: TROCAR_BACKEND_AUTO,
            cpu_threads: 0,
            allow_software_gpu: 0,
            internal_value: CONTEXT_DEF_COOKIE,
        }
    }

    pub(crate) fn to_core(self) -> Result<crate::ContextDef> {
        if self.internal_value != CONTEXT_DEF_COOKIE {
            return Err(Error::invalid(
                "context def was not initialized with trocar_default_context_def()",
            ));
        }
        let backend = match self.backend {
            TROCAR_BACKEND_AUTO => BackendKind::Auto,
            TROCAR_BACKEND_CPU => BackendKind::Cpu,
            TROCAR_BACKEND_GPU => BackendKind::Gpu,
            other => return Err(Error::invalid(format!("unknown backend {other}"))),
        };
        Ok(crate::ContextDef {
            backend,
            cpu_threads: self.cpu_threads,
            allow_software_gpu: self.allow_software_gpu != 0,
        })
    }
}

impl TrocarTrackerDef {
    /// The defaults: 4 segments, strips of up to 32 triangles.
    pub(crate) fn default_def() -> Self {
        let d = crate::haptic::TrackerDef::default();
        Self {
            segment_count: d.segment_count,
            max_strip_length: d.max_strip_length,
            internal_value: TRACKER_DEF_COOKIE,
        }
    }

    pub(crate) fn to_core(self) -> Result<crate::haptic::TrackerDef> {
        if self.internal_value != TRACKER_DEF_COOKIE {
            return Err(Error::invalid(
                "tracker def was not initialized with trocar_default_tracker_def()",
            ));
        }
        let def = crate::haptic::TrackerDef {
            segment_count: self.segment_count,
            max_strip_length: self.max_strip_length,
        };
        def.validate()?;
        Ok(def)
    }
}

/// The C value of a backend kind.
pub(crate) fn backend_value(kind: BackendKind) -> TrocarBackend {
    match kind {
        BackendKind::Auto => TROCAR_BACKEND_AUTO,
        BackendKind::Cpu => TROCAR_BACKEND_CPU,
        BackendKind::Gpu => TROCAR_BACKEND_GPU,
    }
}

impl From<MeshId> for TrocarMeshId {
    fn from(id: MeshId) -> Self {
        Self {
            index1: id.index1,
            context: id.context,
            generation: id.generation,
        }
    }
}

impl From<TrocarMeshId> for MeshId {
    fn from(id: TrocarMeshId) -> Self {
        Self {
            index1: id.index1,
            context: id.context,
            generation: id.generation,
        }
    }
}

impl From<&TrocarTool> for Tool {
    fn from(t: &TrocarTool) -> Self {
        Tool {
            entry: Vec3::from(t.entry),
            tip: Vec3::from(t.tip),
            radius: t.radius,
            up: Vec3::from(t.up),
        }
    }
}

/// The core volume kind for a C value.
pub(crate) fn volume_kind(v: TrocarVolume) -> Result<VolumeKind> {
    match v {
        TROCAR_VOLUME_CAPSULE => Ok(VolumeKind::Capsule),
        TROCAR_VOLUME_FRUSTUM => Ok(VolumeKind::Frustum),
        other => Err(Error::invalid(format!("unknown volume {other}"))),
    }
}

impl TrocarQuery {
    pub(crate) fn to_core(self) -> Result<Query> {
        Ok(Query {
            mesh: self.mesh.into(),
            tool: (&self.tool).into(),
            new_tip: (self.dynamic != 0).then(|| Vec3::from(self.new_tip)),
            volume: volume_kind(self.volume)?,
            hits_only: self.hits_only != 0,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_constant_matches_the_core_bound() {
        assert_eq!(
            super::TROCAR_MAX_COORDINATE,
            crate::geometry::MAX_COORDINATE
        );
        assert_eq!(
            super::TROCAR_MAX_TRACKER_SEGMENTS,
            crate::haptic::tracker::MAX_SEGMENTS
        );
        assert_eq!(
            super::TROCAR_MAX_STRIP_LENGTH,
            crate::haptic::tracker::MAX_STRIP_LENGTH
        );
    }
}
