//! Token ids and log probabilities stored with policy generations.

use async_trait::async_trait;

use crate::store::StoreError;

/// Token ids and log probabilities stored with policy generations.
#[async_trait]
pub trait TokenStore: Send + Sync {
    /// The token ids and log probabilities stored with conversation `id`'s
    /// messages (policy generations whose server returned them), as
    /// `(message idx, tokens)` in idx order; empty when it has none.
    async fn message_tokens(
        &self,
        id: i64,
    ) -> Result<Vec<(i64, crate::token_ids::TokenIds)>, StoreError>;
}
