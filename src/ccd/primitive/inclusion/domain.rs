//! The parameter domain [0, 1]³ of (t, u, v): its boxes ([`Cell`]) and the point where a contact is found
//! ([`Root`]).

/// Where the search found the earliest contact: `time` is a lower bound of the first instant the two
/// primitives come within the separation distance; `u`, `v` locate it on the primitives (see
/// [`crate::ccd::Impact`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Root {
    /// Lower bound of the time of impact, in [0, 1].
    pub time: f64,
    /// First parameter at the contact (Duffy coordinate for vertex-face).
    pub u: f64,
    /// Second parameter at the contact (Duffy coordinate for vertex-face).
    pub v: f64,
}

/// A box of the parameter domain. Each parameter's range is measured from the end of [0, 1] it is nearer to
/// (`far[k]`: from 1, i.e. the range holds 1 - x), so that cells near 1 can shrink as far as cells near 0:
/// doubles are dense near 0 only.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cell {
    pub(super) t: [f64; 2],
    pub(super) u: [f64; 2],
    pub(super) v: [f64; 2],
    pub(super) far: [bool; 3],
    pub(super) depth: u16,
}

impl Cell {
    /// The whole domain.
    pub(super) const ROOT: Self = Self {
        t: [0.0, 1.0],
        u: [0.0, 1.0],
        v: [0.0, 1.0],
        far: [false; 3],
        depth: 0,
    };

    /// The time slab [t0, t1] (dyadic, within one half of the step) over the whole face or edge pair, measured
    /// from the nearer end of the step.
    pub(super) fn slab(t0: f64, t1: f64) -> Self {
        let mut c = Self::ROOT;
        if t1 <= 0.5 {
            c.t = [t0, t1];
        } else {
            // Exact: t0 and t1 are multiples of a power of two no smaller than 2^-20, in [1/2, 1].
            c.t = [1.0 - t1, 1.0 - t0];
            c.far[0] = true;
        }
        c
    }

    /// A lower bound of the cell's actual values of parameter `k` (0: t, 1: u, 2: v).
    pub(super) fn actual_low(&self, k: usize) -> f64 {
        let r = [self.t, self.u, self.v][k];
        if self.far[k] {
            // 1 - x rounded to nearest may exceed the true value by half an ulp: step one ulp down.
            (1.0 - r[1]).next_down().max(0.0)
        } else {
            r[0]
        }
    }

    /// The cell's centre in actual coordinates (rounded; only used to locate the contact).
    pub(super) fn actual_mid(&self, k: usize) -> f64 {
        let r = [self.t, self.u, self.v][k];
        let m = 0.5 * (r[0] + r[1]);
        if self.far[k] { 1.0 - m } else { m }
    }

    /// The two halves of the cell along parameter `k`, the one earlier in time first when `k` is t.
    pub(super) fn split(&self, k: usize) -> (Self, Self) {
        let mut a = *self;
        let mut b = *self;
        a.depth += 1;
        b.depth += 1;
        let r = [self.t, self.u, self.v][k];
        let (ra, rb, far_b) = if r == [0.0, 1.0] {
            // The whole range: the upper half becomes [0, 1/2] measured from 1.
            ([0.0, 0.5], [0.0, 0.5], true)
        } else {
            let mid = 0.5 * (r[0] + r[1]);
            ([r[0], mid], [mid, r[1]], self.far[k])
        };
        match k {
            0 => (a.t, b.t) = (ra, rb),
            1 => (a.u, b.u) = (ra, rb),
            _ => (a.v, b.v) = (ra, rb),
        }
        b.far[k] = far_b;
        // `a` is nearer the origin of its own measure: earlier in time unless measured from t = 1.
        if k == 0 && self.far[0] {
            (b, a)
        } else {
            (a, b)
        }
    }
}
