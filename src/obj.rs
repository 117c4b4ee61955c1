//! Loading organ meshes from Wavefront OBJ files (via `tobj`), for the demo, tests and benchmarks.

use crate::error::{Error, Result};
use std::path::Path;

/// Vertex positions and triangles, as `Context::create_mesh` takes them.
pub type MeshData = (Vec<[f32; 3]>, Vec<[u32; 3]>);

/// Positions and triangles of every model in an OBJ file, merged (faces are triangulated).
pub fn load_obj(path: impl AsRef<Path>) -> Result<MeshData> {
    let path = path.as_ref();
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ..Default::default()
    };
    let (models, _) = tobj::load_obj(path, &options)
        .map_err(|e| Error::invalid(format!("cannot read {}: {e}", path.display())))?;
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for m in models {
        let base = positions.len() as u32;
        positions.extend(m.mesh.positions.chunks_exact(3).map(|p| [p[0], p[1], p[2]]));
        triangles.extend(
            m.mesh
                .indices
                .chunks_exact(3)
                .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
        );
    }
    Ok((positions, triangles))
}
