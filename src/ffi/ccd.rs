//! Continuous collision detection in the C API: the primitive vertex-face and edge-edge tests.

use super::boundary::run;
use super::pointers::{as_ref, check_out, write};
use super::status::TrocarStatus;
use crate::ccd::{Impact, check_query};
use crate::error::Result;

/// Runs one primitive test on 24 doubles from C and writes its two answers.
///
/// # Safety
/// `points` NULL or 24 readable doubles; out-pointers NULL or writable.
unsafe fn primitive(
    test: fn(&[[f64; 3]; 8], f64) -> Option<Impact>,
    points: *const f64,
    min_separation: f64,
    out_time_of_impact: *mut f64,
    out_collides: *mut u32,
) -> Result<()> {
    // SAFETY: forwarded contract; `[[f64; 3]; 8]` has the layout and alignment of 24 doubles.
    let points = unsafe { as_ref(points.cast::<[[f64; 3]; 8]>(), "points") }?;
    check_out(out_time_of_impact, "out_time_of_impact")?;
    check_out(out_collides, "out_collides")?;
    check_query(points, min_separation)?;
    let impact = test(points, min_separation);
    // SAFETY: both checked non-NULL.
    unsafe {
        write(
            out_time_of_impact,
            impact.map_or(1.0, |i| i.time),
            "out_time_of_impact",
        )?;
        write(out_collides, u32::from(impact.is_some()), "out_collides")
    }
}

/// Checked by `trocar_query_ccd`, so a def not made by `trocar_default_ccd_def` is refused.
const CCD_DEF_COOKIE: u32 = 0x7C0C_CD01;

/// Per-primitive culling of `trocar_query_ccd`: a bounding-volume hierarchy rebuilt every step (default).
pub const TROCAR_CCD_CULLING_BVH: u32 = 0;
/// Per-primitive culling: a uniform grid over the region both meshes' swept boxes share (fastest for two
/// organs of similar triangle sizes in docs/benchmarks/ccd.md).
pub const TROCAR_CCD_CULLING_GRID: u32 = 1;
/// Per-primitive culling: sort-and-sweep along x.
pub const TROCAR_CCD_CULLING_SORT_AND_SWEEP: u32 = 2;
/// Per-primitive culling: every pair (the brute-force reference; slow, for checking).
pub const TROCAR_CCD_CULLING_ALL_PAIRS: u32 = 3;

/// Options of `trocar_query_ccd`; get one from `trocar_default_ccd_def()`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrocarCcdDef {
    /// Report features that come within this distance (>= 0, finite; 0 by default).
    pub min_separation: f64,
    /// Nonzero (default): also test edges against edges; vertex-face and face-vertex are always tested.
    pub edge_edge: u32,
    /// `TROCAR_CCD_CULLING_*` (default BVH); every culling gives the same contacts, only the speed differs.
    pub culling: u32,
    /// Set by `trocar_default_ccd_def`; do not change.
    pub internal_value: u32,
}

/// The contacts of the last `trocar_query_ccd` run with it; reused across steps. Opaque.
pub struct TrocarCcdResults {
    magic: u64,
    inner: crate::ccd::CcdResults,
}

super::pointers::impl_handle!(TrocarCcdResults, 0x7472_6F63_6343_4344);

/// The default CCD def.
///
/// No separation, edge-edge tests on, `TROCAR_CCD_CULLING_BVH`. `trocar_query_ccd` refuses a def not made here.
///
/// # Returns
/// The def (cannot fail).
#[unsafe(no_mangle)]
pub extern "C" fn trocar_default_ccd_def() -> TrocarCcdDef {
    let def = TrocarCcdDef {
        min_separation: 0.0,
        edge_edge: 1,
        culling: TROCAR_CCD_CULLING_BVH,
        internal_value: CCD_DEF_COOKIE,
    };
    super::boundary::catch(def, || def)
}

/// Creates an empty CCD results object for `trocar_query_ccd` on `ctx`.
///
/// # Safety
/// - `ctx`: a live context.
/// - `out`: receives the results object; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_ccd_results_create(
    ctx: *const super::context::TrocarContext,
    out: *mut *mut TrocarCcdResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { super::context::TrocarContext::get(ctx) }?;
        check_out(out, "out")?;
        let r = TrocarCcdResults {
            magic: 0,
            inner: ctx.create_ccd_results(),
        };
        // SAFETY: checked non-NULL.
        unsafe { super::pointers::hand_out(r, out) }
    })
}

/// Destroys a CCD results object.
///
/// Views into it become invalid.
///
/// # Safety
/// - `results`: a live CCD results object no other thread is using, or NULL (a no-op).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_ccd_results_destroy(results: *mut TrocarCcdResults) {
    // SAFETY: C caller's contract.
    super::boundary::catch((), || unsafe { super::pointers::destroy(results) })
}

/// Every contact between two meshes over the step (continuous collision detection).
///
/// Each vertex moves linearly from where it was before the first `trocar_mesh_update_positions` since a CCD query
/// last read the mesh to where it is now (a vertex no update touched stands still). Whole-mesh swept boxes, then
/// per-primitive swept boxes (`def->culling`), then the conservative primitive tests of `trocar_ccd_vertex_face`
/// / `trocar_ccd_edge_edge`: every vertex (in a triangle or not) against every triangle of the other mesh,
/// every edge of A against every edge of B, each edge once. Triangles with a repeated index take part as the
/// segment or point they span: see docs/ccd.md, "Degenerate input".
///
/// # Safety
/// - `ctx`: a live context.
/// - `def`: a def from `trocar_default_ccd_def`, read during the call only; not NULL.
/// - `results`: a live CCD results object of `ctx`, used by no other thread; on failure it keeps its previous
///   contacts.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (the same mesh twice: no
/// self-collision; a def not made by `trocar_default_ccd_def`, an unknown culling, a negative or non-finite
/// separation, a foreign id or results object, a misaligned pointer); `TROCAR_ERROR_STALE_HANDLE`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_query_ccd(
    ctx: *const super::context::TrocarContext,
    mesh_a: super::types::TrocarMeshId,
    mesh_b: super::types::TrocarMeshId,
    def: *const TrocarCcdDef,
    results: *mut TrocarCcdResults,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let ctx = unsafe { super::context::TrocarContext::get(ctx) }?;
        let def = unsafe { as_ref(def, "def") }?;
        let r = unsafe { super::pointers::live_mut(results) }?;
        if def.internal_value != CCD_DEF_COOKIE {
            return Err(crate::error::Error::invalid(
                "ccd def was not initialized with trocar_default_ccd_def()",
            ));
        }
        let culling = match def.culling {
            TROCAR_CCD_CULLING_BVH => crate::ccd::Culling::Bvh,
            TROCAR_CCD_CULLING_GRID => crate::ccd::Culling::Grid,
            TROCAR_CCD_CULLING_SORT_AND_SWEEP => crate::ccd::Culling::SortAndSweep,
            TROCAR_CCD_CULLING_ALL_PAIRS => crate::ccd::Culling::AllPairs,
            other => {
                return Err(crate::error::Error::invalid(format!(
                    "ccd def culling must be one of TROCAR_CCD_CULLING_* (0 to 3), got {other}"
                )));
            }
        };
        let core = crate::ccd::CcdDef {
            min_separation: def.min_separation,
            edge_edge: def.edge_edge != 0,
            culling,
        };
        ctx.query_ccd(mesh_a.into(), mesh_b.into(), &core, &mut r.inner)
    })
}

/// The contacts of the last `trocar_query_ccd`.
///
/// A view sorted by time of impact; NULL with count 0 when there are none.
///
/// # Safety
/// - `results`: a live CCD results object.
/// - `out_contacts`: receives the view, valid until the next query into `results` or its destruction; not NULL;
///   written only on success.
/// - `out_count`: receives the number of contacts; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a misaligned or wrong pointer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_ccd_results_contacts(
    results: *const TrocarCcdResults,
    out_contacts: *mut *const crate::ccd::CcdContact,
    out_count: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        let r = unsafe { super::pointers::live(results) }?;
        check_out(out_contacts, "out_contacts")?;
        check_out(out_count, "out_count")?;
        let c = r.inner.contacts();
        let ptr = if c.is_empty() {
            std::ptr::null()
        } else {
            c.as_ptr()
        };
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_contacts, ptr, "out_contacts")?;
            write(out_count, c.len() as u32, "out_count")
        }
    })
}

/// Does a moving vertex come within `min_separation` of a moving triangle during the step?
///
/// The vertex and the triangle's corners move (and the triangle deforms) linearly over t in [0, 1]. Conservative:
/// `*out_collides = 0` only if, in exact arithmetic on the given doubles, they stay farther than `min_separation`
/// (Euclidean) apart for the whole step; `1` comes with `*out_time_of_impact`, a lower bound of the first time
/// they come that close (none happens earlier), `0` with 1.0. A reported contact is proven, but for rare queries
/// (then within about 2^-62 times the largest coordinate of one); its time is mostly the start of a stretch of
/// 2^-20 of the step that holds it. docs/ccd.md, "The primitive tests' promise", gives the exact terms.
///
/// # Safety
/// - `points`: 24 doubles, v, f0, f1, f2 at t = 0 then at t = 1 (x, y, z each), read during the call only; not
///   NULL.
/// - `out_time_of_impact`: receives the time; not NULL; written only on success.
/// - `out_collides`: receives 1 or 0; not NULL; written only on success.
///
/// # Returns
/// `TROCAR_OK`; `TROCAR_ERROR_NULL_POINTER`; `TROCAR_ERROR_INVALID_ARGUMENT` (a NaN or infinite coordinate, a
/// negative or non-finite separation, a misaligned pointer). Bad input writes nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_ccd_vertex_face(
    points: *const f64,
    min_separation: f64,
    out_time_of_impact: *mut f64,
    out_collides: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        unsafe {
            primitive(
                crate::ccd::vertex_face,
                points,
                min_separation,
                out_time_of_impact,
                out_collides,
            )
        }
    })
}

/// Do two moving edges come within `min_separation` of each other during the step?
///
/// The same guarantee and outputs as `trocar_ccd_vertex_face`, for edges a0-a1 and b0-b1 moving linearly.
///
/// # Safety
/// - `points`: 24 doubles, a0, a1, b0, b1 at t = 0 then at t = 1, read during the call only; not NULL.
/// - `out_time_of_impact`, `out_collides`: as `trocar_ccd_vertex_face`.
///
/// # Returns
/// As `trocar_ccd_vertex_face`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trocar_ccd_edge_edge(
    points: *const f64,
    min_separation: f64,
    out_time_of_impact: *mut f64,
    out_collides: *mut u32,
) -> TrocarStatus {
    run(|| {
        // SAFETY: C caller's contract.
        unsafe {
            primitive(
                crate::ccd::edge_edge,
                points,
                min_separation,
                out_time_of_impact,
                out_collides,
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::status::{TROCAR_ERROR_INVALID_ARGUMENT, TROCAR_ERROR_NULL_POINTER, TROCAR_OK};

    #[test]
    fn answers_and_refusals() {
        // A vertex falling through a horizontal triangle at t = 0.5.
        let mut p = [
            0.25, 1.0, 0.25, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.25, -1.0, 0.25, 0.0,
            0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ];
        let (mut toi, mut hit) = (-1.0, 7);
        let call = |p: &[f64; 24], d: f64, toi: &mut f64, hit: &mut u32| unsafe {
            trocar_ccd_vertex_face(p.as_ptr(), d, toi, hit)
        };
        assert_eq!(call(&p, 0.0, &mut toi, &mut hit), TROCAR_OK);
        assert_eq!(hit, 1);
        assert!(toi <= 0.5 && toi > 0.49);
        // Refusals leave the outputs alone.
        let (mut toi2, mut hit2) = (-1.0, 7);
        assert_eq!(
            call(&p, -1.0, &mut toi2, &mut hit2),
            TROCAR_ERROR_INVALID_ARGUMENT
        );
        p[4] = f64::INFINITY;
        assert_eq!(
            call(&p, 0.0, &mut toi2, &mut hit2),
            TROCAR_ERROR_INVALID_ARGUMENT
        );
        assert_eq!((toi2, hit2), (-1.0, 7));
        let status = unsafe { trocar_ccd_edge_edge(std::ptr::null(), 0.0, &mut toi2, &mut hit2) };
        assert_eq!(status, TROCAR_ERROR_NULL_POINTER);
        let status =
            unsafe { trocar_ccd_edge_edge(p.as_ptr(), 0.0, &mut toi2, std::ptr::null_mut()) };
        assert_eq!(status, TROCAR_ERROR_NULL_POINTER);
    }

    /// Valid but extreme coordinates through the C API: a face tilted by 1e-300 (beyond what the exact decision
    /// takes on) or 2^-150 (within it), a subnormal, and coordinates of 1e300: answered, never refused.
    #[test]
    fn extreme_coordinates_are_answered() {
        for tiny in [1e-300, 2f64.powi(-150), 5e-324] {
            let p = [
                0.25, 0.25, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, tiny, 0.25, 0.25, -1.0,
                0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, tiny,
            ];
            let (mut toi, mut hit) = (-1.0, 7);
            let status = unsafe { trocar_ccd_vertex_face(p.as_ptr(), 0.0, &mut toi, &mut hit) };
            assert_eq!((status, hit), (TROCAR_OK, 1), "tilt {tiny}");
            assert!((0.0..=0.5).contains(&toi), "tilt {tiny}: {toi}");
        }
        let far = [
            1e300, 0.0, 0.0, 1e300, 1.0, 0.0, -1e300, 1.0, 0.0, -1e300, 0.0, 0.0, -1e300, 0.0, 0.0,
            1e300, 1.0, 0.0, -1e300, 1.0, 0.0, -1e300, 0.0, 0.0,
        ];
        let (mut toi, mut hit) = (-1.0, 7);
        let status = unsafe { trocar_ccd_edge_edge(far.as_ptr(), 0.0, &mut toi, &mut hit) };
        assert_eq!(status, TROCAR_OK);
        assert!(hit <= 1 && (0.0..=1.0).contains(&toi));
    }
}
