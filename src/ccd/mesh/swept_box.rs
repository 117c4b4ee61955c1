//! Meseure & Chaillou's swept-box test (their "4D trapezoid"): two axis-aligned boxes, each interpolated
//! linearly between its place at the start and at the end of the step, overlap at some t in [0, 1] exactly
//! when six linear inequalities in t have a common solution; the interval is narrowed inequality by
//! inequality and the test stops as soon as it is empty (on average after three of the six, says the paper).

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// An axis-aligned box at the start (`lo0`, `hi0`) and at the end (`lo1`, `hi1`) of the step.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SweptBox {
    /// Lower corner at t = 0.
    pub lo0: [f32; 3],
    /// Upper corner at t = 0.
    pub hi0: [f32; 3],
    /// Lower corner at t = 1.
    pub lo1: [f32; 3],
    /// Upper corner at t = 1.
    pub hi1: [f32; 3],
}

impl SweptBox {
    /// An empty box, to grow with [`SweptBox::add`].
    pub const EMPTY: Self = Self {
        lo0: [f32::INFINITY; 3],
        hi0: [f32::NEG_INFINITY; 3],
        lo1: [f32::INFINITY; 3],
        hi1: [f32::NEG_INFINITY; 3],
    };

    /// Grows the box by a point at `p0` at the start of the step and `p1` at its end.
    #[inline]
    pub fn add(&mut self, p0: [f32; 3], p1: [f32; 3]) {
        for k in 0..3 {
            self.lo0[k] = self.lo0[k].min(p0[k]);
            self.hi0[k] = self.hi0[k].max(p0[k]);
            self.lo1[k] = self.lo1[k].min(p1[k]);
            self.hi1[k] = self.hi1[k].max(p1[k]);
        }
    }

    /// The box of a moving point set's bounding boxes: at any t in [0, 1] the set's own bounding box lies
    /// inside the interpolated box, since the minimum of linear functions is at least the interpolated minimum.
    pub fn of_points(points: impl IntoIterator<Item = ([f32; 3], [f32; 3])>) -> Self {
        let mut b = Self::EMPTY;
        for (p0, p1) in points {
            b.add(p0, p1);
        }
        b
    }

    /// Lower and upper bound along `axis` over the whole step (the union of both ends).
    #[inline]
    pub fn span(&self, axis: usize) -> (f32, f32) {
        (
            self.lo0[axis].min(self.lo1[axis]),
            self.hi0[axis].max(self.hi1[axis]),
        )
    }

    /// Largest coordinate magnitude of the box.
    pub fn magnitude(&self) -> f32 {
        let m = |v: [f32; 3]| v.iter().fold(0.0_f32, |a, x| a.max(x.abs()));
        m(self.lo0)
            .max(m(self.hi0))
            .max(m(self.lo1))
            .max(m(self.hi1))
    }
}

/// The margin that makes [`overlap_interval`] conservative: the separation distance plus a bound on the
/// rounding of its arithmetic for coordinates up to `magnitude`.
pub fn margin(separation: f64, magnitude: f64) -> f64 {
    separation * (1.0 + 4.0 * U) + 64.0 * U * magnitude + f64::MIN_POSITIVE
}

/// The interval of t in [0, 1] (slightly widened) during which `a` and `b`, grown by `margin`, overlap, or
/// `None` when they never do. Evaluated in `f64` from the `f32` corners.
#[inline]
pub fn overlap_interval(a: &SweptBox, b: &SweptBox, margin: f64) -> Option<(f64, f64)> {
    let mut t_lo = 0.0_f64;
    let mut t_hi = 1.0_f64;
    // c(t) = c0 + t (c1 - c0) <= 0 must hold: "a's lower side below b's upper side" and the reverse.
    let mut require = |c0: f64, c1: f64| -> bool {
        if c0 <= 0.0 && c1 <= 0.0 {
            return true;
        }
        if c0 > 0.0 && c1 > 0.0 {
            return false;
        }
        let t = c0 / (c0 - c1);
        if c0 > 0.0 {
            // Entering: from t on (widened by the division's rounding).
            t_lo = t_lo.max(t * (1.0 - 4.0 * U));
        } else {
            // Leaving: until t.
            t_hi = t_hi.min(t * (1.0 + 4.0 * U));
        }
        t_lo <= t_hi
    };
    for k in 0..3 {
        let f = |x: f32| f64::from(x);
        if !require(
            f(a.lo0[k]) - f(b.hi0[k]) - margin,
            f(a.lo1[k]) - f(b.hi1[k]) - margin,
        ) || !require(
            f(b.lo0[k]) - f(a.hi0[k]) - margin,
            f(b.lo1[k]) - f(a.hi1[k]) - margin,
        ) {
            return None;
        }
    }
    Some((t_lo, t_hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moving(lo0: f32, lo1: f32) -> SweptBox {
        SweptBox {
            lo0: [lo0, 0.0, 0.0],
            hi0: [lo0 + 1.0, 1.0, 1.0],
            lo1: [lo1, 0.0, 0.0],
            hi1: [lo1 + 1.0, 1.0, 1.0],
        }
    }

    #[test]
    fn boxes_passing_through_each_other_overlap_only_meanwhile() {
        // a sweeps from x = -4 to x = 4 through a fixed box at x = 0: overlap for t in [3/8, 5/8].
        let a = moving(-4.0, 4.0);
        let b = moving(0.0, 0.0);
        let (lo, hi) = overlap_interval(&a, &b, margin(0.0, 5.0)).unwrap();
        assert!(
            (lo - 0.375).abs() < 1e-9 && (hi - 0.625).abs() < 1e-9,
            "{lo} {hi}"
        );
        // Both ends apart on the same side: never.
        assert_eq!(
            overlap_interval(&moving(2.0, 3.0), &b, margin(0.0, 5.0)),
            None
        );
        // Their union boxes overlap, but they move together, one always ahead of the other: never.
        assert_eq!(
            overlap_interval(&moving(-2.0, 2.0), &moving(-3.5, 0.5), 0.0),
            None
        );
        // Within the separation: yes.
        assert!(overlap_interval(&moving(2.0, 3.0), &b, margin(1.5, 5.0)).is_some());
    }
}
