//! Latency histograms (HdrHistogram, microsecond resolution, 3 significant digits) and the
//! percentiles every report quotes.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Largest latency a histogram records exactly (60 s); longer samples are clamped to it.
const MAX_US: u64 = 60_000_000;

/// A latency histogram in microseconds.
#[derive(Clone)]
pub struct Latency(Histogram<u64>);

impl Default for Latency {
    fn default() -> Self {
        Latency(Histogram::new_with_bounds(1, MAX_US, 3).expect("valid bounds"))
    }
}

impl Latency {
    /// Records one sample.
    pub fn record(&mut self, d: Duration) {
        let us = (d.as_micros() as u64).clamp(1, MAX_US);
        self.0.record(us).expect("clamped into bounds");
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Latency) {
        self.0.add(&other.0).expect("same bounds");
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// No samples.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value at quantile `q` (0..=1), in milliseconds; 0 without samples.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        self.0.value_at_quantile(q) as f64 / 1000.0
    }

    /// The percentiles, in milliseconds.
    pub fn summary(&self) -> Percentiles {
        let ms = |q: f64| self.0.value_at_quantile(q) as f64 / 1000.0;
        Percentiles {
            count: self.0.len(),
            p50_ms: ms(0.50),
            p99_ms: ms(0.99),
            p999_ms: ms(0.999),
            max_ms: self.0.max() as f64 / 1000.0,
        }
    }
}

/// What a report says of a latency distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// Largest sample.
    pub max_ms: f64,
}

impl std::fmt::Display for Percentiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "n={} p50={:.2}ms p99={:.2}ms p99.9={:.2}ms max={:.2}ms",
            self.count, self.p50_ms, self.p99_ms, self.p999_ms, self.max_ms
        )
    }
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_samples() {
        let mut l = Latency::default();
        for ms in 1..=1000u64 {
            l.record(Duration::from_millis(ms));
        }
        let s = l.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_ms - 500.0).abs() < 1.0, "{s}");
        assert!((s.p99_ms - 990.0).abs() < 1.0, "{s}");
        assert!((s.max_ms - 1000.0).abs() < 1.0, "{s}");
        let mut other = Latency::default();
        other.record(Duration::from_secs(3600));
        l.merge(&other);
        assert_eq!(l.len(), 1001);
        assert_eq!(l.summary().max_ms, 60_000.0f64.max(l.summary().max_ms));
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
