//! Token information a policy server may return with a generation: the type
//! lives in [`crate::token_ids`], below `store`, which keeps it beside the
//! message; the model's side of it is here.

pub use crate::token_ids::TokenIds;
