//! `validate`'s checks of a scenario's probes: each names a tool probes may
//! call (the environment's `probe_tools`: an MCP server's are checked against
//! its `tools/list` by starting it once), gives an expectation that can be
//! checked, and a scenario that names `probes` in its reward basis has some.

use std::path::Path;

use crate::config::Problem;
use crate::env::Environment;
use crate::persona::Scenario;
use crate::verify::Component;

pub fn probe_problems(
    file: &Path,
    scenarios: &[Scenario],
    environment: &dyn Environment,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for scenario in scenarios {
        let criteria = &scenario.evaluation;
        let tools: Vec<&str> = match &scenario.tools {
            Some(own) => own.iter().map(|t| t.name.as_str()).collect(),
            None => environment.probe_tools(),
        };
        if criteria.reward_basis.contains(&Component::Probes) && criteria.probes.is_empty() {
            problems.push(Problem::at_field(
                file,
                &format!("scenario '{}', evaluation.reward_basis", scenario.id),
                "names \"probes\" but the scenario has no evaluation.probes; add probes \
                 (e.g. {\"tool\": \"read_graph\", \"expect\": {\"entities\": [{\"name\": \
                 \"Alice\"}]}}) or take \"probes\" out",
            ));
        }
        for (i, probe) in criteria.probes.iter().enumerate() {
            let at = format!("scenario '{}', evaluation.probes[{i}]", scenario.id);
            if !tools.contains(&probe.tool.as_str()) {
                problems.push(Problem::at_field(
                    file,
                    &format!("{at}.tool"),
                    format!(
                        "'{}' is not a tool probes may call in {}; they may call: {}",
                        probe.tool,
                        environment.name(),
                        tools.join(", ")
                    ),
                ));
            }
            if let Some(why) = probe.problem() {
                problems.push(Problem::at_field(file, &at, why));
            }
        }
    }
    problems
}

/// An MCP server's state cannot be replayed and compared: a scenario scored
/// by `db` against one is refused here rather than failing every item.
pub fn mcp_db_problems(file: &Path, scenarios: &[Scenario]) -> Vec<Problem> {
    scenarios
        .iter()
        .filter(|s| s.evaluation.reward_basis.contains(&Component::Db))
        .map(|s| {
            Problem::at_field(
                file,
                &format!("scenario '{}', evaluation.reward_basis", s.id),
                "names \"db\", which an MCP environment cannot score (its state cannot be \
                 replayed and compared); check what the agent left behind with \"probes\"",
            )
        })
        .collect()
}
