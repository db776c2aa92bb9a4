//! What a job used, per role: model calls, tokens, latency percentiles of the
//! calls, and cost in USD from the prices of the role's endpoint. A role whose
//! endpoint has no prices costs "unknown", never 0, and so does any total it
//! is part of.

use std::fmt;

use serde::Serialize;

use std::collections::BTreeMap;

use crate::config::{Job, Prices};
use crate::store::{JobSummary, JudgeCallRow, LatencyHistogram};

/// A cost in USD, or unknown (no prices): an unknown cost is never shown as 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cost {
    Usd(f64),
    Unknown,
}

impl Cost {
    /// What `prompt_tokens` and `completion_tokens` cost at `prices` (USD per
    /// million tokens); unknown without prices, whatever the tokens.
    pub fn of(prompt_tokens: i64, completion_tokens: i64, prices: Option<Prices>) -> Cost {
        match prices {
            None => Cost::Unknown,
            Some(p) => Cost::Usd(
                (prompt_tokens as f64 * p.input_per_million
                    + completion_tokens as f64 * p.output_per_million)
                    / 1_000_000.0,
            ),
        }
    }

    /// The sum; unknown if any part is.
    pub fn total(costs: impl IntoIterator<Item = Cost>) -> Cost {
        costs
            .into_iter()
            .try_fold(0.0, |sum, cost| match cost {
                Cost::Usd(usd) => Some(sum + usd),
                Cost::Unknown => None,
            })
            .map_or(Cost::Unknown, Cost::Usd)
    }

    pub fn usd(self) -> Option<f64> {
        match self {
            Cost::Usd(usd) => Some(usd),
            Cost::Unknown => None,
        }
    }
}

/// `$12.34` from a dollar up, three significant digits below (`$0.00123`).
impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Cost::Unknown => f.write_str("unknown"),
            Cost::Usd(usd) if usd == 0.0 || usd.abs() >= 1.0 || !usd.is_finite() => {
                write!(f, "${usd:.2}")
            }
            Cost::Usd(usd) => {
                let decimals = (2.0 - usd.abs().log10().floor()).clamp(2.0, 12.0) as usize;
                write!(f, "${usd:.decimals$}")
            }
        }
    }
}

/// Latency percentiles of model calls, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    pub p50: i64,
    pub p95: i64,
    pub p99: i64,
}

impl Percentiles {
    /// Of a `(latency_ms, calls)` histogram in ascending latency; `None` without calls.
    pub fn of(counts: &[(i64, i64)]) -> Option<Percentiles> {
        Some(Percentiles {
            p50: percentile(counts, 50)?,
            p95: percentile(counts, 95)?,
            p99: percentile(counts, 99)?,
        })
    }
}

/// The nearest-rank percentile of a `(value, count)` histogram in ascending
/// value: the smallest value with at least `percent`% of the observations at
/// or below it, i.e. the value of rank ⌈percent/100 · n⌉. Always an observed
/// value, never an interpolation. `None` when there are no observations.
pub fn percentile(counts: &[(i64, i64)], percent: u32) -> Option<i64> {
    let n: i64 = counts.iter().map(|&(_, c)| c.max(0)).sum();
    if n == 0 {
        return None;
    }
    let percent = i64::from(percent.min(100));
    let rank = ((percent * n + 99) / 100).max(1);
    let mut seen = 0;
    for &(value, count) in counts {
        seen += count.max(0);
        if seen >= rank {
            return Some(value);
        }
    }
    counts.last().map(|&(value, _)| value)
}

/// One role's use of its model over a job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleReport {
    /// `policy`, `user`, `judge`.
    pub role: String,
    /// The judge's name, for the `judge` role (one report per judge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The endpoint the role names, when known.
    pub endpoint: Option<String>,
    pub calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// Over the calls whose reply was stored (one message each); `None` without any.
    pub latency: Option<Percentiles>,
    pub cost: Cost,
}

/// The endpoint a role of `job` names.
fn endpoint_of<'a>(job: &'a Job, role: &str) -> Option<&'a str> {
    match role {
        "policy" => Some(&job.policy_endpoint),
        "user" => Some(&job.user_endpoint),
        _ => None,
    }
}

/// Per role of `summary`, in its order, priced by the role's endpoint in `job`
/// (every cost is unknown without the job).
pub fn role_reports(summary: &JobSummary, job: Option<&Job>) -> Vec<RoleReport> {
    summary
        .usage
        .iter()
        .filter(|usage| usage.role != crate::sim::episode::ENV_USAGE)
        .map(|usage| {
            let endpoint = job.and_then(|job| endpoint_of(job, &usage.role));
            let prices = job
                .zip(endpoint)
                .and_then(|(job, name)| job.endpoints.get(name))
                .and_then(|config| config.prices());
            let latency = summary
                .call_latencies
                .iter()
                .find(|h: &&LatencyHistogram| h.author == usage.role)
                .and_then(|h| Percentiles::of(&h.counts));
            RoleReport {
                role: usage.role.clone(),
                judge: None,
                endpoint: endpoint.map(str::to_string),
                calls: usage.calls,
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                latency,
                cost: Cost::of(usage.prompt_tokens, usage.completion_tokens, prices),
            }
        })
        .collect()
}

/// The endpoint a judge's calls went to, and its prices.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgePrices {
    pub endpoint: String,
    /// Of calls made one by one; `None`: unknown.
    pub prices: Option<Prices>,
    /// Of calls answered through the Batch API; `None`: unknown.
    pub batch: Option<Prices>,
}

/// A judge's endpoint and prices; `None` when unknown.
pub type JudgeEndpoint<'a> = &'a dyn Fn(&str) -> Option<JudgePrices>;

/// Per judge name of `calls` (in name order): its model calls, tokens,
/// latency percentiles and cost, priced by the endpoint `endpoint_of` names
/// for the judge (`None`: unknown, and so is its cost). Calls answered
/// through a batch are priced at the endpoint's batch prices.
pub fn judge_reports(calls: &[JudgeCallRow], endpoint_of: JudgeEndpoint<'_>) -> Vec<RoleReport> {
    let mut by_judge: BTreeMap<&str, Vec<&JudgeCallRow>> = BTreeMap::new();
    for call in calls {
        by_judge.entry(&call.judge_name).or_default().push(call);
    }
    by_judge
        .into_iter()
        .map(|(judge, calls)| {
            let prompt_tokens = calls.iter().map(|c| c.call.prompt_tokens).sum();
            let completion_tokens = calls.iter().map(|c| c.call.completion_tokens).sum();
            let mut latencies: BTreeMap<i64, i64> = BTreeMap::new();
            for c in &calls {
                *latencies.entry(c.call.latency_ms).or_default() += 1;
            }
            let histogram: Vec<(i64, i64)> = latencies.into_iter().collect();
            let endpoint = endpoint_of(judge);
            let cost = Cost::total([false, true].into_iter().filter_map(|batch| {
                let part: Vec<_> = calls.iter().filter(|c| c.call.batch == batch).collect();
                if part.is_empty() {
                    return None;
                }
                let prices = endpoint
                    .as_ref()
                    .and_then(|e| if batch { e.batch } else { e.prices });
                Some(Cost::of(
                    part.iter().map(|c| c.call.prompt_tokens).sum(),
                    part.iter().map(|c| c.call.completion_tokens).sum(),
                    prices,
                ))
            }));
            RoleReport {
                role: "judge".into(),
                judge: Some(judge.to_string()),
                endpoint: endpoint.map(|e| e.endpoint),
                calls: calls.len() as i64,
                prompt_tokens,
                completion_tokens,
                latency: Percentiles::of(&histogram),
                cost,
            }
        })
        .collect()
}

/// The whole job's cost: unknown if any role's is.
pub fn total_cost(roles: &[RoleReport]) -> Cost {
    Cost::total(roles.iter().map(|r| r.cost))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::UsageRow;

    fn prices(input: f64, output: f64) -> Option<Prices> {
        Some(Prices {
            input_per_million: input,
            output_per_million: output,
        })
    }

    fn ones(values: &[i64]) -> Vec<(i64, i64)> {
        values.iter().map(|&v| (v, 1)).collect()
    }

    #[test]
    fn percentiles_are_nearest_rank_values_that_were_observed() {
        let four = ones(&[10, 20, 30, 40]);
        // Ranks ⌈0.5·4⌉ = 2, ⌈0.95·4⌉ = 4, ⌈0.99·4⌉ = 4.
        assert_eq!(
            Percentiles::of(&four),
            Some(Percentiles {
                p50: 20,
                p95: 40,
                p99: 40
            })
        );
        let hundred: Vec<i64> = (1..=100).collect();
        assert_eq!(
            Percentiles::of(&ones(&hundred)),
            Some(Percentiles {
                p50: 50,
                p95: 95,
                p99: 99
            })
        );
        assert_eq!(percentile(&ones(&hundred), 100), Some(100));
        assert_eq!(percentile(&ones(&hundred), 0), Some(1));
    }

    #[test]
    fn percentiles_count_repeated_latencies() {
        // 100 calls: 90 at 100 ms, 8 at 250 ms, 2 at 900 ms.
        let counts = [(100, 90), (250, 8), (900, 2)];
        assert_eq!(
            Percentiles::of(&counts),
            Some(Percentiles {
                p50: 100,
                p95: 250,
                p99: 900
            })
        );
        // Rank ⌈0.95·20⌉ = 19 of 20 calls: 18 at 5 ms, then 7 ms.
        assert_eq!(percentile(&[(5, 18), (7, 1), (9, 1)], 95), Some(7));
        assert_eq!(
            Percentiles::of(&[(42, 1)]),
            Some(Percentiles {
                p50: 42,
                p95: 42,
                p99: 42
            })
        );
    }

    #[test]
    fn no_calls_have_no_percentiles() {
        assert_eq!(Percentiles::of(&[]), None);
        assert_eq!(percentile(&[(10, 0)], 50), None);
    }

    #[test]
    fn cost_is_tokens_times_the_price_per_million() {
        // 1.2M prompt at $2.50/M + 300k completion at $10/M = 3.00 + 3.00.
        let cost = Cost::of(1_200_000, 300_000, prices(2.5, 10.0))
            .usd()
            .unwrap();
        assert!((cost - 6.0).abs() < 1e-9, "{cost}");
        let cost = Cost::of(1234, 567, prices(0.15, 0.6)).usd().unwrap();
        // 1234·0.15/1e6 + 567·0.6/1e6 = 0.0001851 + 0.0003402.
        assert!((cost - 0.0005253).abs() < 1e-12, "{cost}");
        assert_eq!(Cost::of(0, 0, prices(1.0, 1.0)), Cost::Usd(0.0));
    }

    #[test]
    fn an_endpoint_without_prices_costs_unknown_never_zero() {
        assert_eq!(Cost::of(0, 0, None), Cost::Unknown);
        assert_eq!(Cost::of(1000, 1000, None), Cost::Unknown);
        assert_eq!(
            Cost::total([Cost::Usd(1.0), Cost::Unknown, Cost::Usd(2.0)]),
            Cost::Unknown
        );
        assert_eq!(
            Cost::total([Cost::Usd(1.0), Cost::Usd(2.5)]),
            Cost::Usd(3.5)
        );
        assert_eq!(Cost::Unknown.to_string(), "unknown");
    }

    #[test]
    fn costs_print_in_dollars_with_cents_or_three_significant_digits() {
        assert_eq!(Cost::Usd(12.345).to_string(), "$12.35");
        assert_eq!(Cost::Usd(0.0).to_string(), "$0.00");
        assert_eq!(Cost::Usd(0.5).to_string(), "$0.500");
        assert_eq!(Cost::Usd(0.0005253).to_string(), "$0.000525");
    }

    fn judge_call(judge: &str, prompt: i64, completion: i64, latency_ms: i64) -> JudgeCallRow {
        JudgeCallRow {
            id: 0,
            judge_name: judge.into(),
            judge_hash: "h".into(),
            conversation_a: 1,
            conversation_b: None,
            call: crate::store::NewJudgeCall {
                order: "single".into(),
                sample: 0,
                prompt_hash: String::new(),
                model: "m".into(),
                raw_output: String::new(),
                parsed: None,
                status: "ok".into(),
                error: None,
                prompt_tokens: prompt,
                completion_tokens: completion,
                latency_ms,
                batch: false,
            },
            created_at: 0,
        }
    }

    #[test]
    fn each_judge_is_a_role_with_its_calls_latencies_and_its_endpoints_price() {
        let calls = [
            judge_call("helpful", 1000, 100, 40),
            judge_call("fidelity", 10, 1, 5),
            judge_call("helpful", 1000, 100, 60),
        ];
        let endpoint_of = |name: &str| match name {
            "helpful" => Some(JudgePrices {
                endpoint: "judge".to_string(),
                prices: prices(1.0, 10.0),
                batch: None,
            }),
            _ => None,
        };
        let roles = judge_reports(&calls, &endpoint_of);
        let names: Vec<_> = roles.iter().map(|r| r.judge.as_deref()).collect();
        assert_eq!(names, [Some("fidelity"), Some("helpful")]);
        let helpful = &roles[1];
        assert_eq!((helpful.role.as_str(), helpful.calls), ("judge", 2));
        assert_eq!(
            (helpful.prompt_tokens, helpful.completion_tokens),
            (2000, 200)
        );
        assert_eq!(
            helpful.latency,
            Some(Percentiles {
                p50: 40,
                p95: 60,
                p99: 60
            })
        );
        // 2000 · $1/M + 200 · $10/M = $0.004.
        let usd = helpful.cost.usd().unwrap();
        assert!((usd - 0.004).abs() < 1e-12, "{usd}");
        assert_eq!(roles[0].cost, Cost::Unknown);
        assert_eq!(total_cost(&roles), Cost::Unknown);
    }

    #[test]
    fn roles_are_reported_with_their_latencies_and_unknown_cost_without_a_job() {
        let summary = JobSummary {
            usage: vec![
                UsageRow {
                    role: "policy".into(),
                    calls: 4,
                    prompt_tokens: 400,
                    completion_tokens: 40,
                    latency_ms: 100,
                },
                UsageRow {
                    role: "user".into(),
                    calls: 2,
                    prompt_tokens: 50,
                    completion_tokens: 5,
                    latency_ms: 20,
                },
            ],
            call_latencies: vec![LatencyHistogram {
                author: "policy".into(),
                counts: vec![(10, 2), (30, 1), (50, 1)],
            }],
            ..JobSummary::default()
        };
        let roles = role_reports(&summary, None);
        assert_eq!(roles.len(), 2);
        assert_eq!(
            roles[0].latency,
            Some(Percentiles {
                p50: 10,
                p95: 50,
                p99: 50
            })
        );
        assert_eq!(roles[1].latency, None, "no stored user calls");
        assert!(roles.iter().all(|r| r.cost == Cost::Unknown));
        assert_eq!(total_cost(&roles), Cost::Unknown);
    }

    #[test]
    fn calls_answered_through_a_batch_cost_the_batch_prices() {
        let mut batched = judge_call("helpful", 1_000_000, 0, 1);
        batched.call.batch = true;
        let calls = [judge_call("helpful", 1_000_000, 0, 1), batched.clone()];
        let endpoint_of = |_: &str| {
            Some(JudgePrices {
                endpoint: "judge".to_string(),
                prices: prices(2.0, 8.0),
                batch: prices(1.0, 4.0),
            })
        };
        let roles = judge_reports(&calls, &endpoint_of);
        assert_eq!(
            roles[0].cost,
            Cost::Usd(3.0),
            "$2 at the list price, $1 batched"
        );
        let only_batched = judge_reports(std::slice::from_ref(&batched), &|_: &str| {
            Some(JudgePrices {
                endpoint: "judge".to_string(),
                prices: None,
                batch: prices(1.0, 4.0),
            })
        });
        assert_eq!(only_batched[0].cost, Cost::Usd(1.0), "no list price needed");
        let unpriced = judge_reports(std::slice::from_ref(&batched), &|_: &str| {
            Some(JudgePrices {
                endpoint: "judge".to_string(),
                prices: prices(2.0, 8.0),
                batch: None,
            })
        });
        assert_eq!(
            unpriced[0].cost,
            Cost::Unknown,
            "never the list price instead"
        );
    }
}
