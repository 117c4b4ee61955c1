//! Geometry of the clip-select method: the tool, its camera frames and volumes, clipping, exact distances.
//!
//! Everything here is `f32`, branch-light and allocation-free: it is the fast path that both backends share.
//! The independent `f64` reference used by the tests lives in `tests/common/reference.rs`.

/// Largest coordinate magnitude accepted anywhere (positions, tool, radius). Squared distances of cross
/// products reach the fourth power of the coordinates, which must stay far inside `f32` range; 1e6 is 10 km in
/// centimetres, far beyond any surgical scene.
pub const MAX_COORDINATE: f32 = 1.0e6;

/// True when every component is finite and within ±[`MAX_COORDINATE`].
pub fn in_range(v: [f32; 3]) -> bool {
    v.iter().all(|c| c.abs() <= MAX_COORDINATE)
}

pub mod clip_volume;
pub mod closest;
pub mod feedback_polygon;
pub mod frame;
pub mod mesh_side;
pub mod time_of_impact;
pub mod tool;
pub mod tool_volume;

pub use closest::Closest;
pub use feedback_polygon::FeedbackPolygon;
pub use tool::Tool;
pub use tool_volume::{SweptShape, ToolVolume, VolumeKind};
