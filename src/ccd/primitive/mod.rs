//! Primitive against primitive: the vertex-face and edge-edge tests, and what they are decided with: the
//! static predicates, the coplanarity filter, the in-plane and planar decisions and the box search
//! (`inclusion`), with the exact algebraic decision (`ccd::algebraic`) behind them.

pub mod coplanarity;
pub(crate) mod edge_edge;
pub(crate) mod in_plane;
pub(crate) mod inclusion;
pub(crate) mod planar;
pub(crate) mod static_predicates;
pub(crate) mod vertex_face;
