//! Generation jobs: scenarios × personas × samples as items, each one
//! conversation between the policy and the simulated user, verified and
//! stored. `setup` reads and checks the inputs, `plan` makes the items,
//! `submit` stores (or finds) the job, `work` works it here with the item
//! runner of `item`, whose `judge:NAME` rewards are `reward_judges`.

pub mod item;
pub mod plan;
pub mod reward_judges;
pub mod setup;
mod submit;
mod work;

pub use setup::{prepare, Prepared};
pub(in crate::jobs) use submit::prepare_stored;
pub use submit::{check_and_submit, job_persona, submit, used_personas};
pub(in crate::jobs) use work::work_here;
