//! Exports of stored conversations: streamed page by page (constant memory), in
//! id order (deterministic), with filters. Failed items have no conversation and
//! conversations the simulator broke (not scored) are left out.

pub mod openai;

use std::io::Write;

use crate::store::{Store, StoreError, StoredConversation};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenAi,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "openai" => Some(Format::OpenAi),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Keep conversations with reward ≥ this (unscored ones are dropped).
    pub min_reward: Option<f64>,
}

impl Filter {
    fn keeps(&self, c: &StoredConversation) -> bool {
        match (c.conversation.reward, self.min_reward) {
            // Not scored: the user simulator or environment broke it.
            (None, _) => false,
            (Some(r), Some(min)) => r >= min,
            (Some(_), None) => true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the export: {0}")]
    Io(#[from] std::io::Error),
    #[error("conversation {conversation} is stored inconsistently: {message}")]
    Corrupt { conversation: i64, message: String },
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportCounts {
    pub written: u64,
    pub skipped: u64,
}

const PAGE: u32 = 200;

/// Write a job's conversations as JSONL lines to `out`, calling `on_page` after
/// each page with the counts so far.
pub async fn write(
    store: &dyn Store,
    job_id: i64,
    format: Format,
    filter: &Filter,
    out: &mut dyn Write,
    on_page: &mut dyn FnMut(ExportCounts),
) -> Result<ExportCounts, ExportError> {
    let mut counts = ExportCounts::default();
    let mut after = 0;
    loop {
        let page = store.conversations_page(job_id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        for c in &page {
            if !filter.keeps(c) {
                counts.skipped += 1;
                continue;
            }
            let line = match format {
                Format::OpenAi => openai::line(c)?,
            };
            serde_json::to_writer(&mut *out, &line).map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
            counts.written += 1;
        }
        on_page(counts);
    }
    out.flush()?;
    Ok(counts)
}
