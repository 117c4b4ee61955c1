//! The polynomials of a query: the coordinates as integers, and the coplanarity polynomial, |n|² and the
//! side polynomials built from them, in 512-bit integers (`fixed_width.rs`) where the coordinates allow.

use super::MAX_COORDINATE_BITS;
use super::fixed_width::{I512, Poly512};
use super::poly::Poly;
use crate::ccd::Pair;
use num_bigint::BigInt;
use std::cell::OnceCell;

/// The eight points' coordinates as integers `m · 2^s` (see [`scaled_coordinates`]).
pub(super) type Coordinates = [[(i64, u32); 3]; 8];

/// Every coordinate as an integer `m · 2^s` (m below 2^53 in magnitude, s >= 0): the doubles scaled by the
/// power of two that makes the smallest of them (its lowest set bit) an integer, and the number of bits the
/// largest of them then takes. `None` when that is more than [`MAX_COORDINATE_BITS`].
pub(super) fn scaled_coordinates(points: &[[f64; 3]; 8]) -> Option<(Coordinates, i32)> {
    // x = m · 2^e with m an odd integer below 2^53 (or zero).
    let parts = |x: f64| -> (i64, i32) {
        let bits = x.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = (bits & ((1u64 << 52) - 1)) as i64;
        let (m, e) = if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1i64 << 52), exponent - 1075)
        };
        let zeros = m.trailing_zeros().min(63) as i32;
        let m = if m == 0 { 0 } else { m >> zeros };
        (if x < 0.0 { -m } else { m }, e + zeros)
    };
    let nonzero = || {
        points
            .iter()
            .flatten()
            .filter(|x| **x != 0.0)
            .map(|&x| parts(x))
    };
    let lowest = nonzero().map(|(_, e)| e).min().unwrap_or(0);
    let highest = nonzero()
        .map(|(m, e)| e + (64 - m.unsigned_abs().leading_zeros()) as i32)
        .max()
        .unwrap_or(0);
    if highest - lowest > MAX_COORDINATE_BITS {
        return None;
    }
    let scaled = points.map(|p| {
        p.map(|x| {
            if x == 0.0 {
                (0, 0)
            } else {
                let (m, e) = parts(x);
                (m, (e - lowest) as u32)
            }
        })
    });
    Some((scaled, highest - lowest))
}

/// Widest coordinate integers whose polynomials are built in 512-bit integers: a product of four
/// differences of two of them (the side polynomials, degree 4) and the sums of a few dozen such products stay
/// below 2^500.
pub(super) const FIXED_COORDINATE_BITS: i32 = 120;

/// What the polynomials are built with: big-integer polynomials, or fixed-width ones (see `fixed_width.rs`).
pub(super) trait Ring: Clone {
    fn add(&self, o: &Self) -> Self;
    fn sub(&self, o: &Self) -> Self;
    fn neg(self) -> Self;
    /// The polynomial 0.
    fn zero() -> Self;
    /// `self += a · b`, or `self −= a · b` when `subtract`: in place, which the fixed-width polynomials
    /// need to build without copying their coefficients around.
    fn add_product(&mut self, a: &Self, b: &Self, subtract: bool);
}

impl Ring for Poly {
    fn add(&self, o: &Poly) -> Poly {
        self.zip_with(o, |a, b| a + b)
    }

    fn sub(&self, o: &Poly) -> Poly {
        self.zip_with(o, |a, b| a - b)
    }

    fn neg(self) -> Poly {
        Poly(self.0.into_iter().map(|c| -c).collect(), OnceCell::new())
    }

    fn zero() -> Poly {
        Poly(Vec::new(), OnceCell::new())
    }

    fn add_product(&mut self, a: &Poly, b: &Poly, subtract: bool) {
        let product = a.mul(b);
        *self = if subtract {
            self.sub(&product)
        } else {
            self.add(&product)
        };
    }
}

pub(super) type Vector<P = Poly> = [P; 3];

pub(super) fn sub<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> Vector<P> {
    [a[0].sub(&b[0]), a[1].sub(&b[1]), a[2].sub(&b[2])]
}

pub(super) fn add<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> Vector<P> {
    [a[0].add(&b[0]), a[1].add(&b[1]), a[2].add(&b[2])]
}

pub(super) fn neg<P: Ring>(a: &Vector<P>) -> Vector<P> {
    a.clone().map(P::neg)
}

pub(super) fn cross<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> Vector<P> {
    // Filled in place: fixed-width components are 416 bytes, which `array::from_fn` would copy several times.
    let mut c = [P::zero(), P::zero(), P::zero()];
    for (i, c) in c.iter_mut().enumerate() {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        c.add_product(&a[j], &b[k], false);
        c.add_product(&a[k], &b[j], true);
    }
    c
}

pub(super) fn dot<P: Ring>(a: &Vector<P>, b: &Vector<P>) -> P {
    let mut d = P::zero();
    for (x, y) in a.iter().zip(b) {
        d.add_product(x, y, false);
    }
    d
}

/// The polynomials a decision is made from: the coplanarity polynomial D, |n|² and the sides.
pub(super) struct Built<P = Poly> {
    pub(super) coplanarity: P,
    pub(super) norm: P,
    pub(super) sides: Vec<P>,
}

/// The polynomials of a pair from the differences of its points' paths (`diff(k, j)`: x_k(t) − x_j(t), with
/// x_k(t) = x_k(0) + t (x_k(1) − x_k(0))).
pub(super) fn build<P: Ring>(pair: Pair, diff: impl Fn(usize, usize) -> Vector<P>) -> Built<P> {
    match pair {
        Pair::VertexFace => {
            let g = [diff(1, 0), diff(2, 0), diff(3, 0)];
            let c = [
                cross(&g[1], &g[2]),
                cross(&g[2], &g[0]),
                cross(&g[0], &g[1]),
            ];
            // n = (f1 − f0) × (f2 − f0) = c0 + c1 + c2, and D = n · (v − f0) = −c0 · g0 (c1 and c2 are
            // orthogonal to g0).
            let n: Vector<P> = std::array::from_fn(|i| c[0][i].add(&c[1][i]).add(&c[2][i]));
            let sides: Vec<P> = c.iter().map(|ci| dot(ci, &n)).collect();
            // |n|² = n · (c0 + c1 + c2), the sum of the sides.
            let norm = sides[0].add(&sides[1]).add(&sides[2]);
            Built {
                coplanarity: dot(&c[0], &g[0]).neg(),
                norm,
                sides,
            }
        }
        Pair::EdgeEdge => {
            let (e, f, w) = (diff(1, 0), diff(3, 2), diff(2, 0));
            let n = cross(&e, &f);
            let norm = dot(&n, &n);
            let (u, v) = (dot(&cross(&w, &f), &n), dot(&cross(&w, &e), &n));
            Built {
                sides: vec![norm.sub(&u), norm.sub(&v), u, v],
                coplanarity: dot(&n, &w),
                norm,
            }
        }
    }
}

impl Built<Poly512> {
    /// The same polynomials in big integers; `None` if any overflowed.
    pub(super) fn to_big(&self) -> Option<Built> {
        let poly = |p: &Poly512| p.coefficients().map(Poly::new);
        Some(Built {
            coplanarity: poly(&self.coplanarity)?,
            norm: poly(&self.norm)?,
            sides: self.sides.iter().map(poly).collect::<Option<_>>()?,
        })
    }
}

/// The differences x_k(t) − x_j(t) of the points' paths x_k(0) + t (x_k(1) − x_k(0)) in big integers, from
/// the scaled coordinates.
pub(super) fn big_differences(x: &Coordinates) -> impl Fn(usize, usize) -> Vector {
    let x = x.map(|p| p.map(|(m, s)| BigInt::from(m) << s as usize));
    let path = move |k: usize| -> Vector {
        std::array::from_fn(|i| Poly::new(vec![x[k][i].clone(), &x[k + 4][i] - &x[k][i]]))
    };
    move |k, j| sub(&path(k), &path(j))
}

/// The polynomials of a pair in 512-bit integers (overflowed where they do not fit).
pub(super) fn built_fixed(pair: Pair, x: &Coordinates) -> Built<Poly512> {
    // x_k − x_j at t = 0 and t = 1, made straight from the coordinates.
    let coordinate = |k: usize, i: usize| I512::scaled(x[k][i].0, x[k][i].1);
    let between = |k: usize, j: usize, i: usize| coordinate(k, i)?.minus(&coordinate(j, i)?);
    build(pair, |k, j| {
        let mut v = [Poly512::ZERO; 3];
        for (i, p) in v.iter_mut().enumerate() {
            match (between(k, j, i), between(k + 4, j + 4, i)) {
                (Some(a), Some(b)) => p.set_linear(&a, &b),
                _ => *p = Poly512::OVERFLOWED,
            }
        }
        v
    })
}

/// The polynomials of a pair from its scaled coordinates (see [`scaled_coordinates`]): in 512-bit integers
/// when the coordinates are short enough, else (or if that overflowed, which the bound rules out) in big ones.
pub(super) fn built(pair: Pair, x: &Coordinates, bits: i32) -> Built {
    if bits <= FIXED_COORDINATE_BITS {
        if let Some(built) = built_fixed(pair, x).to_big() {
            return built;
        }
    }
    build(pair, big_differences(x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccd::algebraic::{Decision, first_contact};

    /// Coordinates spanning more than 2^256 (1 beside 1e-300) are left to the search, whose cost is bounded;
    /// 2^-150 beside 1 is still decided. The public test answers both.
    #[test]
    fn coordinates_spanning_too_many_bits_are_left_undecided() {
        for (tiny, decided) in [(1e-300, false), (2f64.powi(-150), true)] {
            let face = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, tiny]];
            let points = [
                [0.25, 0.25, 1.0],
                face[0],
                face[1],
                face[2],
                [0.25, 0.25, -1.0],
                face[0],
                face[1],
                face[2],
            ];
            let exact = first_contact(Pair::VertexFace, &points);
            if decided {
                assert!(
                    matches!(exact, Decision::Contact(t) if t <= 0.5),
                    "{exact:?}"
                );
            } else {
                assert_eq!(exact, Decision::Undecided);
            }
            let hit = crate::ccd::vertex_face(&points, 0.0).expect("the vertex crosses the face");
            assert!(hit.time <= 0.5);
        }
    }

    #[test]
    fn fixed_width_building_equals_big_integer_building() {
        // Coordinates mixing magnitudes up to and past the 120-bit limit (1 beside multiples of 2^-66, as in
        // the cube-cliff files' 1e-17 noise, and 53-bit ones scaled by 2^-70), both pairs: the polynomials
        // built in 512-bit integers are those built in big integers, and both paths are taken.
        let mut rng = crate::ccd::tests::Rng(0xb1_17);
        let mut fixed = 0;
        for n in 0..4000 {
            let points: [[f64; 3]; 8] = std::array::from_fn(|_| {
                std::array::from_fn(|_| match rng.next_u64() % 4 {
                    0 => rng.coordinate(),
                    1 => rng.coordinate() * 2f64.powi(-66),
                    2 if n % 3 == 0 => rng.unit() * 2f64.powi(-70),
                    2 => 0.0,
                    _ => 2.0 * rng.unit() - 1.0,
                })
            });
            let pair = if n % 2 == 0 {
                Pair::VertexFace
            } else {
                Pair::EdgeEdge
            };
            let (x, bits) = scaled_coordinates(&points).unwrap();
            fixed += usize::from(bits <= FIXED_COORDINATE_BITS);
            let (a, b) = (built(pair, &x, bits), built(pair, &x, i32::MAX));
            assert_eq!(a.coplanarity, b.coplanarity, "{points:?}");
            assert_eq!(a.norm, b.norm, "{points:?}");
            assert_eq!(a.sides, b.sides, "{points:?}");
        }
        assert!(
            (1000..3900).contains(&fixed),
            "{fixed} of 4000 built in fixed width"
        );
    }
}
