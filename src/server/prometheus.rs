//! The Prometheus text exposition format (version 0.0.4): metric families,
//! each with one `# HELP` and one `# TYPE` line before its samples, label
//! values and help text escaped.

use std::fmt::{Display, Write};

use crate::llm::telemetry::HistogramSnapshot;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// A label value with `\`, `"` and newlines escaped.
pub fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Help text with `\` and newlines escaped (quotes are fine there).
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A float as Prometheus writes it: `+Inf`, `-Inf`, `NaN`, or the number.
fn float(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value == f64::INFINITY {
        "+Inf".into()
    } else if value == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        value.to_string()
    }
}

/// A page of metrics, written family by family.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    /// Start the family `name`; the samples written next belong to it.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.out, "# TYPE {name} {}", kind.as_str());
    }

    /// One sample of the current family; `name` is the family's, or for a
    /// histogram its `_bucket`, `_sum` or `_count` series.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (key, value)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{key}=\"{}\"", escape_label(value));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }

    /// A float sample (`+Inf`, `NaN` written as Prometheus reads them).
    pub fn sample_f64(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.sample(name, labels, float(value));
    }

    /// A histogram's series: cumulative `_bucket`s with `le`, `_sum`, `_count`.
    pub fn histogram(&mut self, name: &str, labels: &[(&str, &str)], h: &HistogramSnapshot) {
        let bucket = format!("{name}_bucket");
        for &(bound, count) in &h.cumulative {
            let le = float(bound);
            let mut with_le = labels.to_vec();
            with_le.push(("le", &le));
            self.sample(&bucket, &with_le, count);
        }
        self.sample_f64(&format!("{name}_sum"), labels, h.sum_seconds);
        self.sample(&format!("{name}_count"), labels, h.count);
    }

    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::telemetry::LatencyHistogram;
    use std::time::Duration;

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut e = Exposition::default();
        e.family("x_total", Kind::Counter, "Line one\nback\\slash \"quoted\"");
        e.sample("x_total", &[("name", "a \"b\"\\c\nd")], 3);
        let text = e.finish();
        assert_eq!(
            text,
            "# HELP x_total Line one\\nback\\\\slash \"quoted\"\n\
             # TYPE x_total counter\n\
             x_total{name=\"a \\\"b\\\"\\\\c\\nd\"} 3\n"
        );
    }

    #[test]
    fn a_histogram_is_written_as_cumulative_buckets_sum_and_count() {
        let h = LatencyHistogram::default();
        h.record(Duration::from_millis(2));
        h.record(Duration::from_millis(300));
        h.record(Duration::from_secs(200));
        let mut e = Exposition::default();
        e.family("lat_seconds", Kind::Histogram, "Latency.");
        e.histogram("lat_seconds", &[("role", "policy")], &h.snapshot());
        let text = e.finish();
        let buckets: Vec<(&str, u64)> = text
            .lines()
            .filter(|l| l.starts_with("lat_seconds_bucket"))
            .map(|l| {
                let le = l.split(",le=\"").nth(1).unwrap().split('"').next().unwrap();
                (le, l.rsplit(' ').next().unwrap().parse().unwrap())
            })
            .collect();
        assert_eq!(buckets.first(), Some(&("0.005", 1)));
        assert!(buckets.contains(&("0.25", 1)));
        assert!(buckets.contains(&("0.5", 2)));
        assert!(buckets.contains(&("120", 2)));
        assert_eq!(buckets.last(), Some(&("+Inf", 3)));
        assert!(
            buckets.windows(2).all(|w| w[0].1 <= w[1].1),
            "cumulative: {buckets:?}"
        );
        assert!(text.contains("lat_seconds_bucket{role=\"policy\",le=\"+Inf\"} 3\n"));
        assert!(text.contains("lat_seconds_sum{role=\"policy\"} 200.302\n"));
        assert!(text.contains("lat_seconds_count{role=\"policy\"} 3\n"));
        assert_eq!(text.matches("# TYPE").count(), 1);
    }
}
