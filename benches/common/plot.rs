//! A small log-log line plot written as standalone SVG (generic font names only, nothing outside the file),
//! for the benchmarks' figures.

use std::fmt::Write as _;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 480.0;
/// The plot area: left, top, right, bottom edges.
const AREA: [f64; 4] = [78.0, 62.0, 700.0, 420.0];
/// Okabe-Ito colours (told apart with colour-blindness too), one per series in order.
const COLOURS: [&str; 6] = [
    "#0072B2", "#D55E00", "#E69F00", "#009E73", "#000000", "#CC79A7",
];
/// Legend rows' height and the width of one label character (11 px sans-serif, a generous estimate).
const ROW: f64 = 18.0;
const CHAR: f64 = 6.2;

/// One line of the plot: its legend label, its points (x, y), both positive, and whether it is dashed (a
/// reference rather than a measured method).
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

/// A log-log plot: title, subtitle (smaller, under it), axis titles, tick labels for powers of ten.
pub struct LogLog {
    pub title: String,
    pub subtitle: String,
    pub x_title: String,
    pub y_title: String,
    pub x_tick: fn(f64) -> String,
    pub y_tick: fn(f64) -> String,
    pub series: Vec<Series>,
}

/// Maps data to picture coordinates. Bounds are base-10 logarithms: the y axis spans whole decades, the x axis
/// the data and a quarter decade either side (mesh sizes leave most of a decade empty at each end).
struct Scale {
    x: (f64, f64),
    y: (f64, f64),
}

impl Scale {
    fn of(series: &[Series]) -> Self {
        let logs = |axis: fn(&(f64, f64)) -> f64| {
            let values = series.iter().flat_map(|s| s.points.iter().map(axis));
            let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v.log10()), hi.max(v.log10()))
            });
            if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
        };
        let (x, y) = (logs(|p| p.0), logs(|p| p.1));
        Self {
            x: (x.0 - 0.25, x.1 + 0.25),
            y: (y.0.floor(), y.1.ceil().max(y.0.floor() + 1.0)),
        }
    }

    fn px(&self, x: f64) -> f64 {
        let [left, _, right, _] = AREA;
        left + (x.log10() - self.x.0) / (self.x.1 - self.x.0) * (right - left)
    }

    fn py(&self, y: f64) -> f64 {
        let [_, top, _, bottom] = AREA;
        bottom - (y.log10() - self.y.0) / (self.y.1 - self.y.0) * (bottom - top)
    }

    /// The powers of ten within `range` (logarithms), with a flag for the whole decades.
    fn ticks(range: (f64, f64)) -> impl Iterator<Item = (f64, bool)> {
        (range.0.floor() as i32..=range.1.ceil() as i32)
            .flat_map(|e| (1..10).map(move |m| (f64::from(m) * 10f64.powi(e), m == 1)))
            .filter(move |&(v, _)| (range.0 - 1e-9..=range.1 + 1e-9).contains(&v.log10()))
    }
}

/// `&`, `<` and `>` escaped for SVG text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl LogLog {
    /// The whole picture, 720 x 480.
    pub fn svg(&self) -> String {
        let scale = Scale::of(&self.series);
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif">
<rect width="100%" height="100%" fill="white"/>"#
        );
        self.titles(&mut svg);
        grid(&mut svg, &scale, self.x_tick, self.y_tick);
        for (k, s) in self.series.iter().enumerate() {
            line(&mut svg, &scale, s, k);
        }
        self.legend(&mut svg, &scale);
        svg.push_str("</svg>\n");
        svg
    }

    fn titles(&self, svg: &mut String) {
        let [left, top, right, bottom] = AREA;
        let mid = (left + right) / 2.0;
        let _ = writeln!(
            svg,
            r##"<text x="{mid}" y="24" text-anchor="middle" font-size="16" font-weight="bold">{}</text>
<text x="{mid}" y="44" text-anchor="middle" font-size="11" fill="#444">{}</text>
<text x="{mid}" y="{}" text-anchor="middle" font-size="13">{}</text>
<text transform="translate(18 {}) rotate(-90)" text-anchor="middle" font-size="13">{}</text>"##,
            escape(&self.title),
            escape(&self.subtitle),
            HEIGHT - 18.0,
            escape(&self.x_title),
            (top + bottom) / 2.0,
            escape(&self.y_title),
        );
    }

    /// The labels and their markers, in a box in the first corner of the plot area that no line crosses (top
    /// left, bottom right, top right, bottom left), else the top left.
    fn legend(&self, svg: &mut String, scale: &Scale) {
        let longest = self.series.iter().map(|s| s.label.chars().count()).max();
        let (w, h) = (
            44.0 + CHAR * longest.unwrap_or(0) as f64,
            8.0 + ROW * self.series.len() as f64,
        );
        let [left, top, right, bottom] = AREA;
        let corners = [
            (left + 10.0, top + 10.0),
            (right - 10.0 - w, bottom - 10.0 - h),
            (right - 10.0 - w, top + 10.0),
            (left + 10.0, bottom - 10.0 - h),
        ];
        let free = |&(x, y): &(f64, f64)| !self.crosses(scale, [x, y, x + w, y + h]);
        let (x, y) = corners.iter().copied().find(free).unwrap_or(corners[0]);
        let _ = writeln!(
            svg,
            r##"<rect x="{x}" y="{y}" width="{w:.0}" height="{h}" fill="white" fill-opacity="0.9" stroke="#999"/>"##
        );
        for (k, s) in self.series.iter().enumerate() {
            let cy = y + 4.0 + ROW * (k as f64 + 0.5);
            let _ = writeln!(
                svg,
                r#"<line x1="{}" y1="{cy}" x2="{}" y2="{cy}" {}/>
<text x="{}" y="{}" font-size="11">{}</text>"#,
                x + 6.0,
                x + 32.0,
                stroke(s, k),
                x + 38.0,
                cy + 4.0,
                escape(&s.label)
            );
            marker(svg, x + 19.0, cy, k);
        }
    }

    /// Whether a line or marker comes within a few pixels of the box `[left, top, right, bottom]`.
    fn crosses(&self, scale: &Scale, [l, t, r, b]: [f64; 4]) -> bool {
        let inside = |(x, y): (f64, f64)| x > l - 6.0 && x < r + 6.0 && y > t - 6.0 && y < b + 6.0;
        self.series.iter().any(|s| {
            let p: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|&(x, y)| (scale.px(x), scale.py(y)))
                .collect();
            p.iter().any(|&q| inside(q))
                || p.windows(2).any(|w| {
                    (0..=32).any(|i| {
                        let f = f64::from(i) / 32.0;
                        inside((
                            w[0].0 + f * (w[1].0 - w[0].0),
                            w[0].1 + f * (w[1].1 - w[0].1),
                        ))
                    })
                })
        })
    }
}

/// The frame; at every power of ten a grey line, a tick and its label; short ticks at 2..9 times them.
fn grid(svg: &mut String, scale: &Scale, x_tick: fn(f64) -> String, y_tick: fn(f64) -> String) {
    let [left, top, right, bottom] = AREA;
    for (v, decade) in Scale::ticks(scale.x) {
        let x = scale.px(v);
        let _ = if decade {
            writeln!(
                svg,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#ddd"/>
<line x1="{x:.1}" y1="{bottom}" x2="{x:.1}" y2="{}" stroke="black"/>
<text x="{x:.1}" y="{}" text-anchor="middle" font-size="12">{}</text>"##,
                bottom + 6.0,
                bottom + 20.0,
                escape(&x_tick(v))
            )
        } else {
            writeln!(
                svg,
                r#"<line x1="{x:.1}" y1="{bottom}" x2="{x:.1}" y2="{}" stroke="black"/>"#,
                bottom + 3.0
            )
        };
    }
    for (v, decade) in Scale::ticks(scale.y) {
        let y = scale.py(v);
        let _ = if decade {
            writeln!(
                svg,
                r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#ddd"/>
<line x1="{}" y1="{y:.1}" x2="{left}" y2="{y:.1}" stroke="black"/>
<text x="{}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"##,
                left - 6.0,
                left - 9.0,
                y + 4.0,
                escape(&y_tick(v))
            )
        } else {
            writeln!(
                svg,
                r#"<line x1="{}" y1="{y:.1}" x2="{left}" y2="{y:.1}" stroke="black"/>"#,
                left - 3.0
            )
        };
    }
    let _ = writeln!(
        svg,
        r#"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        right - left,
        bottom - top
    );
}

/// Series `k`'s stroke attributes: its colour, 2 px, dashed if it is a reference.
fn stroke(series: &Series, k: usize) -> String {
    format!(
        r#"stroke="{}" stroke-width="2"{}"#,
        COLOURS[k % COLOURS.len()],
        if series.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        }
    )
}

/// Series `k` as a polyline with a marker at every point.
fn line(svg: &mut String, scale: &Scale, series: &Series, k: usize) {
    let points: Vec<String> = series
        .points
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", scale.px(x), scale.py(y)))
        .collect();
    let _ = writeln!(
        svg,
        r#"<polyline points="{}" fill="none" {}/>"#,
        points.join(" "),
        stroke(series, k)
    );
    for &(x, y) in &series.points {
        marker(svg, scale.px(x), scale.py(y), k);
    }
}

/// Series `k`'s marker centred on (x, y): circle, square, triangle, diamond, downward triangle, then again.
fn marker(svg: &mut String, x: f64, y: f64, k: usize) {
    let style = format!(
        r#"fill="{}" stroke="white" stroke-width="0.8""#,
        COLOURS[k % COLOURS.len()]
    );
    let _ = match k % 5 {
        0 => writeln!(svg, r#"<circle cx="{x:.1}" cy="{y:.1}" r="4.5" {style}/>"#),
        1 => writeln!(
            svg,
            r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" {style}/>"#,
            x - 4.0,
            y - 4.0
        ),
        2 => writeln!(
            svg,
            r#"<path d="M{x:.1},{:.1} l5,9 h-10 z" {style}/>"#,
            y - 5.5
        ),
        3 => writeln!(
            svg,
            r#"<path d="M{x:.1},{:.1} l5,5 l-5,5 l-5,-5 z" {style}/>"#,
            y - 5.0
        ),
        _ => writeln!(
            svg,
            r#"<path d="M{x:.1},{:.1} l5,-9 h-10 z" {style}/>"#,
            y + 5.5
        ),
    };
}

/// A power of ten as a count: "1k", "10k", "100k", "1M".
pub fn count_label(n: f64) -> String {
    match n {
        _ if n >= 1e6 => format!("{:.0}M", n / 1e6),
        _ if n >= 1e3 => format!("{:.0}k", n / 1e3),
        _ => format!("{n:.0}"),
    }
}

/// A power of ten of seconds: "100 ns", "1 µs", "10 ms", "1 s".
pub fn time_label(s: f64) -> String {
    match s {
        _ if s >= 1.0 => format!("{s:.0} s"),
        _ if s >= 1e-3 => format!("{:.0} ms", s * 1e3),
        _ if s >= 1e-6 => format!("{:.0} µs", s * 1e6),
        _ => format!("{:.0} ns", s * 1e9),
    }
}
