//! `sparring conversations --job ID [filters]`: a job's conversations, one
//! line each, with the export's filters.

use crate::export::prepare::{judgments_for, unsolved_for};
use crate::store::{self, browse::filtered_page};

use super::export_said::{print_notices, refuse};
use super::filters::{self, FilterArgs};
use super::jobs::columns;
use super::{DEFAULT_DATABASE, EXIT_NOT_FOUND};

#[derive(clap::Args)]
pub struct ConversationsArgs {
    /// The job whose conversations are listed.
    #[arg(long)]
    job: i64,
    #[command(flatten)]
    filters: FilterArgs,
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
}

/// Conversations read from the store per page.
const PAGE: u32 = 500;

pub async fn conversations(args: ConversationsArgs) -> anyhow::Result<i32> {
    let (database, job) = (&args.database, args.job);
    if let Some(code) = super::refuse_missing_database(database) {
        return Ok(code);
    }
    let store = store::open(database).await?;
    let Some(row) = store.get_job(job).await? else {
        eprintln!("job {job} is not in {database}");
        return Ok(EXIT_NOT_FOUND);
    };
    let conversation_filter = args.filters.conversation_filter();
    let mut judge_filter = args.filters.judge_filter(&row);
    let mut notices = Vec::new();
    judge_filter.unsolved = unsolved_for(
        store.as_ref(),
        &row,
        args.filters.keep_unsolved,
        &mut notices,
    )
    .await?;
    print_notices(&notices);
    let mut notices = Vec::new();
    let judgments = judgments_for(store.as_ref(), job, &judge_filter, &mut notices).await;
    print_notices(&notices);
    let judgments = match judgments {
        Ok(judgments) => judgments,
        Err(e) => return refuse(e, database),
    };
    let keep = |c: &store::StoredConversation| {
        filters::keeps(&conversation_filter, &judge_filter, &judgments, c)
    };
    let mut lines = vec![[
        "id".to_string(),
        "scenario".into(),
        "persona".into(),
        "sample".into(),
        "termination".into(),
        "reward".into(),
        "messages".into(),
    ]];
    let mut after = 0;
    loop {
        let page = filtered_page(store.as_ref(), job, &keep, after, PAGE).await?;
        for c in &page.conversations {
            let row = &c.conversation;
            lines.push([
                row.id.to_string(),
                row.scenario_id.clone(),
                row.persona_id.clone(),
                row.sample.to_string(),
                row.termination.clone(),
                row.reward.map_or("n/a".to_string(), |r| format!("{r:.3}")),
                c.messages.len().to_string(),
            ]);
        }
        match page.next {
            Some(next) => after = next,
            None => break,
        }
    }
    let kept = lines.len() - 1;
    if kept > 0 {
        print!("{}", columns(&lines));
    }
    eprintln!("{kept} conversations of job {job} match");
    Ok(0)
}
