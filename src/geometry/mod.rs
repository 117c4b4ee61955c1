//! Geometry of the clip-select method: the tool, its camera frames and volumes, clipping, exact distances.
//!
//! Everything here is `f32`, branch-light and allocation-free: it is the fast path that both backends share.
//! The independent `f64` reference used by the tests lives in `tests/common/reference.rs`.

pub mod clip_volume;
pub mod closest;
pub mod feedback_polygon;
pub mod frame;
pub mod time_of_impact;
pub mod tool;
pub mod tool_volume;

pub use clip_volume::{ClipVolume, Slab};
pub use closest::{Closest, segment_triangle, triangle_triangle};
pub use feedback_polygon::FeedbackPolygon;
pub use frame::Frame;
pub use tool::Tool;
pub use tool_volume::{SweptShape, ToolVolume, VolumeKind};
