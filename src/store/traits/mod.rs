//! The store's traits, one per concern; [`crate::store::Store`] is all of them.

mod batches;
mod conversations;
mod evaluations;
mod imports;
mod items;
mod jobs;
mod judgments;
mod personas;
mod proposals;
mod tokens;

pub use batches::BatchStore;
pub use conversations::ConversationStore;
pub use evaluations::EvaluationStore;
pub use imports::ImportStore;
pub use items::ItemStore;
pub use jobs::JobStore;
pub use judgments::JudgmentStore;
pub use personas::PersonaStore;
pub use proposals::ProposalStore;
pub use tokens::TokenStore;
