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

/// Does a vertex moving linearly come within `min_separation` of a triangle moving (and deforming) linearly
/// during the step t in [0, 1]? `points`: v, f0, f1, f2 at t = 0, then v, f0, f1, f2 at t = 1 (x, y, z each).
///
/// Conservative: `*out_collides = 0` only if, in exact arithmetic on the given doubles, the vertex stays
/// farther than `min_separation` (Euclidean) from the triangle for the whole step. `1` comes with
/// `*out_time_of_impact`, a lower bound of the first time it comes that close; `0` with 1.0. A reported
/// contact is either proven or within about 2^-62 times the largest coordinate of one (with a separation: the
/// largest coordinate difference within 1.001·min_separation). Bad input (NULL, NaN/Inf, a negative or
/// non-finite separation) returns an error and writes nothing.
///
/// # Safety
/// `points` must be NULL or point to 24 doubles; the out-pointers NULL or writable.
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

/// Do two edges moving linearly come within `min_separation` of each other during the step t in [0, 1]?
/// `points`: a0, a1, b0, b1 at t = 0, then a0, a1, b0, b1 at t = 1. Same guarantee and outputs as
/// `trocar_ccd_vertex_face`.
///
/// # Safety
/// `points` must be NULL or point to 24 doubles; the out-pointers NULL or writable.
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
}
