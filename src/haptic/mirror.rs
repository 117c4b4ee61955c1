//! The haptic thread's copy of a mesh's vertex positions: a double-buffered sequence lock.
//!
//! The mesh itself sits behind a readers-writer lock that CPU queries hold for milliseconds on large meshes,
//! and a waiting writer blocks new readers: a 1 kHz haptic loop cannot read through it. So a mesh with a
//! tracker keeps this mirror of its positions, written by `update_positions` (the mesh's only writer) and read
//! by trackers without any lock:
//!
//! - Two copies, each with its own sequence number (odd while being written). The writer always writes the
//!   copy readers are *not* directed to (`active` names the other), then publishes it. So at every instant one
//!   complete, consistent copy exists and a reader never waits for a write in progress, however large. The
//!   copy left behind lacks only the last write's range, which the next write copies over from the published
//!   copy first, unless it rewrites that range anyway (a simulator rewriting every vertex each step writes one
//!   copy per step).
//! - A reader runs its whole computation on one copy, loading positions with relaxed atomic loads, and keeps
//!   the answer only if that copy's sequence number did not change meanwhile (Boehm's seqlock with fences).
//!   A torn read is thrown away, never used. The computation costs what it reads: no copy is made up front.
//! - Starvation: a writer that flips copies faster than a reader can finish could make it retry forever. After
//!   [`OPTIMISTIC_ATTEMPTS`] failed attempts the reader registers itself in `starving`; a writer about to
//!   overwrite a copy first waits until no reader is registered, for at most [`STARVING_WAIT`]. A registered
//!   reader's next attempt therefore succeeds unless it takes longer than that, so a read takes at most
//!   `OPTIMISTIC_ATTEMPTS + 1` computations, and the writer waits at most for one reader computation
//!   (microseconds). That wait is the price of the guarantee, and it falls on the simulation thread, which
//!   runs at 30–500 Hz, never on the haptic one. The bound is for a reader that stops mid-read (a haptic
//!   thread suspended by the OS or a debugger): the writer then goes on after [`STARVING_WAIT`], the reader's
//!   attempt is torn and thrown away as any other, and it retries until one fits between two writes. Safety
//!   never depends on the wait, only the reader's progress does.

use super::Positions;
use crate::error::{Error, Result};
use glam::Vec3;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

/// Attempts a reader makes before asking the writer to leave its copy alone.
pub const OPTIMISTIC_ATTEMPTS: u32 = 4;
/// Longest a writer waits for a starving reader: a thousand times a tracker update, so a live reader always
/// finishes first, yet short enough for a simulation step when the reader's thread was suspended mid-read.
pub const STARVING_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// One copy of the positions: x, y, z bit patterns of each vertex, interleaved so that one vertex is one
/// read of 12 contiguous bytes.
#[derive(Debug)]
struct Copy {
    /// Even when the copy is consistent, odd while the writer is in it.
    sequence: AtomicU64,
    /// Bits of an `f64`: the sum over the writes so far of each write's largest vertex move (see
    /// [`Snapshot::travel`]). Written and read under the sequence number, like the positions.
    travel: AtomicU64,
    words: Box<[AtomicU32]>,
}

/// Vertex positions shared between the mesh (the one writer) and its trackers (readers on any thread).
#[derive(Debug)]
pub struct PositionMirror {
    copies: [Copy; 2],
    /// The copy readers should take: complete and not being written.
    active: AtomicUsize,
    /// Readers that failed [`OPTIMISTIC_ATTEMPTS`] times and asked the writer to wait for them.
    starving: AtomicU32,
    /// Words `stale.0 .. stale.1` of the copy not active: the last write's range, current only in the active
    /// copy. Only the writer touches it.
    stale: (AtomicUsize, AtomicUsize),
}

/// A consistent-or-discarded view of one copy, handed to a reader's computation.
pub struct Snapshot<'a> {
    words: &'a [AtomicU32],
    version: u64,
    travel: f64,
}

/// What a read cost: the attempts made, and whether the writer had to be asked to wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadCost {
    /// Computations run (1 when no write interfered).
    pub attempts: u32,
    /// True when the reader registered as starving (after [`OPTIMISTIC_ATTEMPTS`] torn attempts).
    pub fallback: bool,
}

impl Snapshot<'_> {
    /// Position of vertex `v` (indices come from a validated triangle list, so `v` is in range).
    #[inline]
    pub fn get(&self, v: u32) -> Vec3 {
        let i = 3 * v as usize;
        let w = &self.words[i..i + 3];
        Vec3::new(
            f32::from_bits(w[0].load(Ordering::Relaxed)),
            f32::from_bits(w[1].load(Ordering::Relaxed)),
            f32::from_bits(w[2].load(Ordering::Relaxed)),
        )
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.words.len() / 3
    }

    /// The mesh's writes whose positions this copy held when the read began (every write so far, or all but
    /// the last on the copy readers just left), so two reads with the same version saw the same positions (a
    /// cache keyed on it is valid until the next write).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// How far the positions have travelled: the sum, over every write so far, of the largest distance a
    /// vertex moved in it. Between two reads no point of any triangle moved farther than the difference
    /// (a triangle's points are convex combinations of its corners), so a distance to a triangle changed by
    /// at most that much. Infinite once a write moved a vertex by more than `f64` holds.
    pub fn travel(&self) -> f64 {
        self.travel
    }
}

/// Unregisters a starving reader even if its computation panics.
struct Registered<'a>(&'a AtomicU32);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl PositionMirror {
    /// A mirror of the positions given as x, y, z arrays (both copies filled).
    #[cfg(test)]
    pub fn new(xs: &[f32], ys: &[f32], zs: &[f32]) -> Result<Self> {
        Self::of(&super::view::Columns([xs, ys, zs]))
    }

    /// A mirror of `pos` (both copies filled).
    pub fn of<P: Positions>(pos: &P) -> Result<Self> {
        let n = pos.vertex_count();
        let copy = || -> Result<Copy> {
            let mut words = Vec::new();
            words
                .try_reserve_exact(3 * n)
                .map_err(|_| Error::out_of_memory("the haptic position mirror"))?;
            for v in 0..n as u32 {
                let p = pos.get(v);
                words.push(AtomicU32::new(p.x.to_bits()));
                words.push(AtomicU32::new(p.y.to_bits()));
                words.push(AtomicU32::new(p.z.to_bits()));
            }
            Ok(Copy {
                sequence: AtomicU64::new(0),
                travel: AtomicU64::new(0f64.to_bits()),
                words: words.into_boxed_slice(),
            })
        };
        Ok(Self {
            copies: [copy()?, copy()?],
            active: AtomicUsize::new(0),
            starving: AtomicU32::new(0),
            stale: (AtomicUsize::new(0), AtomicUsize::new(0)),
        })
    }

    /// [`PositionMirror::write_moved`], measuring the largest move itself.
    #[cfg(test)]
    pub(crate) fn write(&self, first: usize, positions: &[[f32; 3]]) {
        let copy = &self.copies[self.active.load(Ordering::Relaxed)];
        let words = &copy.words[3 * first..3 * (first + positions.len())];
        let mut largest = 0.0f64;
        for (w, p) in words.chunks_exact(3).zip(positions) {
            let old = [0, 1, 2].map(|i| f32::from_bits(w[i].load(Ordering::Relaxed)));
            let d = [0, 1, 2].map(|i| f64::from(p[i]) - f64::from(old[i]));
            largest = largest.max(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        }
        self.write_moved(first, positions, largest.sqrt(), false);
    }

    /// Overwrites vertices `first ..` with `positions`; `moved` is the largest distance a vertex moves (the
    /// mesh measures it on its own copy, which holds the same positions, while that is in cache). Writes the
    /// copy readers are not directed to, after bringing it up to date with the other, then publishes it; the
    /// copying is split over the current rayon pool when `parallel`. The caller is the mesh's only writer (it
    /// holds the mesh's write lock) and has validated the range. Allocates nothing.
    pub(crate) fn write_moved(
        &self,
        first: usize,
        positions: &[[f32; 3]],
        moved: f64,
        parallel: bool,
    ) {
        let values: &[f32] = bytemuck::cast_slice(positions);
        let range = 3 * first..3 * first + values.len();
        // Only the writer stores `active` and `stale`, so its own last stores are what it reads.
        let source = &self.copies[self.active.load(Ordering::Relaxed)];
        let target_index = 1 - self.active.load(Ordering::Relaxed);
        let copy = &self.copies[target_index];
        let stale = self.stale.0.load(Ordering::Relaxed)..self.stale.1.load(Ordering::Relaxed);
        self.wait_for_starving_readers();
        // The published copy holds every write so far: 2 * writes in its sequence number.
        let writes = source.sequence.load(Ordering::Relaxed) / 2;
        copy.sequence.store(2 * writes + 1, Ordering::Relaxed);
        // Orders the odd sequence number before every data store below (Boehm's seqlock writer).
        fence(Ordering::Release);
        let covered = range.start <= stale.start && stale.end <= range.end;
        if !covered {
            let (to, from) = (&copy.words[stale.clone()], &source.words[stale]);
            store_words(parallel, to, from, |w| w.load(Ordering::Relaxed));
        }
        store_words(parallel, &copy.words[range.clone()], values, |v| {
            v.to_bits()
        });
        let travel = f64::from_bits(source.travel.load(Ordering::Relaxed)) + moved;
        copy.travel.store(travel.to_bits(), Ordering::Relaxed);
        copy.sequence.store(2 * writes + 2, Ordering::Release);
        // SeqCst pairs with the starving readers' registration (see `read`).
        self.active.store(target_index, Ordering::SeqCst);
        self.stale.0.store(range.start, Ordering::Relaxed);
        self.stale.1.store(range.end, Ordering::Relaxed);
    }

    /// The travel of the positions last published ([`Snapshot::travel`]); for the writer, the only one to
    /// change it.
    pub(crate) fn travel(&self) -> f64 {
        let copy = &self.copies[self.active.load(Ordering::Relaxed)];
        f64::from_bits(copy.travel.load(Ordering::Relaxed))
    }

    /// Spins, then yields, while a starving reader is registered: it may be reading the copy about to be
    /// overwritten. Bounded by one reader computation, and by [`STARVING_WAIT`] for a reader that stopped.
    fn wait_for_starving_readers(&self) {
        let mut spins = 0u32;
        let mut since: Option<std::time::Instant> = None;
        while self.starving.load(Ordering::SeqCst) != 0 {
            if spins < 128 {
                std::hint::spin_loop();
                spins += 1;
            } else if since.get_or_insert_with(std::time::Instant::now).elapsed() < STARVING_WAIT {
                std::thread::yield_now();
            } else {
                return;
            }
        }
    }

    /// Runs `compute` on a consistent copy of the positions and returns its answer. `compute` may run more
    /// than once (a run that overlapped a write is discarded), so it must start from the same inputs each
    /// time; it may see torn positions in a discarded run and must stay memory-safe and bounded on any finite
    /// values, which the mirror only ever holds.
    pub fn read<R>(&self, mut compute: impl FnMut(&Snapshot<'_>) -> R) -> (R, ReadCost) {
        for attempt in 1..=OPTIMISTIC_ATTEMPTS {
            if let Some(r) = self.try_read(&mut compute) {
                return (
                    r,
                    ReadCost {
                        attempts: attempt,
                        fallback: false,
                    },
                );
            }
        }
        // Registered before loading `active` (both SeqCst): any writer that flips `active` after our load sees
        // the registration before it touches the copy we read, so the next attempt cannot be torn. The loop
        // only guards that argument.
        self.starving.fetch_add(1, Ordering::SeqCst);
        let _registered = Registered(&self.starving);
        let mut attempts = OPTIMISTIC_ATTEMPTS;
        loop {
            attempts += 1;
            if let Some(r) = self.try_read(&mut compute) {
                return (
                    r,
                    ReadCost {
                        attempts,
                        fallback: true,
                    },
                );
            }
        }
    }

    /// One optimistic attempt: `None` when a write overlapped it.
    fn try_read<R>(&self, compute: &mut impl FnMut(&Snapshot<'_>) -> R) -> Option<R> {
        let copy = &self.copies[self.active.load(Ordering::SeqCst)];
        let before = copy.sequence.load(Ordering::Acquire);
        if before & 1 == 1 {
            return None;
        }
        let r = compute(&Snapshot {
            words: &copy.words,
            version: before / 2,
            travel: f64::from_bits(copy.travel.load(Ordering::Relaxed)),
        });
        // Orders every position load above before the second sequence load (Boehm's seqlock reader).
        fence(Ordering::Acquire);
        (copy.sequence.load(Ordering::Relaxed) == before).then_some(r)
    }
}

/// Words stored per parallel work item of a large write.
const STORE_CHUNK: usize = 3 * 16 * 4096;

/// Stores `bits(&from[i])` into `words[i]` for every `i`, split over the current rayon pool when `parallel`
/// and `words` is large. Called between a copy's odd and even sequence numbers. Each worker issues its own
/// release fence before its stores, as the writer does after storing the odd number (which the pool's hand-off
/// orders before the worker's fence): a reader that loads any of these words and then runs its acquire fence
/// sees the odd number or a later one, so it discards its attempt. The pool's join orders every store before
/// the even one.
fn store_words<T: Sync>(
    parallel: bool,
    words: &[AtomicU32],
    from: &[T],
    bits: impl Fn(&T) -> u32 + Sync,
) {
    let store = |words: &[AtomicU32], from: &[T]| {
        for (w, f) in words.iter().zip(from) {
            w.store(bits(f), Ordering::Relaxed);
        }
    };
    if parallel && words.len() > STORE_CHUNK {
        words
            .par_chunks(STORE_CHUNK)
            .zip(from.par_chunks(STORE_CHUNK))
            .for_each(|(words, from)| {
                fence(Ordering::Release);
                store(words, from);
            });
    } else {
        store(words, from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn reads_what_was_written() {
        let m = PositionMirror::new(&[0.0, 1.0], &[2.0, 3.0], &[4.0, 5.0]).unwrap();
        let (p, cost) = m.read(|s| s.get(1));
        assert_eq!(p, Vec3::new(1.0, 3.0, 5.0));
        assert_eq!(cost.attempts, 1);
        m.write(1, &[[7.0, 8.0, 9.0]]);
        m.write(0, &[[-1.0, -2.0, -3.0]]);
        let (both, _) = m.read(|s| (s.get(0), s.get(1), s.vertex_count()));
        assert_eq!(
            both,
            (Vec3::new(-1.0, -2.0, -3.0), Vec3::new(7.0, 8.0, 9.0), 2)
        );
    }

    /// Writes of ranges that overlap, cover or miss the previous one: each read sees every write so far
    /// (the copy it reads missed the previous write until this one brought it over), its version counts the
    /// writes and its travel sums their largest moves.
    #[test]
    fn partial_writes_keep_both_copies_whole() {
        const N: usize = 40;
        let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
        let m = PositionMirror::new(&xs, &[0.0; N], &[0.0; N]).unwrap();
        let mut model: Vec<Vec3> = xs.iter().map(|&x| Vec3::new(x, 0.0, 0.0)).collect();
        let mut travel = 0.0;
        let ranges = [
            (0, 40),
            (5, 10),
            (30, 5),
            (0, 0),
            (8, 3),
            (2, 30),
            (39, 1),
            (0, 40),
            (20, 1),
        ];
        for (k, &(first, len)) in ranges.iter().enumerate() {
            let new: Vec<[f32; 3]> = (0..len)
                .map(|i| [(first + i) as f32, k as f32 + 1.0, (i % 3) as f32])
                .collect();
            let moved = new
                .iter()
                .enumerate()
                .map(|(i, p)| Vec3::from(*p).distance(model[first + i]))
                .fold(0.0f32, f32::max);
            travel += f64::from(moved);
            m.write_moved(first, &new, f64::from(moved), false);
            for (i, p) in new.iter().enumerate() {
                model[first + i] = Vec3::from(*p);
            }
            let ((seen, version, travelled), _) = m.read(|s| {
                let seen: Vec<Vec3> = (0..N as u32).map(|v| s.get(v)).collect();
                (seen, s.version(), s.travel())
            });
            assert_eq!(seen, model, "write {k}");
            assert_eq!(version, k as u64 + 1, "write {k}");
            assert_eq!(travelled, travel, "write {k}");
        }
    }

    /// A reader registered as starving that never finishes (its thread suspended mid-read) holds a write up
    /// for [`STARVING_WAIT`] at most, and the write still lands; a read then sees it whole.
    #[test]
    fn a_stopped_reader_delays_a_write_by_the_bound_only() {
        let m = PositionMirror::new(&[0.0; 64], &[0.0; 64], &[0.0; 64]).unwrap();
        m.starving.fetch_add(1, Ordering::SeqCst);
        let poses: Vec<[f32; 3]> = (0..64).map(|i| [i as f32, 1.0, 2.0]).collect();
        let t0 = std::time::Instant::now();
        m.write(0, &poses);
        let waited = t0.elapsed();
        // The write waits once, for the bound.
        assert!(
            waited >= STARVING_WAIT,
            "the writer did not wait: {waited:?}"
        );
        m.starving.fetch_sub(1, Ordering::SeqCst);
        let (all, _) = m.read(|s| (0..64).map(|v| s.get(v)).collect::<Vec<_>>());
        assert!(
            all.iter()
                .enumerate()
                .all(|(i, p)| *p == Vec3::new(i as f32, 1.0, 2.0))
        );
    }

    /// A writer alternating two whole-range poses as fast as it can: every accepted read sees one pose, and
    /// reads finish (the starvation fallback), however the two threads interleave.
    #[test]
    fn reads_are_never_torn_and_always_finish() {
        const N: usize = 2048;
        let a: Vec<[f32; 3]> = (0..N).map(|i| [i as f32, 0.0, 0.0]).collect();
        let b: Vec<[f32; 3]> = (0..N).map(|i| [i as f32, 1.0, 1.0]).collect();
        let zeros = vec![0.0; N];
        let xs: Vec<f32> = a.iter().map(|p| p[0]).collect();
        let m = PositionMirror::new(&xs, &zeros, &zeros).unwrap();
        let stop = AtomicBool::new(false);
        let mut fallbacks = 0;
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    m.write(0, &a);
                    m.write(0, &b);
                }
            });
            for _ in 0..2000 {
                let (ys, cost) = m.read(|s| {
                    let first = s.get(0).y;
                    let mixed = (0..N as u32).any(|v| s.get(v).y != first || s.get(v).z != first);
                    (first, mixed)
                });
                assert!(!ys.1, "a consistent read saw two poses");
                fallbacks += usize::from(cost.fallback);
            }
            stop.store(true, Ordering::Relaxed);
        });
        eprintln!("{fallbacks} of 2000 reads needed the fallback");
    }

    /// As above, with writes large enough to be split over a pool: each worker's stores come after the odd
    /// sequence number, and the even one after all of them, so no accepted read mixes two poses.
    #[test]
    fn reads_are_never_torn_by_a_parallel_write() {
        const N: usize = 2 * STORE_CHUNK / 3 + 1001;
        let pose = |y: f32| -> Vec<[f32; 3]> { (0..N).map(|i| [i as f32, y, y]).collect() };
        let (a, b) = (pose(0.0), pose(1.0));
        let xs: Vec<f32> = a.iter().map(|p| p[0]).collect();
        let zeros = vec![0.0; N];
        let m = PositionMirror::new(&xs, &zeros, &zeros).unwrap();
        // Built here: the haptic mirror sits below the backends, which own `worker_pool`.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                pool.install(|| {
                    while !stop.load(Ordering::Relaxed) {
                        m.write_moved(0, &a, 1.0, true);
                        m.write_moved(0, &b, 1.0, true);
                    }
                })
            });
            while m.read(|s| s.version()).0 == 0 {
                std::thread::yield_now();
            }
            for _ in 0..300 {
                let ((first, mixed, version), _) = m.read(|s| {
                    let first = s.get(0).y;
                    let mixed = (0..N as u32).any(|v| s.get(v).y != first || s.get(v).z != first);
                    (first, mixed, s.version())
                });
                assert!(!mixed, "a consistent read saw two poses");
                // Odd writes are pose a, even ones pose b.
                assert_eq!(first, if version % 2 == 1 { 0.0 } else { 1.0 });
            }
            stop.store(true, Ordering::Relaxed);
        });
    }
}
