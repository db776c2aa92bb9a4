//! Reading a job's conversations a page at a time, in id order, for
//! whatever reads them all (stats, realism, probe pairs): memory is one page.

use super::{ConversationStore, StoreError, StoredConversation};

/// Conversations read per page.
pub const PAGE: u32 = 200;

/// `f` of each of job `job_id`'s stored conversations, messages included,
/// in id order; the first error stops it.
pub async fn each_stored_conversation<E: From<StoreError>>(
    store: &dyn ConversationStore,
    job_id: i64,
    mut f: impl FnMut(&StoredConversation) -> Result<(), E>,
) -> Result<(), E> {
    let mut after = 0;
    loop {
        let page = store.conversations_page(job_id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        for c in &page {
            f(c)?;
        }
    }
    Ok(())
}
