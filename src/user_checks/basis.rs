//! What the checks read of a scenario alone (its hidden texts' word runs,
//! the facts it gives and the ones only its unknown info holds): the same
//! for every conversation of the scenario, so a job computes it once per
//! scenario and its conversations share it.

use crate::persona::UserScenario;

use super::{instruction_leak, invented_fact, repetition};

#[derive(Debug, Default)]
pub struct ScenarioBasis {
    pub(super) leak: instruction_leak::Basis,
    pub(super) invented: invented_fact::Basis,
    pub(super) repetition: repetition::Basis,
}

impl ScenarioBasis {
    pub fn of(scenario: &UserScenario) -> Self {
        ScenarioBasis {
            leak: instruction_leak::basis(scenario),
            invented: invented_fact::basis(scenario),
            repetition: repetition::basis(scenario),
        }
    }
}
