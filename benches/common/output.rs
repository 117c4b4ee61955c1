//! What a benchmark prints on stdout, kept and written to `target/benchmarks/<name>.md` at the end: the
//! source that `scripts/bench-docs.sh` copies into `docs/benchmarks/`.

use std::fmt::{Display, Write as _};
use std::path::PathBuf;

/// Prints a line on stdout and keeps it in the report: `report!(r)` for an empty line, else
/// `report!(r, "format", args...)` as with `println!`.
#[allow(unused_macros)] // the examples that include these helpers print with `println!`
macro_rules! report {
    ($report:expr) => {
        $report.line("")
    };
    ($report:expr, $($arg:tt)*) => {
        $report.line(format_args!($($arg)*))
    };
}
pub(crate) use report;

/// The lines a benchmark printed on stdout, to be saved under [`output_dir`] as `<name>.md`.
pub struct Report {
    name: &'static str,
    text: String,
}

impl Report {
    /// An empty report, saved as `<name>.md`.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            text: String::new(),
        }
    }

    /// Prints `line` on stdout and keeps it.
    pub fn line(&mut self, line: impl Display) {
        println!("{line}");
        let _ = writeln!(self.text, "{line}");
    }

    /// Ends the report with the bench's total time since `started`, then saves it (see [`Self::save`]).
    pub fn finish(&mut self, started: std::time::Instant) {
        self.line("");
        self.line(format_args!(
            "total bench time: {:.1} s",
            started.elapsed().as_secs_f64()
        ));
        self.save();
    }

    /// Writes the kept lines to `<output_dir>/<name>.md` and says where on stderr; exits with an error if it
    /// cannot (the docs script relies on the file).
    pub fn save(&self) {
        save_file(&format!("{}.md", self.name), &self.text);
    }
}

/// `$CARGO_TARGET_DIR/benchmarks`, or the workspace's `target/benchmarks` (at the repository root, also for the
/// benches of the member `peers/`) when that variable is not set.
pub fn output_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => super::root_dir().join("target"),
    }
    .join("benchmarks")
}

/// Writes `contents` to `<output_dir>/<file>` (creating the folder) and says where on stderr; exits with an
/// error if it cannot.
pub fn save_file(file: &str, contents: &str) {
    let dir = output_dir();
    let path = dir.join(file);
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, contents)) {
        eprintln!("cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
    eprintln!("wrote {}", path.display());
}
