//! Mesh against mesh: the swept-box test, the per-primitive culling (broadphase), the query over a step and
//! the contacts it reports.

pub mod broadphase;
pub mod contact;
pub mod mesh_pair;
pub mod swept_box;
