//! SVG primitives the charts share: escaping, scales and their ticks,
//! number formatting, the colour of each lock, and a small writer that
//! gives every mark its `<title>` (the numbers, for hover and for text
//! readers).

use std::fmt::Write;

/// Escapes text for XML element content and attribute values.
pub use crate::escape::html as esc;

/// A number short enough for an axis or a label: 3 significant digits,
/// k from ten thousand, M from a million, G from ten billion.
pub fn num(v: f64) -> String {
    let a = v.abs();
    let (v, suffix) = if a >= 1e10 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    // 2.50 -> 2.5, 10.0 -> 10: shorter, same value.
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// Colours for locks (and other series): Okabe-Ito and Tableau, distinct
/// for colour-blind readers in the first eight, always paired with a
/// label or a legend.
const PALETTE: [&str; 12] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000", "#f0e442",
    "#8c564b", "#7f7f7f", "#17becf", "#9467bd",
];

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A linear or logarithmic map from data to pixels.
#[derive(Clone, Copy)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub from: f64,
    pub to: f64,
    pub log: bool,
}

impl Scale {
    /// A scale over `values` (non-finite and, on a log scale, non-positive
    /// ones ignored), padded to nice bounds; `None` when nothing is left.
    pub fn fit(
        values: impl IntoIterator<Item = f64>,
        from: f64,
        to: f64,
        log: bool,
    ) -> Option<Scale> {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for v in values {
            if v.is_finite() && (!log || v > 0.0) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        if lo > hi {
            return None;
        }
        let (lo, hi) = if log {
            let lo = 10f64.powf(lo.log10().floor());
            let hi = 10f64.powf(hi.log10().ceil());
            (lo, if hi <= lo { lo * 10.0 } else { hi })
        } else {
            let lo = lo.min(0.0);
            let hi = if hi <= lo { lo + 1.0 } else { hi };
            let step = nice_step((hi - lo) / 4.0);
            ((lo / step).floor() * step, (hi / step).ceil() * step)
        };
        Some(Scale {
            lo,
            hi,
            from,
            to,
            log,
        })
    }

    pub fn at(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(self.lo * 1e-3).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + t * (self.to - self.from)
    }

    /// Tick values: 1-2-5 steps on a linear scale, powers of ten on a log
    /// scale (with 2 and 5 between when it spans at most two decades).
    pub fn ticks(&self) -> Vec<f64> {
        if self.log {
            let decades = (self.hi / self.lo).log10().round() as i32;
            let mut out = Vec::new();
            let mut p = self.lo;
            for _ in 0..=decades {
                out.push(p);
                if decades <= 2 {
                    for m in [2.0, 5.0] {
                        if p * m < self.hi {
                            out.push(p * m);
                        }
                    }
                }
                p *= 10.0;
            }
            out.retain(|t| *t <= self.hi * 1.0001);
            out
        } else {
            let step = nice_step((self.hi - self.lo) / 4.0);
            let mut out = Vec::new();
            let mut t = self.lo;
            while t <= self.hi + step * 1e-6 {
                out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
                t += step;
            }
            out
        }
    }
}

/// The 1, 2 or 5 times a power of ten nearest above `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// Ticks for a ratio axis between `lo` and `hi` (near 1): steps of 0.01
/// to 1, at most eight of them, rounded to hundredths.
pub fn ratio_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    let step = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
        .into_iter()
        .find(|s| span / s <= 8.0)
        .unwrap_or(2.0);
    let mut out = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi {
        out.push((t * 100.0).round() / 100.0);
        t += step;
    }
    out
}

/// An SVG document being written; every mark takes its `<title>`.
pub struct Svg {
    pub width: f64,
    pub height: f64,
    body: String,
}

impl Svg {
    pub fn new(width: f64, height: f64) -> Svg {
        Svg {
            width,
            height,
            body: String::new(),
        }
    }

    fn titled(&mut self, open: String, title: &str) {
        if title.is_empty() {
            let _ = write!(self.body, "{open}/>");
        } else {
            let _ = write!(
                self.body,
                "{open}><title>{}</title></{}>",
                esc(title),
                tag(&open)
            );
        }
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, title: &str) {
        let open = format!(
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}""#,
            w.max(0.0),
            h.max(0.0)
        );
        self.titled(open, title);
    }

    pub fn line(
        &mut self,
        (x1, y1): (f64, f64),
        (x2, y2): (f64, f64),
        stroke: &str,
        width: f64,
        title: &str,
    ) {
        let open = format!(
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}""#
        );
        self.titled(open, title);
    }

    /// A vertical line at `x` from `top` to `bottom`: solid with a title,
    /// or dashed.
    pub fn rule(&mut self, x: f64, top: f64, bottom: f64, stroke: &str, title: Option<&str>) {
        match title {
            Some(t) => self.line((x, top), (x, bottom), stroke, 1.0, t),
            None => self.dashed(x, top, x, bottom, stroke),
        }
    }

    pub fn dashed(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str) {
        let _ = write!(
            self.body,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-dasharray="4 3"/>"#
        );
    }

    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str, title: &str) {
        let open = format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}""#);
        self.titled(open, title);
    }

    /// A polyline through `points` (none drawn for fewer than two).
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, title: &str) {
        if points.len() < 2 {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let open = format!(
            r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="1.8""#,
            pts.join(" ")
        );
        self.titled(open, title);
    }

    /// Text; `anchor` is start, middle or end; `class` picks its CSS.
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, class: &str, s: &str) {
        let _ = write!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" class="{class}">{}</text>"#,
            esc(s)
        );
    }

    /// Text rotated a quarter turn counter-clockwise (a y-axis label).
    pub fn vtext(&mut self, x: f64, y: f64, class: &str, s: &str) {
        let _ = write!(
            self.body,
            r#"<text transform="translate({x:.1},{y:.1}) rotate(-90)" text-anchor="middle" class="{class}">{}</text>"#,
            esc(s)
        );
    }

    /// A horizontal axis at `y` with ticks and grid lines up to `top`.
    pub fn x_axis(&mut self, scale: &Scale, y: f64, top: f64, label: &str) {
        self.x_axis_at(scale, &scale.ticks(), y, top, label);
    }

    /// [`Svg::x_axis`] with the ticks given (a ratio axis near 1 wants
    /// steps of a few percent, not the scale's decades).
    pub fn x_axis_at(&mut self, scale: &Scale, ticks: &[f64], y: f64, top: f64, label: &str) {
        for &t in ticks {
            let x = scale.at(t);
            self.line((x, top), (x, y), "#e5e5e5", 1.0, "");
            self.text(x, y + 12.0, "middle", "tick", &num(t));
        }
        self.line((scale.from, y), (scale.to, y), "#888", 1.0, "");
        if !label.is_empty() {
            self.text(
                (scale.from + scale.to) / 2.0,
                y + 26.0,
                "middle",
                "axis",
                label,
            );
        }
    }

    /// A vertical axis at `x` with ticks and grid lines across to `right`.
    pub fn y_axis(&mut self, scale: &Scale, x: f64, right: f64, label: &str) {
        for t in scale.ticks() {
            let y = scale.at(t);
            self.line((x, y), (right, y), "#e5e5e5", 1.0, "");
            self.text(x - 4.0, y + 3.5, "end", "tick", &num(t));
        }
        self.line((x, scale.from), (x, scale.to), "#888", 1.0, "");
        if !label.is_empty() {
            self.vtext(10.0, (scale.from + scale.to) / 2.0, "axis", label);
        }
    }

    pub fn raw(&mut self, s: &str) {
        self.body.push_str(s);
    }

    /// The document, with `label` as its accessible name.
    pub fn finish(self, label: &str) -> String {
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{l}">{b}</svg>"#,
            w = self.width,
            h = self.height,
            l = esc(label),
            b = self.body
        )
    }
}

/// The element name of an opening tag written by [`Svg`].
fn tag(open: &str) -> &str {
    open[1..].split(' ').next().unwrap_or("g")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(esc(r#"<a & "b">"#), "&lt;a &amp; &quot;b&quot;&gt;");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(1234.0), "1234");
        assert_eq!(num(123_456.0), "123k");
        assert_eq!(num(0.0123), "0.012");
    }

    #[test]
    fn scales_cover_their_data_with_nice_ticks() {
        let s = Scale::fit([3.0, 97.0], 0.0, 100.0, false).unwrap();
        assert_eq!((s.lo, s.hi), (0.0, 100.0));
        assert_eq!(s.ticks(), vec![0.0, 50.0, 100.0]);
        let l = Scale::fit([3.0, 4000.0, -1.0], 0.0, 100.0, true).unwrap();
        assert_eq!((l.lo, l.hi), (1.0, 10_000.0));
        assert_eq!(l.ticks(), vec![1.0, 10.0, 100.0, 1000.0, 10_000.0]);
        assert!((l.at(100.0) - 50.0).abs() < 1e-9);
        assert!(Scale::fit([f64::NAN, 0.0], 0.0, 1.0, true).is_none());
    }

    #[test]
    fn marks_carry_their_title() {
        let mut s = Svg::new(10.0, 10.0);
        s.rect(0.0, 0.0, 1.0, 1.0, "red", "x86_64 cas: 3 ns");
        s.circle(1.0, 1.0, 2.0, "red", "");
        let doc = s.finish("chart");
        assert!(doc.contains("<rect x=\"0.0\" y=\"0.0\" width=\"1.0\" height=\"1.0\" fill=\"red\"><title>x86_64 cas: 3 ns</title></rect>"));
        assert!(doc.contains("<circle cx=\"1.0\" cy=\"1.0\" r=\"2\" fill=\"red\"/>"));
    }
}
