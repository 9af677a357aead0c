//! The committed budget (bench/budget/budget.toml) against what was
//! measured: a table of budget, measured and verdict, and the violations.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The budget file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// How far above its budget an instruction count may go (0.10: 10%).
    pub instructions_tolerance: f64,
    pub a: WorkloadBudget,
    pub b: WorkloadBudget,
    /// A master's instructions per cycle: checked by
    /// `scripts/master-instructions --budget`, not here.
    #[serde(default, rename = "master")]
    _master: Option<serde::de::IgnoredAny>,
}

/// One workload's budget, per lock cycle.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadBudget {
    /// The daemon's instructions (callgrind's Ir).
    pub instructions: u64,
    /// Calls of each command on the busiest master; a command not named
    /// here has a budget of 0.
    pub calls: BTreeMap<String, f64>,
}

impl Budget {
    pub fn load(path: &Path) -> anyhow::Result<Budget> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let budget: Budget = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        if !(0.0..1.0).contains(&budget.instructions_tolerance) {
            anyhow::bail!(
                "{}: instructions_tolerance must lie within [0, 1), not {}",
                path.display(),
                budget.instructions_tolerance
            );
        }
        Ok(budget)
    }

    fn workload(&self, key: &str) -> &WorkloadBudget {
        if key == "a" { &self.a } else { &self.b }
    }
}

/// What one workload cost, per lock cycle.
#[derive(Serialize, Default)]
pub struct Measured {
    /// Calls of each command, on each of the masters in turn.
    pub calls: BTreeMap<String, Vec<f64>>,
    /// The daemon's instructions (idle ones taken off), when measured.
    pub instructions: Option<f64>,
}

/// Calls are counts: a hair above the budget is float rounding, not a call.
const CALLS_SLACK: f64 = 1e-9;

/// The table, and the violations (empty: within the budget).
pub fn judge(budget: &Budget, measured: &BTreeMap<&'static str, Measured>) -> (String, Vec<String>) {
    let mut table = format!(
        "{:<9} {:<28} {:>12} {:>24}  verdict\n",
        "workload", "per lock cycle", "budget", "measured"
    );
    let mut violations = Vec::new();
    for (key, m) in measured {
        let allowed = budget.workload(key);
        let mut commands: Vec<&String> = allowed.calls.keys().chain(m.calls.keys()).collect();
        commands.sort();
        commands.dedup();
        for command in commands {
            let limit = allowed.calls.get(command).copied().unwrap_or(0.0);
            let per_master = m.calls.get(command).map(Vec::as_slice).unwrap_or(&[]);
            let most = per_master.iter().copied().fold(0.0, f64::max);
            let least = per_master.iter().copied().fold(f64::INFINITY, f64::min);
            let shown = if per_master.is_empty() {
                "0".to_owned()
            } else if most - least > CALLS_SLACK {
                format!("{most:.3} (masters {least:.3}-{most:.3})")
            } else {
                format!("{most:.3}")
            };
            let verdict = if most > limit + CALLS_SLACK {
                let what = format!("({key}) {command} calls per cycle: {most:.3} on a master, budget {limit}");
                violations.push(what);
                "OVER BUDGET"
            } else if most + 0.5 <= limit {
                "ok (well under: lower the budget?)"
            } else {
                "ok"
            };
            let _ = writeln!(
                table,
                "({key})       {:<28} {:>12} {shown:>24}  {verdict}",
                format!("{command} calls"),
                limit
            );
        }
        if let Some(instructions) = m.instructions {
            let limit = allowed.instructions as f64;
            let change = (instructions / limit - 1.0) * 100.0;
            let verdict = if instructions > limit * (1.0 + budget.instructions_tolerance) {
                violations.push(format!(
                    "({key}) daemon instructions per cycle: {instructions:.0}, {change:+.1}% of the budget {} \
                     (allowed +{:.0}%)",
                    allowed.instructions,
                    budget.instructions_tolerance * 100.0
                ));
                "OVER BUDGET"
            } else if instructions < limit * (1.0 - budget.instructions_tolerance) {
                "ok (well under: lower the budget?)"
            } else {
                "ok"
            };
            let _ = writeln!(
                table,
                "({key})       {:<28} {:>12} {:>24}  {verdict}",
                "daemon instructions",
                allowed.instructions,
                format!("{instructions:.0} ({change:+.1}%)")
            );
        }
    }
    (table, violations)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> Budget {
        toml::from_str(
            "instructions_tolerance = 0.1\n[a]\ninstructions = 1000\ncalls = { evalsha = 2, incr = 1 }\n\
             [b]\ninstructions = 500\ncalls = { evalsha = 0.5 }\n",
        )
        .unwrap()
    }

    fn measured(calls: &[(&str, f64)], instructions: f64) -> BTreeMap<&'static str, Measured> {
        let calls = calls.iter().map(|(c, n)| ((*c).to_owned(), vec![*n; 5])).collect();
        BTreeMap::from([(
            "a",
            Measured {
                calls,
                instructions: Some(instructions),
            },
        )])
    }

    #[test]
    fn counts_within_the_budget_pass() {
        let (_, violations) = judge(&budget(), &measured(&[("evalsha", 2.0), ("incr", 1.0)], 1099.0));
        assert!(violations.is_empty(), "{violations:?}");
    }

    #[test]
    fn an_extra_call_an_unbudgeted_command_and_too_many_instructions_fail() {
        let (table, violations) = judge(
            &budget(),
            &measured(&[("evalsha", 2.0), ("incr", 1.005), ("exists", 2.0)], 1101.0),
        );
        assert_eq!(violations.len(), 3, "{violations:?}\n{table}");
        assert!(violations[0].contains("exists"), "{violations:?}");
        assert!(violations[1].contains("incr"), "{violations:?}");
        assert!(violations[2].contains("instructions"), "{violations:?}");
    }
}
