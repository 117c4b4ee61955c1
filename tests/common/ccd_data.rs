//! Test data for the CCD tests and benchmark (included with `#[path]`): the shared CCD benchmark queries and a
//! tool mesh. One copy, so the tests and the benchmark read the files and build the tool the same way.
#![allow(dead_code)]

use glam::Vec3;
use std::path::PathBuf;

/// `data/ccd` in the repository.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/ccd")
}

/// The queries of one file: eight points and the ground truth.
pub fn load(name: &str) -> Vec<([[f64; 3]; 8], bool)> {
    let path = data_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (the CCD samples ship in data/ccd)", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let v: Vec<f64> = line.split(',').map(|x| x.trim().parse().unwrap()).collect();
            assert_eq!(v.len(), 25, "{name}: {line}");
            let mut p = [[0.0; 3]; 8];
            for (k, c) in v[..24].iter().enumerate() {
                p[k / 3][k % 3] = *c;
            }
            (p, v[24] == 1.0)
        })
        .collect()
}

/// A closed cylinder of `radius` along `axis` from `base`: `n` segments, capped with fans.
pub fn cylinder(base: Vec3, axis: Vec3, radius: f32, n: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let w = axis.normalize();
    let u = w.any_orthonormal_vector();
    let v = w.cross(u);
    let mut p = Vec::new();
    for end in [base, base + axis] {
        for k in 0..n {
            let a = k as f32 / n as f32 * std::f32::consts::TAU;
            p.push((end + radius * (a.cos() * u + a.sin() * v)).to_array());
        }
    }
    p.push(base.to_array());
    p.push((base + axis).to_array());
    let (c0, c1) = (2 * n, 2 * n + 1);
    let mut t = Vec::new();
    for k in 0..n {
        let j = (k + 1) % n;
        t.push([k, j, n + j]);
        t.push([k, n + j, n + k]);
        t.push([c0, j, k]);
        t.push([c1, n + k, n + j]);
    }
    (p, t)
}
