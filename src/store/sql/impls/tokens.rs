//! [`TokenStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{conversations, dialect::Dialect, SqlStore};
use crate::store::{StoreError, TokenStore};

#[async_trait]
impl<D: Dialect> TokenStore for SqlStore<D> {
    #[tracing::instrument(name = "store.message_tokens", level = "debug", skip_all, fields(id = id))]
    async fn message_tokens(
        &self,
        id: i64,
    ) -> Result<Vec<(i64, crate::token_ids::TokenIds)>, StoreError> {
        conversations::message_tokens(self, id).await
    }
}
