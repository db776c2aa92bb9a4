//! The episode engine: the user simulator, the policy's step loop, termination,
//! and the transcript. It knows the `ChatModel` and `Environment` traits, not HTTP.

pub mod episode;
pub mod episode_error;
pub mod model_policy;
pub mod policy;
pub mod stepped;
pub mod termination;
pub mod transcript;
pub mod user_simulator;

pub use episode::{run_episode, Episode, EpisodeSpec, RoleUsage};
pub use episode_error::EpisodeError;
pub use model_policy::ModelPolicy;
pub use policy::{Policy, PolicySession, PolicyTurn, TurnEnd};
pub use stepped::{PolicyMessage, SteppedEpisode, SteppedSpec};
pub use termination::Termination;
pub use transcript::{Author, Transcript};
pub use user_simulator::UserSimulator;
