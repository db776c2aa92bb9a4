//! The store's story, told the same way to every backend (after atuin's
//! `db_story`): SQLite always, on a fresh file; Postgres when
//! `SPARRING_TEST_POSTGRES` names a server (e.g.
//! `postgres://postgres@127.0.0.1:5432/test`). Each chapter works in jobs of
//! its own, under config hashes unique to the run, so the chapters share one
//! database without seeing each other, and so does any number of runs, at the
//! same time or one after another, against one long-lived Postgres database.
//! The story ends by reopening the database and finding everything still there.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use sparring::store::postgres::PostgresStore;
use sparring::store::{
    self, now_ms, BatchAnswer, BatchUpdate, ConversationKey, ItemCounts, ItemRow, ItemStatus,
    JobPersona, JobRow, JobStatus, JobSummary, JudgeCallRow, JudgmentRow, LatencyHistogram,
    NewBatchRequest, NewConversation, NewItem, NewJob, NewJudgeCall, NewJudgment, NewMessage,
    Store, StoreError, StoredConversation, UsageRow,
};
use sparring::token_ids::TokenIds;

// ---------------------------------------------------------------- backends

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_tells_the_whole_story() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("story.db").display());
    story(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_tells_the_whole_story() {
    let Some(url) = postgres_url("postgres store story") else {
        return;
    };
    story(&url).await;
}

/// This process's own Postgres database, or `None` after saying that `test` is
/// skipped and why.
fn postgres_url(test: &str) -> Option<String> {
    crate::postgres::database(test)
}

/// Unique to this run of this process: config hashes start with it, so runs
/// sharing a long-lived database never find each other's jobs.
fn run_id() -> String {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    format!(
        "run-{}-{}-{}",
        std::process::id(),
        now_ms(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    )
}

// ------------------------------------------------------------------- story

/// Everything the store promises, against the database `url` names.
async fn story(url: &str) {
    let store = store::open(url).await.unwrap();
    // Unique per run, so a long-lived Postgres database can hear the story twice.
    let run = run_id();

    chapter(
        "jobs_are_created_read_back_found_by_config_hash_and_change_status",
        jobs_are_created_read_back_found_by_config_hash_and_change_status(&store, &run),
    )
    .await;
    chapter(
        "adding_items_is_idempotent_on_job_and_key",
        adding_items_is_idempotent_on_job_and_key(&store, &run),
    )
    .await;
    chapter(
        "user_checks_are_replaced_or_added_by_a_recheck",
        user_checks_are_replaced_or_added_by_a_recheck(&store, &run),
    )
    .await;
    chapter(
        "concurrent_owners_never_lease_the_same_item",
        concurrent_owners_never_lease_the_same_item(&store, &run),
    )
    .await;
    chapter(
        "an_expired_lease_passes_to_another_owner_and_the_first_owner_stores_nothing",
        an_expired_lease_passes_to_another_owner_and_the_first_owner_stores_nothing(&store, &run),
    )
    .await;
    chapter(
        "renewed_leases_outlive_their_first_expiry_and_only_the_owners_are_renewed",
        renewed_leases_outlive_their_first_expiry_and_only_the_owners_are_renewed(&store, &run),
    )
    .await;
    chapter(
        "completing_stores_messages_in_order_with_tool_calls_round_tripping",
        completing_stores_messages_in_order_with_tool_calls_round_tripping(&store, &run),
    )
    .await;
    chapter(
        "completing_the_same_item_twice_is_refused_and_keeps_one_conversation",
        completing_the_same_item_twice_is_refused_and_keeps_one_conversation(&store, &run),
    )
    .await;
    chapter(
        "a_group_commit_stores_each_held_item_and_refuses_only_the_lost_one",
        a_group_commit_stores_each_held_item_and_refuses_only_the_lost_one(&store, &run),
    )
    .await;
    chapter(
        "a_failed_item_keeps_its_error_and_is_leased_again_after_reset",
        a_failed_item_keeps_its_error_and_is_leased_again_after_reset(&store, &run),
    )
    .await;
    chapter(
        "released_items_go_back_to_pending_but_only_the_owners",
        released_items_go_back_to_pending_but_only_the_owners(&store, &run),
    )
    .await;
    chapter(
        "pages_return_every_conversation_of_the_job_once_in_id_order",
        pages_return_every_conversation_of_the_job_once_in_id_order(&store, &run),
    )
    .await;
    chapter(
        "call_latencies_are_histograms_per_author_of_the_jobs_own_messages",
        call_latencies_are_histograms_per_author_of_the_jobs_own_messages(&store, &run),
    )
    .await;
    chapter(
        "a_judgment_and_its_calls_read_back_exactly_as_saved",
        a_judgment_and_its_calls_read_back_exactly_as_saved(&store, &run),
    )
    .await;
    chapter(
        "saving_a_judgment_again_replaces_it_and_a_retried_call_replaces_the_failed_one",
        saving_a_judgment_again_replaces_it_and_a_retried_call_replaces_the_failed_one(
            &store, &run,
        ),
    )
    .await;
    chapter(
        "single_and_pairwise_judgments_of_one_conversation_are_distinct",
        single_and_pairwise_judgments_of_one_conversation_are_distinct(&store, &run),
    )
    .await;
    chapter(
        "a_jobs_judgments_are_those_whose_conversation_a_it_made",
        a_jobs_judgments_are_those_whose_conversation_a_it_made(&store, &run),
    )
    .await;
    chapter(
        "conversation_keys_name_each_conversation_by_scenario_persona_and_sample",
        conversation_keys_name_each_conversation_by_scenario_persona_and_sample(&store, &run),
    )
    .await;
    chapter(
        "a_batch_is_stored_with_its_new_requests_and_ingested_once",
        a_batch_is_stored_with_its_new_requests_and_ingested_once(&store, &run),
    )
    .await;
    chapter(
        "a_jobs_personas_are_stored_once_and_read_back_with_their_attributes",
        a_jobs_personas_are_stored_once_and_read_back_with_their_attributes(&store, url, &run),
    )
    .await;
    let summarised = chapter(
        "job_summary_matches_hand_computed_rewards_terminations_and_usage",
        job_summary_matches_hand_computed_rewards_terminations_and_usage(&store, &run),
    )
    .await;

    chapter(
        "corrupt_stored_values_are_reported_naming_table_row_and_column",
        corrupt_stored_values_are_reported_naming_table_row_and_column(&store, url, &run),
    )
    .await;

    let before = Snapshot::take(&store, summarised).await;
    drop(store);
    let reopened = store::open(url).await.unwrap();
    chapter(
        "reopening_the_database_keeps_everything",
        reopening_the_database_keeps_everything(&reopened, before),
    )
    .await;
}

/// Runs one chapter, saying which, so a failure names its chapter, and how
/// long it took.
async fn chapter<T>(name: &str, body: impl Future<Output = T>) -> T {
    println!("chapter: {name}");
    let started = std::time::Instant::now();
    let out = body.await;
    println!("chapter: {name}: ok in {:?}", started.elapsed());
    out
}

// ---------------------------------------------------------------- chapters

async fn jobs_are_created_read_back_found_by_config_hash_and_change_status(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let hash = format!("{run}-jobs");
    let before = now_ms();
    let first = store.create_job(&new_job("first", &hash)).await.unwrap();
    let second = store.create_job(&new_job("second", &hash)).await.unwrap();
    let after = now_ms();

    assert_eq!(first.name, "first");
    assert_eq!(first.kind, sparring::store::JobKind::Generation);
    assert_eq!(first.config_snapshot, "name = \"first\"\n");
    assert_eq!(first.config_hash, hash);
    assert_eq!(first.status, JobStatus::Pending);
    assert!((before..=after).contains(&first.created_at));
    assert_eq!(first.updated_at, first.created_at);
    assert_ne!(first.id, second.id);

    let read = store.get_job(first.id).await.unwrap().unwrap();
    assert_same_job(&read, &first);
    assert!(store.get_job(i64::MAX).await.unwrap().is_none());

    let newest = store.find_job_by_config_hash(&hash).await.unwrap().unwrap();
    assert_eq!(newest.id, second.id, "the newest job with the hash wins");
    let nobody = format!("{run}-no-such-hash");
    assert!(store
        .find_job_by_config_hash(&nobody)
        .await
        .unwrap()
        .is_none());

    store
        .set_job_status(first.id, JobStatus::Running)
        .await
        .unwrap();
    let running = store.get_job(first.id).await.unwrap().unwrap();
    assert_eq!(running.status, JobStatus::Running);
    assert!(running.updated_at >= first.updated_at);
    assert_eq!(running.created_at, first.created_at);
    store
        .set_job_status(first.id, JobStatus::Done)
        .await
        .unwrap();
    let done = store.get_job(first.id).await.unwrap().unwrap();
    assert_eq!(done.status, JobStatus::Done);
    let untouched = store.get_job(second.id).await.unwrap().unwrap();
    assert_eq!(untouched.status, JobStatus::Pending);
}

async fn adding_items_is_idempotent_on_job_and_key(store: &Arc<dyn Store>, run: &str) {
    let job = store
        .create_job(&new_job("items", &format!("{run}-items")))
        .await
        .unwrap();
    let first_three = new_items("s", 3);
    assert_eq!(store.add_items(job.id, &first_three).await.unwrap(), 3);
    assert_eq!(store.add_items(job.id, &first_three).await.unwrap(), 0);

    let five = new_items("s", 5);
    assert_eq!(
        store.add_items(job.id, &five).await.unwrap(),
        2,
        "only the two new keys count"
    );
    let twice = vec![new_item("again", 0), new_item("again", 0)];
    assert_eq!(
        store.add_items(job.id, &twice).await.unwrap(),
        1,
        "a key repeated within one call is added once"
    );
    assert_eq!(store.add_items(job.id, &[]).await.unwrap(), 0);
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            pending: 6,
            ..ItemCounts::default()
        }
    );

    let other = store
        .create_job(&new_job("items-other", &format!("{run}-items-other")))
        .await
        .unwrap();
    assert_eq!(
        store.add_items(other.id, &first_three).await.unwrap(),
        3,
        "keys are unique per job, not across jobs"
    );

    // More rows than one INSERT statement may carry.
    let big = store
        .create_job(&new_job("items-big", &format!("{run}-items-big")))
        .await
        .unwrap();
    let many = new_items("big", 12_000);
    assert_eq!(store.add_items(big.id, &many).await.unwrap(), 12_000);
    assert_eq!(store.add_items(big.id, &many).await.unwrap(), 0);
    let counts = store.item_counts(big.id).await.unwrap();
    assert_eq!((counts.pending, counts.total()), (12_000, 12_000));
}

async fn concurrent_owners_never_lease_the_same_item(store: &Arc<dyn Store>, run: &str) {
    let job = store
        .create_job(&new_job("lease-race", &format!("{run}-lease-race")))
        .await
        .unwrap();
    store
        .add_items(job.id, &new_items("race", 120))
        .await
        .unwrap();

    let mut workers = Vec::new();
    for n in 0..4 {
        let store = Arc::clone(store);
        let job_id = job.id;
        workers.push(tokio::spawn(async move {
            let owner = format!("worker-{n}");
            let mut mine = Vec::new();
            loop {
                let leased = store.lease_items(job_id, &owner, 7, 60_000).await.unwrap();
                if leased.is_empty() {
                    break;
                }
                for item in leased {
                    assert_eq!(item.status, ItemStatus::Leased);
                    assert_eq!(item.lease_owner.as_deref(), Some(owner.as_str()));
                    assert_eq!(item.attempts, 1);
                    assert!(item.lease_expires_at.unwrap() > now_ms());
                    // Completing right away puts the writers in a queue too.
                    let conversation = new_conversation(&item, "user_stop", Some(1.0));
                    store
                        .complete_item(item.id, &owner, &conversation)
                        .await
                        .unwrap();
                    mine.push(item.id);
                }
            }
            mine
        }));
    }
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.unwrap());
    }
    let distinct: BTreeSet<i64> = all.iter().copied().collect();
    assert_eq!(all.len(), 120, "every item leased exactly once");
    assert_eq!(distinct.len(), 120, "no item leased by two owners");
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            done: 120,
            ..ItemCounts::default()
        }
    );
    assert_eq!(store.job_summary(job.id).await.unwrap().conversations, 120);
}

async fn an_expired_lease_passes_to_another_owner_and_the_first_owner_stores_nothing(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("expiry", &format!("{run}-expiry")))
        .await
        .unwrap();
    store
        .add_items(job.id, &new_items("slow", 1))
        .await
        .unwrap();

    let first = store.lease_items(job.id, "slow", 10, 1).await.unwrap();
    assert_eq!(first.len(), 1);
    tokio::time::sleep(Duration::from_millis(25)).await;

    let second = store.lease_items(job.id, "fast", 10, 60_000).await.unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].id, first[0].id);
    assert_eq!(second[0].lease_owner.as_deref(), Some("fast"));
    assert_eq!(second[0].attempts, 2);
    assert!(
        store
            .lease_items(job.id, "slow", 10, 60_000)
            .await
            .unwrap()
            .is_empty(),
        "a live lease is not taken over"
    );

    let item = &first[0];
    let late = store
        .complete_item(
            item.id,
            "slow",
            &new_conversation(item, "user_stop", Some(1.0)),
        )
        .await;
    assert_lease_lost(late, item.id, "slow");
    let late_failure = store
        .fail_item(item.id, "slow", "timeout", "too slow")
        .await;
    assert_lease_lost(late_failure, item.id, "slow");
    assert!(store
        .conversations_page(job.id, 0, 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        store.job_summary(job.id).await.unwrap(),
        JobSummary::default()
    );
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            leased: 1,
            ..ItemCounts::default()
        }
    );

    store
        .complete_item(
            item.id,
            "fast",
            &new_conversation(&second[0], "user_stop", Some(1.0)),
        )
        .await
        .unwrap();
    let stored = store.conversations_page(job.id, 0, 10).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].conversation.item_id, item.id);
}

async fn renewed_leases_outlive_their_first_expiry_and_only_the_owners_are_renewed(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("heartbeat", &format!("{run}-heartbeat")))
        .await
        .unwrap();
    store
        .add_items(job.id, &new_items("beat", 5))
        .await
        .unwrap();
    let short = store.lease_items(job.id, "heart", 3, 300).await.unwrap();
    assert_eq!(short.len(), 3);
    let (kept, also_kept, forgotten) = (&short[0], &short[1], &short[2]);
    let theirs = store
        .lease_items(job.id, "other", 1, 60_000)
        .await
        .unwrap()
        .remove(0);
    let lapsed = store
        .lease_items(job.id, "late", 1, 1)
        .await
        .unwrap()
        .remove(0);

    assert_eq!(
        store
            .renew_leases("stranger", &[kept.id], 60_000)
            .await
            .unwrap(),
        0,
        "nobody renews a lease they do not hold"
    );
    assert_eq!(store.renew_leases("heart", &[], 60_000).await.unwrap(), 0);
    assert_eq!(
        store
            .renew_leases(
                "heart",
                &[
                    kept.id,
                    also_kept.id,
                    theirs.id,
                    lapsed.id,
                    i64::MAX,
                    kept.id
                ],
                60_000
            )
            .await
            .unwrap(),
        2,
        "only the owner's own items, each once; others' and unknown ids are left alone"
    );

    tokio::time::sleep(Duration::from_millis(25)).await;
    assert_eq!(
        store
            .renew_leases("late", &[lapsed.id], 60_000)
            .await
            .unwrap(),
        1,
        "an expired lease nobody took over is still the owner's to renew"
    );

    // Past the 300 ms the first leases were taken for: only the one that was
    // not renewed passes to another owner.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let taken = store
        .lease_items(job.id, "thief", 10, 60_000)
        .await
        .unwrap();
    let taken_ids: Vec<i64> = taken.iter().map(|item| item.id).collect();
    assert_eq!(
        taken_ids,
        vec![forgotten.id],
        "renewed leases are not taken over"
    );
    assert_eq!(taken[0].attempts, 2);

    store
        .complete_item(
            kept.id,
            "heart",
            &new_conversation(kept, "user_stop", Some(1.0)),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .renew_leases("heart", &[kept.id, forgotten.id], 60_000)
            .await
            .unwrap(),
        0,
        "neither a done item nor one taken over is renewed"
    );
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            pending: 0,
            leased: 4,
            done: 1,
            failed: 0
        }
    );
}

async fn completing_stores_messages_in_order_with_tool_calls_round_tripping(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("roundtrip", &format!("{run}-roundtrip")))
        .await
        .unwrap();
    store.add_items(job.id, &new_items("rt", 2)).await.unwrap();
    let leased = store.lease_items(job.id, "w", 2, 60_000).await.unwrap();
    assert_eq!(leased.len(), 2);

    let tool_calls = json!([
        {"id": "call_1", "name": "find_order", "arguments": "{\"order_id\": \"#W42\"}"},
        {"id": "call_2", "name": "get_user", "arguments": "{\"email\": \"zoë@example.com\"}"}
    ]);
    // A policy server's token information on both policy generations: ids
    // up to u32::MAX and log probabilities that only read back bit for bit.
    let calling_tokens = TokenIds {
        prompt_token_ids: (0..4096).chain([u32::MAX]).collect(),
        generation_token_ids: vec![151_643, 7, 0],
        generation_log_probs: vec![-0.1 - 0.2, -1e-300, -23.456_789_012_345_67],
    };
    let reply_tokens = TokenIds {
        prompt_token_ids: vec![1, 2, 3],
        generation_token_ids: vec![9],
        generation_log_probs: vec![-0.0],
    };
    let mut full = new_conversation(&leased[0], "user_stop", Some(0.75));
    full.messages = vec![
        message("system", "You are a retail agent.", "system"),
        message("user", "Where is my order #W42? 📦", "user"),
        NewMessage {
            tool_calls: Some(tool_calls.clone()),
            prompt_tokens: Some(812),
            completion_tokens: Some(41),
            latency_ms: Some(930),
            tokens: Some(Arc::new(calling_tokens.clone())),
            ..message("assistant", "", "policy")
        },
        NewMessage {
            tool_call_id: Some("call_1".into()),
            ..message("tool", "{\"status\": \"shipped\"}", "env")
        },
        NewMessage {
            tool_call_id: Some("call_2".into()),
            ..message("tool", "{\"name\": \"Zoë\"}", "env")
        },
        NewMessage {
            tokens: Some(Arc::new(reply_tokens.clone())),
            ..message("assistant", "It shipped yesterday, Zoë.", "policy")
        },
        message("user", "Thanks!\n###STOP###", "user"),
    ];
    full.reward_breakdown = json!({"db": 1.0, "communicate": 0.5, "checks": [true, false]});
    full.metadata = json!({"persona": {"verbosity": "terse"}, "turns": 3});
    full.tools = Arc::new(json!([{"type": "function", "function": {"name": "find_order"}}]));
    full.usage = vec![
        usage("user", 3, 400, 60, 700),
        usage("policy", 2, 1600, 80, 1500),
    ];
    let id = store.complete_item(leased[0].id, "w", &full).await.unwrap();

    let stored = store.get_conversation(id).await.unwrap().unwrap();
    assert_stored_as_given(&stored, id, &full);
    assert_eq!(stored.messages[2].tool_calls, Some(tool_calls));
    let tokens = store.message_tokens(id).await.unwrap();
    let bits =
        |t: &TokenIds| -> Vec<u64> { t.generation_log_probs.iter().map(|p| p.to_bits()).collect() };
    assert_eq!(tokens.len(), 2, "only the messages that carry them");
    assert_eq!((tokens[0].0, &tokens[0].1), (2, &calling_tokens));
    assert_eq!((tokens[1].0, &tokens[1].1), (5, &reply_tokens));
    assert_eq!(bits(&tokens[0].1), bits(&calling_tokens));
    assert_eq!(bits(&tokens[1].1), bits(&reply_tokens), "-0.0 stays -0.0");

    // The sparse end: no reward, no verification, no messages, no usage.
    let mut bare = new_conversation(&leased[1], "policy_error", None);
    bare.reward_breakdown = Value::Null;
    bare.messages.clear();
    bare.usage.clear();
    let bare_id = store.complete_item(leased[1].id, "w", &bare).await.unwrap();
    let stored_bare = store.get_conversation(bare_id).await.unwrap().unwrap();
    assert_stored_as_given(&stored_bare, bare_id, &bare);
    assert!(store.message_tokens(bare_id).await.unwrap().is_empty());

    assert!(store.get_conversation(i64::MAX).await.unwrap().is_none());
}

async fn completing_the_same_item_twice_is_refused_and_keeps_one_conversation(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("twice", &format!("{run}-twice")))
        .await
        .unwrap();
    store
        .add_items(job.id, &new_items("once", 1))
        .await
        .unwrap();
    let item = store
        .lease_items(job.id, "w", 1, 60_000)
        .await
        .unwrap()
        .remove(0);
    let conversation = new_conversation(&item, "user_stop", Some(1.0));
    let id = store
        .complete_item(item.id, "w", &conversation)
        .await
        .unwrap();

    let again = store.complete_item(item.id, "w", &conversation).await;
    assert_lease_lost(again, item.id, "w");
    let fail_after_done = store.fail_item(item.id, "w", "late", "after done").await;
    assert_lease_lost(fail_after_done, item.id, "w");
    assert!(
        store
            .lease_items(job.id, "w", 1, 60_000)
            .await
            .unwrap()
            .is_empty(),
        "a done item is never leased again"
    );

    let stored = store.conversations_page(job.id, 0, 10).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].conversation.id, id);
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            done: 1,
            ..ItemCounts::default()
        }
    );
}

async fn a_group_commit_stores_each_held_item_and_refuses_only_the_lost_one(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("group", &format!("{run}-group")))
        .await
        .unwrap();
    store
        .add_items(job.id, &new_items("batch", 4))
        .await
        .unwrap();
    let leased = store.lease_items(job.id, "w", 3, 60_000).await.unwrap();
    assert_eq!(leased.len(), 3, "one lease transaction takes three items");
    let other = store.lease_items(job.id, "x", 3, 60_000).await.unwrap();
    assert_eq!(other.len(), 1, "the fourth item is left for another owner");

    let conversations: Vec<NewConversation> = leased
        .iter()
        .map(|item| new_conversation(item, "user_stop", Some(1.0)))
        .collect();
    // The middle one is completed first on its own, so in the batch its
    // lease is no longer held; the x-owned item is not w's at all.
    store
        .complete_item(leased[1].id, "w", &conversations[1])
        .await
        .unwrap();
    let foreign = new_conversation(&other[0], "user_stop", Some(0.0));
    let batch: Vec<(i64, &NewConversation)> = vec![
        (leased[0].id, &conversations[0]),
        (leased[1].id, &conversations[1]),
        (other[0].id, &foreign),
        (leased[2].id, &conversations[2]),
    ];
    let results = store.complete_items("w", &batch).await.unwrap();
    assert_eq!(results.len(), 4, "one result per conversation, in order");
    let first = results[0].as_ref().map(|id| *id).unwrap();
    let last = results[3].as_ref().map(|id| *id).unwrap();
    let mut results = results.into_iter();
    let _ = results.next();
    assert_lease_lost(results.next().unwrap(), leased[1].id, "w");
    assert_lease_lost(results.next().unwrap(), other[0].id, "w");

    let stored = store.conversations_page(job.id, 0, 10).await.unwrap();
    let ids: Vec<i64> = stored.iter().map(|c| c.conversation.id).collect();
    assert_eq!(
        stored.len(),
        3,
        "three conversations, one per w item: {ids:?}"
    );
    assert!(ids.contains(&first) && ids.contains(&last));
    let counts = store.item_counts(job.id).await.unwrap();
    assert_eq!((counts.done, counts.leased), (3, 1), "{counts:?}");
}

async fn a_failed_item_keeps_its_error_and_is_leased_again_after_reset(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("failures", &format!("{run}-failures")))
        .await
        .unwrap();
    store.add_items(job.id, &new_items("f", 3)).await.unwrap();
    let leased = store.lease_items(job.id, "w", 3, 60_000).await.unwrap();
    assert_eq!(leased.len(), 3);
    let (broken, fine) = (&leased[0], &leased[1]);

    let stranger = store.fail_item(broken.id, "stranger", "http", "no").await;
    assert_lease_lost(stranger, broken.id, "stranger");
    store
        .fail_item(
            broken.id,
            "w",
            "http",
            "503 Service Unavailable after 5 attempts",
        )
        .await
        .unwrap();
    store
        .complete_item(
            fine.id,
            "w",
            &new_conversation(fine, "user_stop", Some(1.0)),
        )
        .await
        .unwrap();
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            pending: 0,
            leased: 1,
            done: 1,
            failed: 1
        }
    );
    assert!(
        store
            .lease_items(job.id, "w", 3, 60_000)
            .await
            .unwrap()
            .is_empty(),
        "a failed item waits for a reset"
    );

    assert_eq!(store.reset_failed_items(job.id).await.unwrap(), 1);
    assert_eq!(store.reset_failed_items(job.id).await.unwrap(), 0);
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            pending: 1,
            leased: 1,
            done: 1,
            failed: 0
        }
    );
    let retried = store.lease_items(job.id, "w2", 3, 60_000).await.unwrap();
    assert_eq!(retried.len(), 1);
    assert_eq!(retried[0].id, broken.id);
    assert_eq!(retried[0].attempts, 2);
    assert_eq!(
        retried[0].last_error.as_deref(),
        Some("http: 503 Service Unavailable after 5 attempts")
    );
}

async fn released_items_go_back_to_pending_but_only_the_owners(store: &Arc<dyn Store>, run: &str) {
    let job = store
        .create_job(&new_job("release", &format!("{run}-release")))
        .await
        .unwrap();
    store.add_items(job.id, &new_items("r", 4)).await.unwrap();
    let mine = store.lease_items(job.id, "me", 2, 60_000).await.unwrap();
    let theirs = store.lease_items(job.id, "them", 1, 60_000).await.unwrap();
    assert_eq!((mine.len(), theirs.len()), (2, 1));
    store
        .complete_item(
            mine[0].id,
            "me",
            &new_conversation(&mine[0], "user_stop", Some(1.0)),
        )
        .await
        .unwrap();
    assert_eq!(
        store.release_items(job.id, "me").await.unwrap(),
        1,
        "only the unfinished one"
    );
    assert_eq!(
        store.item_counts(job.id).await.unwrap(),
        ItemCounts {
            pending: 2,
            leased: 1,
            done: 1,
            failed: 0
        }
    );
    let again = store.lease_items(job.id, "next", 4, 60_000).await.unwrap();
    let ids: Vec<i64> = again.iter().map(|i| i.id).collect();
    assert!(
        ids.contains(&mine[1].id),
        "a released item is leased again at once"
    );
    assert!(
        !ids.contains(&theirs[0].id),
        "another owner's live lease is untouched"
    );
}

async fn user_checks_are_replaced_or_added_by_a_recheck(store: &Arc<dyn Store>, run: &str) {
    let job = store
        .create_job(&new_job("rechecked", &format!("{run}-rechecked")))
        .await
        .unwrap();
    store.add_items(job.id, &new_items("r", 2)).await.unwrap();
    let items = store.lease_items(job.id, "w", 10, 60_000).await.unwrap();
    let mut ids = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let mut c = new_conversation(item, "user_stop", Some(1.0));
        // The first has checks of an older version; the second none at all.
        c.user_checks = (n == 0).then(|| serde_json::json!({"version": 2, "checks": []}));
        ids.push(store.complete_item(item.id, "w", &c).await.unwrap());
    }
    let current =
        serde_json::json!({"version": 3, "checks": [{"flag": "repetition", "outcome": "clear"}]});
    let written = store
        .replace_user_checks(&[(ids[0], current.clone()), (ids[1], current.clone())])
        .await
        .unwrap();
    assert_eq!(written, 2);
    let page = store.conversations_page(job.id, 0, 10).await.unwrap();
    for c in &page {
        assert_eq!(c.conversation.user_checks.as_ref(), Some(&current));
    }
}

async fn pages_return_every_conversation_of_the_job_once_in_id_order(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let paged = store
        .create_job(&new_job("paged", &format!("{run}-paged")))
        .await
        .unwrap();
    let other = store
        .create_job(&new_job("paged-other", &format!("{run}-paged-other")))
        .await
        .unwrap();
    store
        .add_items(paged.id, &new_items("p", 23))
        .await
        .unwrap();
    store
        .add_items(other.id, &new_items("q", 23))
        .await
        .unwrap();
    let mine = store.lease_items(paged.id, "w", 100, 60_000).await.unwrap();
    let theirs = store.lease_items(other.id, "w", 100, 60_000).await.unwrap();

    // Interleave the two jobs so their conversation ids interleave too.
    let mut expected = Vec::new();
    for (item, their_item) in mine.iter().zip(&theirs) {
        let id = store
            .complete_item(
                item.id,
                "w",
                &new_conversation(item, "user_stop", Some(1.0)),
            )
            .await
            .unwrap();
        expected.push(id);
        store
            .complete_item(
                their_item.id,
                "w",
                &new_conversation(their_item, "max_turns", None),
            )
            .await
            .unwrap();
    }

    let mut seen = Vec::new();
    let mut page_sizes = Vec::new();
    let mut after = 0;
    loop {
        let page = store.conversations_page(paged.id, after, 5).await.unwrap();
        if page.is_empty() {
            break;
        }
        page_sizes.push(page.len());
        for stored in &page {
            let c = &stored.conversation;
            assert_eq!(c.job_id, paged.id);
            assert!(c.id > after, "ids ascend across and within pages");
            after = c.id;
            seen.push(c.id);
            let first = &stored.messages[0];
            assert!(
                first.content.contains(&c.item_key),
                "messages belong to their own conversation"
            );
            let idxs: Vec<i64> = stored.messages.iter().map(|m| m.idx).collect();
            assert_eq!(idxs, vec![0, 1, 2]);
            assert_eq!(stored.usage.len(), 2);
        }
    }
    assert_eq!(page_sizes, vec![5, 5, 5, 5, 3]);
    assert_eq!(seen, expected);
    assert!(store
        .conversations_page(paged.id, 0, 0)
        .await
        .unwrap()
        .is_empty());
    let from_middle = store
        .conversations_page(paged.id, expected[10], 3)
        .await
        .unwrap();
    let ids: Vec<i64> = from_middle.iter().map(|s| s.conversation.id).collect();
    assert_eq!(ids, expected[11..14].to_vec());
}

async fn call_latencies_are_histograms_per_author_of_the_jobs_own_messages(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("latencies", &format!("{run}-latencies")))
        .await
        .unwrap();
    let other = store
        .create_job(&new_job("latencies", &format!("{run}-latencies-other")))
        .await
        .unwrap();
    assert!(store.call_latencies(job.id).await.unwrap().is_empty());
    // Per conversation: a user turn, then a policy call with a tool call and a
    // policy answer; system and tool messages carry no latency.
    let calls: [(i64, i64, i64); 3] = [(40, 120, 80), (40, 120, 300), (55, 80, 120)];
    store.add_items(job.id, &new_items("lat", 3)).await.unwrap();
    let leased = store.lease_items(job.id, "w", 3, 60_000).await.unwrap();
    for (item, (user_ms, first_ms, second_ms)) in leased.iter().zip(calls) {
        let mut conversation = new_conversation(item, "user_stop", Some(1.0));
        conversation.messages = vec![
            message("system", "prompt", "system"),
            timed(message("user", "where is my order?", "user"), user_ms),
            timed(message("assistant", "", "policy"), first_ms),
            message("tool", "{\"status\":\"shipped\"}", "env"),
            timed(message("assistant", "It has shipped.", "policy"), second_ms),
        ];
        store
            .complete_item(item.id, "w", &conversation)
            .await
            .unwrap();
    }
    store
        .add_items(other.id, &new_items("lat", 1))
        .await
        .unwrap();
    let item = store.lease_items(other.id, "w", 1, 60_000).await.unwrap();
    let mut elsewhere = new_conversation(&item[0], "user_stop", None);
    elsewhere.messages = vec![timed(message("assistant", "slow", "policy"), 9_999)];
    store
        .complete_item(item[0].id, "w", &elsewhere)
        .await
        .unwrap();

    // policy: 120, 80, 120, 300, 80, 120; user: 40, 40, 55.
    let expected = vec![
        LatencyHistogram {
            author: "policy".into(),
            counts: vec![(80, 2), (120, 3), (300, 1)],
        },
        LatencyHistogram {
            author: "user".into(),
            counts: vec![(40, 2), (55, 1)],
        },
    ];
    assert_eq!(store.call_latencies(job.id).await.unwrap(), expected);
    assert_eq!(
        store.job_summary(job.id).await.unwrap().call_latencies,
        expected,
        "the summary carries the same histograms"
    );
    assert_eq!(
        store.call_latencies(other.id).await.unwrap(),
        vec![LatencyHistogram {
            author: "policy".into(),
            counts: vec![(9_999, 1)],
        }]
    );
}

fn batch_request(custom_id: &str, hash: &str, a: i64, attempt: i64) -> NewBatchRequest {
    NewBatchRequest {
        custom_id: custom_id.to_string(),
        judge_name: "helpful".into(),
        judge_hash: hash.to_string(),
        conversation_a: a,
        conversation_b: None,
        order: "single".into(),
        sample: 0,
        prompt_hash: "p".into(),
        attempt,
    }
}

async fn a_batch_is_stored_with_its_new_requests_and_ingested_once(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let (job, conversations) = job_with_conversations(store, run, "batched", 2).await;
    let hash = format!("{run}-batch");
    let first = [
        batch_request("c0-1", &hash, conversations[0], 1),
        batch_request("c1-1", &hash, conversations[1], 1),
    ];
    let (batch, stored) = store
        .create_batch(job.id, "judge", &first)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, ["c0-1", "c1-1"]);
    // A custom_id already stored is never stored (and so never sent) again.
    assert_eq!(
        store
            .create_batch(job.id, "judge", &first[..1])
            .await
            .unwrap(),
        None
    );
    let again = [
        first[0].clone(),
        batch_request("c0-2", &hash, conversations[0], 2),
    ];
    let (second, stored) = store
        .create_batch(job.id, "judge", &again)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, ["c0-2"]);

    store
        .update_batch(
            batch,
            &BatchUpdate {
                input_file_id: Some("file-1".into()),
                status: Some("uploaded".into()),
                ..BatchUpdate::default()
            },
        )
        .await
        .unwrap();
    store
        .update_batch(
            batch,
            &BatchUpdate {
                batch_id: Some("batch_1".into()),
                status: Some("in_progress".into()),
                ..BatchUpdate::default()
            },
        )
        .await
        .unwrap();
    let batches = store.job_batches(job.id).await.unwrap();
    assert_eq!(batches.len(), 2);
    let b = &batches[0];
    assert_eq!(
        (
            b.id,
            b.input_file_id.as_deref(),
            b.batch_id.as_deref(),
            b.status.as_str(),
            b.requests
        ),
        (batch, Some("file-1"), Some("batch_1"), "in_progress", 2),
        "an update keeps what it does not name"
    );

    let mut call = judge_call("single", 0, "ok");
    call.batch = true;
    let answers = [
        BatchAnswer {
            custom_id: "c0-1".into(),
            status: "answered".into(),
            error: None,
            call: Some(call.clone()),
        },
        BatchAnswer {
            custom_id: "c1-1".into(),
            status: "failed".into(),
            error: Some("batch_error: boom".into()),
            call: None,
        },
    ];
    store.ingest_batch(batch, &answers).await.unwrap();
    // Ingested again (a run killed after storing, before it knew): nothing changes.
    let mut changed = answers.clone();
    changed[1].status = "answered".into();
    store.ingest_batch(batch, &changed).await.unwrap();

    let requests = store.batch_requests_of_job(job.id).await.unwrap();
    let status: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| (r.request.custom_id.as_str(), r.status.as_str()))
        .collect();
    assert_eq!(
        status,
        [
            ("c0-1", "answered"),
            ("c1-1", "failed"),
            ("c0-2", "submitted")
        ]
    );
    assert_eq!(requests[1].error.as_deref(), Some("batch_error: boom"));
    assert_eq!(requests[2].batch, second);
    assert_eq!(
        store.job_batches(job.id).await.unwrap()[0].status,
        "ingested"
    );
    let calls = store
        .judge_calls(&hash, conversations[0], None)
        .await
        .unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].call, call,
        "the call reads back with its batch mark"
    );
    assert!(store
        .judge_calls(&hash, conversations[1], None)
        .await
        .unwrap()
        .is_empty());
}

async fn a_judgment_and_its_calls_read_back_exactly_as_saved(store: &Arc<dyn Store>, run: &str) {
    let (job, conversations) = job_with_conversations(store, run, "judged", 2).await;
    let hash = format!("{run}-judge-exact");
    // Given out of order: they come back by order, then sample.
    let mut judgment = new_judgment(
        job.id,
        &hash,
        conversations[0],
        Some(conversations[1]),
        vec![
            judge_call("ba", 0, "ok"),
            judge_call("ab", 1, "failed"),
            judge_call("ab", 0, "unparseable"),
        ],
    );
    judgment.verdict = Some(json!({"kind": "pairwise", "winner": "tie", "note": "zoë 📦"}));
    judgment.score = Some(0.5);
    judgment.consistent = Some(false);
    judgment.reason = Some("the orders disagreed: a tie".to_string());

    assert!(store
        .find_judgment(&hash, conversations[0], Some(conversations[1]))
        .await
        .unwrap()
        .is_none());
    let before = now_ms();
    let id = store.save_judgment(&judgment).await.unwrap();
    let after = now_ms();

    let found = store
        .find_judgment(&hash, conversations[0], Some(conversations[1]))
        .await
        .unwrap()
        .unwrap();
    assert_judgment_as_given(&found, id, &judgment);
    assert!((before..=after).contains(&found.updated_at));

    let calls = store
        .judge_calls(&hash, conversations[0], Some(conversations[1]))
        .await
        .unwrap();
    let orders: Vec<(&str, i64)> = calls
        .iter()
        .map(|c| (c.call.order.as_str(), c.call.sample))
        .collect();
    assert_eq!(orders, vec![("ab", 0), ("ab", 1), ("ba", 0)]);
    for (got, want) in
        calls
            .iter()
            .zip([&judgment.calls[2], &judgment.calls[1], &judgment.calls[0]])
    {
        assert_call_as_given(got, &judgment, want);
        assert!((before..=after).contains(&got.created_at));
    }

    assert_eq!(store.judgments_of_job(job.id).await.unwrap(), vec![found]);
    let mut by_id = calls.clone();
    by_id.sort_by_key(|c| c.id);
    assert_eq!(store.judge_calls_of_job(job.id).await.unwrap(), by_id);

    let other_hash = format!("{run}-judge-never-ran");
    assert!(store
        .find_judgment(&other_hash, conversations[0], Some(conversations[1]))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .judge_calls(&other_hash, conversations[0], Some(conversations[1]))
        .await
        .unwrap()
        .is_empty());
    assert!(
        store
            .find_judgment(&hash, conversations[1], Some(conversations[0]))
            .await
            .unwrap()
            .is_none(),
        "A vs B is not B vs A"
    );

    // The sparse end: nothing optional, no calls.
    let mut bare = new_judgment(job.id, &hash, conversations[1], None, Vec::new());
    bare.status = "failed".to_string();
    bare.verdict = None;
    bare.score = None;
    bare.consistent = None;
    bare.reason = None;
    let bare_id = store.save_judgment(&bare).await.unwrap();
    let found_bare = store
        .find_judgment(&hash, conversations[1], None)
        .await
        .unwrap()
        .unwrap();
    assert_judgment_as_given(&found_bare, bare_id, &bare);
    assert!(store
        .judge_calls(&hash, conversations[1], None)
        .await
        .unwrap()
        .is_empty());
}

async fn saving_a_judgment_again_replaces_it_and_a_retried_call_replaces_the_failed_one(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let (job, conversations) = job_with_conversations(store, run, "retried", 2).await;
    let judging = store
        .create_job(&new_job("judging", &format!("{run}-judging-retry")))
        .await
        .unwrap();
    let hash = format!("{run}-judge-retry");
    let (a, b) = (conversations[0], Some(conversations[1]));

    let mut first = new_judgment(
        job.id,
        &hash,
        a,
        b,
        vec![judge_call("ab", 0, "ok"), judge_call("ba", 0, "failed")],
    );
    first.status = "failed".to_string();
    first.verdict = None;
    first.score = None;
    first.consistent = None;
    first.reason = Some("call ba/0 failed: 503 after 5 attempts".to_string());
    let id = store.save_judgment(&first).await.unwrap();
    let first_calls = store.judge_calls(&hash, a, b).await.unwrap();
    assert_eq!(first_calls.len(), 2);
    assert_eq!(first_calls[1].call.status, "failed");

    // The retry reuses the cached ab call and makes only the ba call again,
    // from a judging job of its own.
    let mut retry = new_judgment(judging.id, &hash, a, b, vec![judge_call("ba", 0, "ok")]);
    retry.consistent = Some(true);
    retry.reason = None;
    let again = store.save_judgment(&retry).await.unwrap();
    assert_eq!(again, id, "the judgment is replaced in place, not added");

    let found = store.find_judgment(&hash, a, b).await.unwrap().unwrap();
    assert_judgment_as_given(&found, id, &retry);
    assert_eq!(found.job_id, judging.id, "the job whose work made it now");
    assert_eq!(
        store.judgments_of_job(job.id).await.unwrap(),
        vec![found],
        "one judgment, still found by its conversation A's job"
    );

    let calls = store.judge_calls(&hash, a, b).await.unwrap();
    assert_eq!(calls.len(), 2, "no duplicate call rows");
    assert_eq!(calls[0], first_calls[0], "the cached ok call is untouched");
    assert_eq!(
        calls[1].id, first_calls[1].id,
        "the retry takes the failed call's place"
    );
    assert_call_as_given(&calls[1], &retry, &retry.calls[0]);
    assert_eq!(calls[1].call.error, None);
    assert_eq!(store.judge_calls_of_job(job.id).await.unwrap(), calls);
    assert!(
        store.judgments_of_job(judging.id).await.unwrap().is_empty(),
        "a judging job made no conversations of its own"
    );
}

async fn single_and_pairwise_judgments_of_one_conversation_are_distinct(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let (job, conversations) = job_with_conversations(store, run, "distinct", 2).await;
    let hash = format!("{run}-judge-distinct");
    let (a, b) = (conversations[0], conversations[1]);
    // Against a reference text (no conversation B) and against conversation
    // B: the same judge, conversation A, order and sample.
    let mut single = new_judgment(job.id, &hash, a, None, vec![judge_call("ab", 0, "ok")]);
    single.verdict = Some(json!({"kind": "pairwise", "winner": "a"}));
    single.calls[0].raw_output = "[[A]] against the reference".to_string();
    let mut pairwise = new_judgment(job.id, &hash, a, Some(b), vec![judge_call("ab", 0, "ok")]);
    pairwise.verdict = Some(json!({"kind": "pairwise", "winner": "b"}));
    pairwise.calls[0].raw_output = "[[B]] against conversation B".to_string();

    let single_id = store.save_judgment(&single).await.unwrap();
    let pairwise_id = store.save_judgment(&pairwise).await.unwrap();
    assert_ne!(single_id, pairwise_id);
    // Saved again, each still replaces only itself.
    assert_eq!(store.save_judgment(&single).await.unwrap(), single_id);
    assert_eq!(store.save_judgment(&pairwise).await.unwrap(), pairwise_id);

    let found_single = store.find_judgment(&hash, a, None).await.unwrap().unwrap();
    assert_judgment_as_given(&found_single, single_id, &single);
    let found_pairwise = store
        .find_judgment(&hash, a, Some(b))
        .await
        .unwrap()
        .unwrap();
    assert_judgment_as_given(&found_pairwise, pairwise_id, &pairwise);

    let single_calls = store.judge_calls(&hash, a, None).await.unwrap();
    assert_eq!(single_calls.len(), 1);
    assert_call_as_given(&single_calls[0], &single, &single.calls[0]);
    let pairwise_calls = store.judge_calls(&hash, a, Some(b)).await.unwrap();
    assert_eq!(pairwise_calls.len(), 1);
    assert_call_as_given(&pairwise_calls[0], &pairwise, &pairwise.calls[0]);

    let other_hash = format!("{run}-judge-distinct-other");
    assert!(
        store
            .find_judgment(&other_hash, a, None)
            .await
            .unwrap()
            .is_none(),
        "another judge has judged nothing"
    );
    let ids: Vec<i64> = store
        .judgments_of_job(job.id)
        .await
        .unwrap()
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(ids, vec![single_id, pairwise_id]);
    assert_eq!(store.judge_calls_of_job(job.id).await.unwrap().len(), 2);
}

async fn a_jobs_judgments_are_those_whose_conversation_a_it_made(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let (mine, my_conversations) = job_with_conversations(store, run, "mine", 2).await;
    let (theirs, their_conversations) = job_with_conversations(store, run, "theirs", 2).await;
    let judging = store
        .create_job(&new_job("judging", &format!("{run}-judging-of-job")))
        .await
        .unwrap();
    let hash = format!("{run}-judge-of-job");
    let call = || vec![judge_call("ab", 0, "ok"), judge_call("ba", 0, "ok")];

    // Interleaved, so the two jobs' judgment ids interleave too.
    let mine_vs_theirs = new_judgment(
        judging.id,
        &hash,
        my_conversations[0],
        Some(their_conversations[0]),
        call(),
    );
    let theirs_vs_mine = new_judgment(
        judging.id,
        &hash,
        their_conversations[0],
        Some(my_conversations[0]),
        call(),
    );
    let mine_alone = new_judgment(mine.id, &hash, my_conversations[1], None, call());
    let theirs_alone = new_judgment(theirs.id, &hash, their_conversations[1], None, call());
    let mut ids = Vec::new();
    for judgment in [&mine_vs_theirs, &theirs_vs_mine, &mine_alone, &theirs_alone] {
        ids.push(store.save_judgment(judgment).await.unwrap());
    }

    let of_mine = store.judgments_of_job(mine.id).await.unwrap();
    assert_eq!(of_mine.len(), 2, "{of_mine:?}");
    assert_judgment_as_given(&of_mine[0], ids[0], &mine_vs_theirs);
    assert_judgment_as_given(&of_mine[1], ids[2], &mine_alone);
    let of_theirs = store.judgments_of_job(theirs.id).await.unwrap();
    assert_eq!(of_theirs.len(), 2, "{of_theirs:?}");
    assert_judgment_as_given(&of_theirs[0], ids[1], &theirs_vs_mine);
    assert_judgment_as_given(&of_theirs[1], ids[3], &theirs_alone);

    let my_calls = store.judge_calls_of_job(mine.id).await.unwrap();
    let call_a: Vec<i64> = my_calls.iter().map(|c| c.conversation_a).collect();
    assert_eq!(
        call_a,
        vec![
            my_conversations[0],
            my_conversations[0],
            my_conversations[1],
            my_conversations[1]
        ]
    );
    assert!(my_calls.windows(2).all(|w| w[0].id < w[1].id), "by id");
    let their_calls = store.judge_calls_of_job(theirs.id).await.unwrap();
    assert_eq!(their_calls.len(), 4);
    assert!(their_calls
        .iter()
        .all(|c| their_conversations.contains(&c.conversation_a)));
    assert!(store.judgments_of_job(judging.id).await.unwrap().is_empty());
    assert!(store
        .judge_calls_of_job(judging.id)
        .await
        .unwrap()
        .is_empty());

    // A conversation's judgments are those naming it as A or as B.
    let of_conversation = store
        .judgments_of_conversation(my_conversations[0])
        .await
        .unwrap();
    let found: Vec<i64> = of_conversation.iter().map(|j| j.id).collect();
    assert_eq!(found, vec![ids[0], ids[1]], "as A, then as B");
    assert_judgment_as_given(&of_conversation[1], ids[1], &theirs_vs_mine);
    let alone = store
        .judgments_of_conversation(my_conversations[1])
        .await
        .unwrap();
    assert_eq!(alone.len(), 1);

    // One judgment by id; the judgments a job made, a page at a time.
    let one = store.get_judgment(ids[2]).await.unwrap().unwrap();
    assert_judgment_as_given(&one, ids[2], &mine_alone);
    assert!(store.get_judgment(i64::MAX).await.unwrap().is_none());
    let made = store.judgments_made_by(judging.id, 0, 10).await.unwrap();
    assert_eq!(made.iter().map(|j| j.id).collect::<Vec<_>>(), ids[..2]);
    let second = store
        .judgments_made_by(judging.id, ids[0], 1)
        .await
        .unwrap();
    assert_eq!(second.iter().map(|j| j.id).collect::<Vec<_>>(), ids[1..2]);
    assert!(store
        .judgments_made_by(judging.id, ids[1], 10)
        .await
        .unwrap()
        .is_empty());
}

async fn conversation_keys_name_each_conversation_by_scenario_persona_and_sample(
    store: &Arc<dyn Store>,
    run: &str,
) {
    let job = store
        .create_job(&new_job("keys", &format!("{run}-keys")))
        .await
        .unwrap();
    let other = store
        .create_job(&new_job("keys-other", &format!("{run}-keys-other")))
        .await
        .unwrap();
    assert!(store.conversation_keys(job.id).await.unwrap().is_empty());
    store
        .add_items(job.id, &new_items("keyed", 4))
        .await
        .unwrap();
    store
        .add_items(other.id, &new_items("keyed", 4))
        .await
        .unwrap();
    let leased = store.lease_items(job.id, "w", 4, 60_000).await.unwrap();
    let their_items = store.lease_items(other.id, "w", 4, 60_000).await.unwrap();
    let outcomes = [
        ("user_stop", Some(1.0)),
        ("max_turns", None),
        ("user_stop", Some(0.25)),
        ("policy_error", Some(0.0)),
    ];
    let mut expected = Vec::new();
    for ((item, their_item), (termination, reward)) in leased.iter().zip(&their_items).zip(outcomes)
    {
        let id = store
            .complete_item(item.id, "w", &new_conversation(item, termination, reward))
            .await
            .unwrap();
        expected.push(ConversationKey {
            conversation_id: id,
            scenario_id: "keyed".to_string(),
            persona_id: item.persona_id.clone(),
            sample: item.sample,
            reward,
            termination: termination.to_string(),
        });
        store
            .complete_item(
                their_item.id,
                "w",
                &new_conversation(their_item, "user_stop", Some(0.5)),
            )
            .await
            .unwrap();
    }
    let keys = store.conversation_keys(job.id).await.unwrap();
    assert_eq!(keys, expected);
    let named: Vec<(&str, i64)> = keys
        .iter()
        .map(|k| (k.persona_id.as_str(), k.sample))
        .collect();
    assert_eq!(
        named,
        vec![
            ("persona-0", 0),
            ("persona-1", 1),
            ("persona-2", 2),
            ("persona-0", 3)
        ]
    );
    let theirs = store.conversation_keys(other.id).await.unwrap();
    assert_eq!(theirs.len(), 4);
    assert!(theirs.iter().all(|k| k.reward == Some(0.5)));
}

/// Returns the summarised job, for the reopening chapter to check.
async fn job_summary_matches_hand_computed_rewards_terminations_and_usage(
    store: &Arc<dyn Store>,
    run: &str,
) -> i64 {
    let job = store
        .create_job(&new_job("summary", &format!("{run}-summary")))
        .await
        .unwrap();
    assert_eq!(
        store.job_summary(job.id).await.unwrap(),
        JobSummary::default(),
        "an empty job sums to nothing"
    );
    store.add_items(job.id, &new_items("sum", 5)).await.unwrap();
    let leased = store.lease_items(job.id, "w", 5, 60_000).await.unwrap();
    let outcomes = [
        ("user_stop", Some(1.0)),
        ("user_stop", Some(0.5)),
        ("max_turns", None),
        ("policy_error", Some(0.0)),
        ("user_stop", Some(0.25)),
    ];
    for (n, (item, (termination, reward))) in leased.iter().zip(outcomes).enumerate() {
        let k = n as i64 + 1;
        let mut conversation = new_conversation(item, termination, reward);
        conversation.usage = vec![
            usage("policy", k, 100 * k, 10 * k, 1000 * k),
            usage("user", 2, 50, 5, 200),
        ];
        store
            .complete_item(item.id, "w", &conversation)
            .await
            .unwrap();
    }

    let summary = store.job_summary(job.id).await.unwrap();
    assert_eq!(summary.conversations, 5);
    // (1.0 + 0.5 + 0.0 + 0.25) / 4: the conversation without a reward is left out.
    let mean = summary.mean_reward.unwrap();
    assert!((mean - 0.4375).abs() < 1e-12, "mean reward {mean}");
    assert_eq!(
        summary.terminations,
        vec![
            ("user_stop".to_string(), 3),
            ("max_turns".to_string(), 1),
            ("policy_error".to_string(), 1)
        ]
    );
    // policy: k = 1..=5, so calls 15, prompt 1500, completion 150, latency 15000.
    assert_eq!(
        summary.usage,
        vec![
            usage("policy", 15, 1500, 150, 15_000),
            usage("user", 10, 250, 25, 1000)
        ]
    );
    job.id
}

async fn reopening_the_database_keeps_everything(store: &Arc<dyn Store>, before: Snapshot) {
    let after = Snapshot::take(store, before.job.id).await;
    assert_same_job(&after.job, &before.job);
    assert_eq!(after.counts, before.counts);
    assert_eq!(after.summary, before.summary);
    assert_eq!(after.conversations, before.conversations);
    assert_eq!(after.conversations.len(), 5);
    assert_eq!(
        store
            .add_items(before.job.id, &new_items("sum", 5))
            .await
            .unwrap(),
        0,
        "the reopened store still knows the items"
    );
}

/// Values only a hand (or a bug) could write are refused on the way out with
/// `Corrupt`, naming where they are. Written through a connection of its own.
async fn corrupt_stored_values_are_reported_naming_table_row_and_column(
    store: &Arc<dyn Store>,
    url: &str,
    run: &str,
) {
    let job = store
        .create_job(&new_job("corrupt", &format!("{run}-corrupt")))
        .await
        .unwrap();
    store.add_items(job.id, &new_items("c", 2)).await.unwrap();
    let leased = store.lease_items(job.id, "w", 2, 60_000).await.unwrap();
    let mut conversation = new_conversation(&leased[0], "user_stop", Some(1.0));
    conversation.messages[1].tool_calls = Some(json!([]));
    let id = store
        .complete_item(leased[0].id, "w", &conversation)
        .await
        .unwrap();

    let mut raw = RawDatabase::connect(url).await;
    raw.run(
        "UPDATE conversations SET metadata = '{not json' WHERE id = $1",
        id,
    )
    .await;
    let message = corrupt_message(store.get_conversation(id).await);
    assert!(
        message.contains("conversations row")
            && message.contains(&id.to_string())
            && message.contains("metadata"),
        "{message}"
    );
    let message = corrupt_message(store.conversations_page(job.id, 0, 10).await);
    assert!(message.contains("metadata"), "{message}");

    raw.run("UPDATE conversations SET metadata = '{}' WHERE id = $1", id)
        .await;
    raw.run(
        "UPDATE messages SET tool_calls = '[' WHERE conversation_id = $1 AND idx = 1",
        id,
    )
    .await;
    let message = corrupt_message(store.get_conversation(id).await);
    assert!(
        message.contains("messages row")
            && message.contains("idx 1")
            && message.contains("tool_calls"),
        "{message}"
    );

    raw.run(
        "UPDATE items SET status = 'exploded' WHERE id = $1",
        leased[1].id,
    )
    .await;
    let message = corrupt_message(store.item_counts(job.id).await);
    assert!(
        message.contains("items row")
            && message.contains(&leased[1].id.to_string())
            && message.contains("status")
            && message.contains("exploded"),
        "{message}"
    );

    let judgment = new_judgment(
        job.id,
        "corrupt-judge",
        id,
        None,
        vec![judge_call("ab", 0, "ok")],
    );
    let judgment_id = store.save_judgment(&judgment).await.unwrap();
    raw.run(
        "UPDATE judgments SET verdict = '{\"winner\"' WHERE id = $1",
        judgment_id,
    )
    .await;
    let message = corrupt_message(store.find_judgment("corrupt-judge", id, None).await);
    assert!(
        message.contains(&format!("judgments row {judgment_id}")) && message.contains("verdict"),
        "{message}"
    );
    let message = corrupt_message(store.judgments_of_job(job.id).await);
    assert!(message.contains("verdict"), "{message}");
    raw.run(
        "UPDATE judge_calls SET parsed = 'nope' WHERE conversation_a = $1",
        id,
    )
    .await;
    let message = corrupt_message(store.judge_calls("corrupt-judge", id, None).await);
    assert!(
        message.contains("judge_calls row") && message.contains("parsed"),
        "{message}"
    );

    // Leave a shared database as clean as it was.
    raw.run("DELETE FROM jobs WHERE id = $1", job.id).await;
    assert!(store.get_job(job.id).await.unwrap().is_none());
}

async fn a_jobs_personas_are_stored_once_and_read_back_with_their_attributes(
    store: &Arc<dyn Store>,
    url: &str,
    run: &str,
) {
    let persona = |id: &str, attributes: serde_json::Value| JobPersona {
        persona_id: id.into(),
        attributes: serde_json::from_value(attributes).unwrap(),
    };
    let job = store
        .create_job(&new_job("personas", &format!("{run}-personas")))
        .await
        .unwrap();
    let two = vec![
        persona(
            "zoe",
            json!({"country": "Côte d'Ivoire", "age": 71, "ocean": {"o": 0.25}, "tags": ["a", 1]}),
        ),
        persona("ann", json!({})),
    ];
    assert_eq!(store.put_job_personas(job.id, &two).await.unwrap(), 2);
    // A resumed job (or an agent server's) writes them again: nothing changes,
    // not even attributes given differently the second time.
    let mut again = two.clone();
    again[0].attributes.insert("age".into(), json!(99));
    again.push(persona("bob", json!({"age": 30.5})));
    assert_eq!(
        store.put_job_personas(job.id, &again).await.unwrap(),
        1,
        "only bob is new"
    );
    assert_eq!(store.put_job_personas(job.id, &[]).await.unwrap(), 0);
    let stored = store.job_personas(job.id).await.unwrap();
    assert_eq!(
        stored,
        vec![
            two[1].clone(),
            persona("bob", json!({"age": 30.5})),
            two[0].clone()
        ],
        "by id, each once, as first written"
    );

    let other = store
        .create_job(&new_job("personas-other", &format!("{run}-personas-other")))
        .await
        .unwrap();
    assert!(store.job_personas(other.id).await.unwrap().is_empty());
    assert_eq!(store.put_job_personas(other.id, &two).await.unwrap(), 2);

    // More than one multi-row statement holds (100), and a remainder.
    let many: Vec<JobPersona> = (0..250)
        .map(|i| persona(&format!("m{i:03}"), json!({"age": i, "country": "DE"})))
        .collect();
    let crowd = store
        .create_job(&new_job("personas-many", &format!("{run}-personas-many")))
        .await
        .unwrap();
    assert_eq!(
        store
            .put_job_personas(crowd.id, &many[..120])
            .await
            .unwrap(),
        120
    );
    assert_eq!(store.put_job_personas(crowd.id, &many).await.unwrap(), 130);
    assert_eq!(store.put_job_personas(crowd.id, &many).await.unwrap(), 0);
    assert_eq!(store.job_personas(crowd.id).await.unwrap(), many);

    // Deleting a job deletes its personas with it.
    let mut raw = RawDatabase::connect(url).await;
    raw.run("DELETE FROM jobs WHERE id = $1", job.id).await;
    assert!(store.job_personas(job.id).await.unwrap().is_empty());
    assert_eq!(store.job_personas(other.id).await.unwrap().len(), 2);
    raw.run("DELETE FROM jobs WHERE id = $1", other.id).await;
    raw.run("DELETE FROM jobs WHERE id = $1", crowd.id).await;
}

/// A connection of its own to the story's database, for writing what the
/// store never would.
enum RawDatabase {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl RawDatabase {
    async fn connect(url: &str) -> RawDatabase {
        use sqlx::Connection;
        if url.starts_with("sqlite:") {
            RawDatabase::Sqlite(sqlx::SqliteConnection::connect(url).await.unwrap())
        } else {
            RawDatabase::Postgres(sqlx::PgConnection::connect(url).await.unwrap())
        }
    }

    /// Runs `sql` with `$1` (both dialects read it) bound to `id`; it must
    /// change something, or the corruption a chapter checks was never made.
    async fn run(&mut self, sql: &'static str, id: i64) {
        let changed = match self {
            RawDatabase::Sqlite(raw) => sqlx::query(sql)
                .bind(id)
                .execute(raw)
                .await
                .map(|done| done.rows_affected()),
            RawDatabase::Postgres(raw) => sqlx::query(sql)
                .bind(id)
                .execute(raw)
                .await
                .map(|done| done.rows_affected()),
        };
        assert!(changed.unwrap() > 0, "{sql} with $1 = {id} changed nothing");
    }
}

// ------------------------------------------------------------ sqlite only

#[tokio::test]
async fn sqlite_memory_url_opens_a_working_store() {
    let store = store::open("sqlite::memory:").await.unwrap();
    let job = store.create_job(&new_job("mem", "mem")).await.unwrap();
    store.add_items(job.id, &new_items("m", 2)).await.unwrap();
    let leased = store.lease_items(job.id, "w", 2, 60_000).await.unwrap();
    let conversation = new_conversation(&leased[0], "user_stop", Some(1.0));
    let id = store
        .complete_item(leased[0].id, "w", &conversation)
        .await
        .unwrap();
    let stored = store.get_conversation(id).await.unwrap().unwrap();
    assert_stored_as_given(&stored, id, &conversation);
    assert_eq!(store.item_counts(job.id).await.unwrap().done, 1);
}

#[tokio::test]
async fn sqlite_open_creates_missing_folders_and_a_wal_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("deeper").join("sparring.db");
    let url = format!("sqlite://{}", path.display());
    let store = store::open(&url).await.unwrap();
    store.create_job(&new_job("wal", "wal")).await.unwrap();
    assert!(path.exists());

    let mut raw = raw_connection(&url).await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut raw)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn unsupported_database_urls_are_refused() {
    let refused = store::open("mysql://localhost/sparring").await;
    assert!(
        matches!(refused, Err(StoreError::UnsupportedUrl(url)) if url == "mysql://localhost/sparring")
    );
}

async fn raw_connection(url: &str) -> sqlx::SqliteConnection {
    use sqlx::Connection;
    sqlx::SqliteConnection::connect(url).await.unwrap()
}

fn corrupt_message<T: std::fmt::Debug>(result: Result<T, StoreError>) -> String {
    match result {
        Err(StoreError::Corrupt(message)) => message,
        other => panic!("expected StoreError::Corrupt, got {other:?}"),
    }
}

// ---------------------------------------------------------- postgres only

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_concurrent_leasers_never_share_an_item_and_together_lease_each_once() {
    let Some(url) = postgres_url("postgres concurrent leasers") else {
        return;
    };
    let run = run_id();
    let started = std::time::Instant::now();
    // Eight workers, each with a store (a pool) of its own, as on eight
    // machines, opening at once; half spell the scheme postgresql://.
    let mut opening = Vec::new();
    for n in 0..8 {
        let url = if n % 2 == 0 {
            url.clone()
        } else {
            url.replacen("postgres://", "postgresql://", 1)
        };
        opening.push(tokio::spawn(async move { open_postgres(&url).await }));
    }
    let mut stores = Vec::new();
    for open in opening {
        stores.push(open.await.unwrap().unwrap());
    }
    let job = stores[0]
        .create_job(&new_job("pg-lease-race", &format!("{run}-pg-lease-race")))
        .await
        .unwrap();
    let items = new_items("crowd", 200);
    assert_eq!(stores[0].add_items(job.id, &items).await.unwrap(), 200);

    let mut workers = Vec::new();
    for (n, store) in stores.iter().enumerate() {
        let store = Arc::clone(store);
        let job_id = job.id;
        workers.push(tokio::spawn(async move {
            let owner = format!("machine-{n}");
            let mut mine = Vec::new();
            loop {
                let leased = store.lease_items(job_id, &owner, 5, 60_000).await.unwrap();
                if leased.is_empty() {
                    break;
                }
                assert!(leased.len() <= 5);
                for item in leased {
                    assert_eq!(item.status, ItemStatus::Leased);
                    assert_eq!(item.lease_owner.as_deref(), Some(owner.as_str()));
                    assert_eq!(item.attempts, 1, "nobody leased it before");
                    mine.push(item);
                }
            }
            mine
        }));
    }
    let mut all = Vec::new();
    let mut per_worker = Vec::new();
    for worker in workers {
        let mine = worker.await.unwrap();
        per_worker.push(mine.len());
        all.extend(mine);
    }
    let ids: BTreeSet<i64> = all.iter().map(|item| item.id).collect();
    let keys: BTreeSet<&str> = all.iter().map(|item| item.key.as_str()).collect();
    let want_keys: BTreeSet<&str> = items.iter().map(|item| item.key.as_str()).collect();
    assert_eq!(all.len(), 200, "200 leases in all");
    assert_eq!(ids.len(), 200, "no item leased twice");
    assert_eq!(keys, want_keys, "every item leased");
    assert_eq!(
        stores[0].item_counts(job.id).await.unwrap(),
        ItemCounts {
            leased: 200,
            ..ItemCounts::default()
        }
    );
    assert!(stores[3]
        .lease_items(job.id, "late", 5, 60_000)
        .await
        .unwrap()
        .is_empty());
    println!(
        "8 workers leased 200 items 5 at a time in {:?} (per worker: {per_worker:?})",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_workers_opening_a_fresh_database_at_once_migrate_it_once() {
    use sqlx::{AssertSqlSafe, Connection, PgConnection};
    let Some(url) = crate::postgres::server("postgres concurrent migration") else {
        return;
    };
    let name = format!("sparring_test_migrate_{}_{}", std::process::id(), now_ms());
    let mut admin = PgConnection::connect(&url).await.unwrap();
    let created = sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await;
    if let Err(e) = created {
        println!("SKIPPED: postgres concurrent migration: cannot create a scratch database: {e}");
        return;
    }
    let fresh = crate::postgres::with_database(&url, &name);

    // On a task of its own, so the scratch database is dropped even when an
    // assertion fails; the failure is passed on after.
    let checked = tokio::spawn(async move {
        let mut opening = Vec::new();
        for _ in 0..8 {
            let fresh = fresh.clone();
            opening.push(tokio::spawn(async move { open_postgres(&fresh).await }));
        }
        let mut stores = Vec::new();
        for open in opening {
            match open.await.unwrap() {
                Ok(store) => stores.push(store),
                Err(e) => panic!("a worker failed to open a fresh database: {e}"),
            }
        }
        let mut raw = PgConnection::connect(&fresh).await.unwrap();
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&mut raw)
                .await
                .unwrap();
        // One row per file in migrations/postgres, numbered from 1.
        let shipped = std::fs::read_dir(crate::common::repo().join("migrations/postgres"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "sql")
            })
            .count() as i64;
        assert!(shipped >= 5, "{shipped} migrations found");
        assert_eq!(
            applied,
            (1..=shipped).collect::<Vec<_>>(),
            "each migration was applied once"
        );
        let job = stores[7]
            .create_job(&new_job("fresh", "fresh"))
            .await
            .unwrap();
        assert_eq!(
            stores[0].get_job(job.id).await.unwrap().unwrap().name,
            "fresh"
        );
    })
    .await;

    sqlx::query(AssertSqlSafe(format!("DROP DATABASE {name} WITH (FORCE)")))
        .execute(&mut admin)
        .await
        .unwrap();
    if let Err(failure) = checked {
        std::panic::resume_unwind(failure.into_panic());
    }
}

#[tokio::test]
async fn an_unreachable_postgres_server_is_named_without_its_password() {
    // Nothing listens on port 1: the connection is refused at once.
    let refused = store::open("postgres://sparring:hunter2@127.0.0.1:1/sparring").await;
    match refused {
        Err(StoreError::Open { url, .. }) => {
            assert_eq!(url, "postgres://sparring:***@127.0.0.1:1/sparring");
        }
        Err(other) => panic!("expected StoreError::Open, got {other}"),
        Ok(_) => panic!("opened a store on a closed port"),
    }
}

/// A Postgres store, as `store::open` opens it, from a future that can be
/// spawned on its own task (SQLite's migrator makes `store::open`'s future
/// one that cannot).
async fn open_postgres(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    Ok(Arc::new(PostgresStore::open(url).await?))
}

// -------------------------------------------------------------- fixtures

/// What the reopening chapter compares.
struct Snapshot {
    job: JobRow,
    counts: ItemCounts,
    summary: JobSummary,
    conversations: Vec<StoredConversation>,
}

impl Snapshot {
    async fn take(store: &Arc<dyn Store>, job_id: i64) -> Snapshot {
        Snapshot {
            job: store.get_job(job_id).await.unwrap().unwrap(),
            counts: store.item_counts(job_id).await.unwrap(),
            summary: store.job_summary(job_id).await.unwrap(),
            conversations: store.conversations_page(job_id, 0, 1000).await.unwrap(),
        }
    }
}

pub(crate) fn new_job(name: &str, hash: &str) -> NewJob {
    NewJob {
        name: name.to_string(),
        kind: sparring::store::JobKind::Generation,
        config_snapshot: format!("name = \"{name}\"\n"),
        config_hash: hash.to_string(),
    }
}

fn new_item(scenario: &str, n: usize) -> NewItem {
    NewItem {
        key: format!("{scenario}/persona-{}/{n}", n % 3),
        scenario_id: scenario.to_string(),
        persona_id: format!("persona-{}", n % 3),
        sample: n as i64,
        // Seeds are u64s stored bit for bit: the high ones are negative.
        seed: (0x9E37_79B9_7F4A_7C15_u64.wrapping_mul(n as u64 + 1)) as i64,
    }
}

pub(crate) fn new_items(scenario: &str, count: usize) -> Vec<NewItem> {
    (0..count).map(|n| new_item(scenario, n)).collect()
}

fn message(role: &str, content: &str, author: &str) -> NewMessage {
    NewMessage {
        role: role.to_string(),
        content: content.into(),
        tool_calls: None,
        tool_call_id: None,
        author: author.to_string(),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        tokens: None,
    }
}

/// `message` as a model call that took `latency_ms`.
fn timed(message: NewMessage, latency_ms: i64) -> NewMessage {
    NewMessage {
        prompt_tokens: Some(100),
        completion_tokens: Some(10),
        latency_ms: Some(latency_ms),
        ..message
    }
}

fn usage(role: &str, calls: i64, prompt: i64, completion: i64, latency: i64) -> UsageRow {
    UsageRow {
        role: role.to_string(),
        calls,
        prompt_tokens: prompt,
        completion_tokens: completion,
        latency_ms: latency,
    }
}

/// A small conversation for `item`, whose first message names the item key.
pub(crate) fn new_conversation(
    item: &ItemRow,
    termination: &str,
    reward: Option<f64>,
) -> NewConversation {
    NewConversation {
        job_id: item.job_id,
        item_id: item.id,
        item_key: item.key.clone(),
        scenario_id: item.scenario_id.clone(),
        persona_id: item.persona_id.clone(),
        sample: item.sample,
        seed: item.seed,
        policy_model: "mock-policy".to_string(),
        user_model: "mock-user".to_string(),
        termination: termination.to_string(),
        reward,
        reward_breakdown: json!({"db": reward}),
        metadata: json!({"key": item.key}),
        tools: Arc::new(json!([])),
        usage: vec![usage("policy", 1, 10, 2, 30), usage("user", 1, 8, 3, 20)],
        started_at: 1_700_000_000_000,
        finished_at: 1_700_000_004_321,
        user_checks: None,
        messages: vec![
            message(
                "system",
                &format!("system prompt for {}", item.key),
                "system",
            ),
            message("user", "hello", "user"),
            message("assistant", "hi, how can I help?", "policy"),
        ],
    }
}

fn assert_stored_as_given(stored: &StoredConversation, id: i64, given: &NewConversation) {
    let c = &stored.conversation;
    assert_eq!(c.id, id);
    assert_eq!(
        (c.job_id, c.item_id, c.item_key.as_str()),
        (given.job_id, given.item_id, given.item_key.as_str())
    );
    assert_eq!(
        (
            c.scenario_id.as_str(),
            c.persona_id.as_str(),
            c.sample,
            c.seed
        ),
        (
            given.scenario_id.as_str(),
            given.persona_id.as_str(),
            given.sample,
            given.seed
        )
    );
    assert_eq!(
        (c.policy_model.as_str(), c.user_model.as_str()),
        (given.policy_model.as_str(), given.user_model.as_str())
    );
    assert_eq!(c.termination, given.termination);
    assert_eq!(c.reward, given.reward);
    assert_eq!(c.reward_breakdown, given.reward_breakdown);
    assert_eq!(c.metadata, given.metadata);
    assert_eq!(c.tools, *given.tools);
    assert_eq!(
        (c.started_at, c.finished_at),
        (given.started_at, given.finished_at)
    );

    assert_eq!(stored.messages.len(), given.messages.len());
    for (n, (got, want)) in stored.messages.iter().zip(&given.messages).enumerate() {
        assert_eq!(got.idx, n as i64, "messages come back in order");
        assert_eq!(got.role, want.role);
        assert_eq!(*got.content, *want.content);
        assert_eq!(got.tool_calls, want.tool_calls);
        assert_eq!(got.tool_call_id, want.tool_call_id);
        assert_eq!(got.author, want.author);
        assert_eq!(got.prompt_tokens, want.prompt_tokens);
        assert_eq!(got.completion_tokens, want.completion_tokens);
        assert_eq!(got.latency_ms, want.latency_ms);
    }

    let mut want_usage = given.usage.clone();
    want_usage.sort_by(|a, b| a.role.cmp(&b.role));
    assert_eq!(stored.usage, want_usage, "usage comes back in role order");
}

/// A job of `count` stored conversations (scenario `name`, samples 0, 1, …),
/// and their ids in item order.
async fn job_with_conversations(
    store: &Arc<dyn Store>,
    run: &str,
    name: &str,
    count: usize,
) -> (JobRow, Vec<i64>) {
    let job = store
        .create_job(&new_job(name, &format!("{run}-{name}")))
        .await
        .unwrap();
    store
        .add_items(job.id, &new_items(name, count))
        .await
        .unwrap();
    let leased = store
        .lease_items(job.id, "w", count as u32, 60_000)
        .await
        .unwrap();
    let mut ids = Vec::new();
    for item in &leased {
        let conversation = new_conversation(item, "user_stop", Some(1.0));
        ids.push(
            store
                .complete_item(item.id, "w", &conversation)
                .await
                .unwrap(),
        );
    }
    (job, ids)
}

/// A judge call in `order`, sample `sample`, as it ends with `status`.
fn judge_call(order: &str, sample: i64, status: &str) -> NewJudgeCall {
    let ok = status == "ok";
    NewJudgeCall {
        order: order.to_string(),
        sample,
        prompt_hash: format!("sha256-of-{order}-{sample}"),
        model: "mock-judge".to_string(),
        raw_output: match status {
            "ok" => format!("{order} wins: [[A]]"),
            "unparseable" => "I cannot decide.".to_string(),
            _ => String::new(),
        },
        parsed: ok.then(|| json!({"kind": "pairwise", "winner": "a", "order": order})),
        status: status.to_string(),
        error: (status == "failed").then(|| "http: 503 after 5 attempts".to_string()),
        prompt_tokens: 900 + sample,
        completion_tokens: 12,
        latency_ms: 450 + sample,
        batch: false,
    }
}

/// An ok judgment of conversation `a` (against `b`) by the judge `hash`.
fn new_judgment(
    job_id: i64,
    hash: &str,
    a: i64,
    b: Option<i64>,
    calls: Vec<NewJudgeCall>,
) -> NewJudgment {
    NewJudgment {
        job_id,
        judge_name: "helpfulness".to_string(),
        judge_hash: hash.to_string(),
        conversation_a: a,
        conversation_b: b,
        status: "ok".to_string(),
        verdict: Some(json!({"kind": "pairwise", "winner": "a"})),
        score: Some(1.0),
        consistent: Some(true),
        reason: Some("both orders agreed".to_string()),
        calls,
    }
}

/// `got` is `given` as saved with id `id` (its time is the store's).
fn assert_judgment_as_given(got: &JudgmentRow, id: i64, given: &NewJudgment) {
    let want = JudgmentRow {
        id,
        job_id: given.job_id,
        judge_name: given.judge_name.clone(),
        judge_hash: given.judge_hash.clone(),
        conversation_a: given.conversation_a,
        conversation_b: given.conversation_b,
        status: given.status.clone(),
        verdict: given.verdict.clone(),
        score: given.score,
        consistent: given.consistent,
        reason: given.reason.clone(),
        updated_at: got.updated_at,
    };
    assert_eq!(*got, want);
}

/// `got` is `call`, saved with `judgment` (its id and time are the store's).
fn assert_call_as_given(got: &JudgeCallRow, judgment: &NewJudgment, call: &NewJudgeCall) {
    let want = JudgeCallRow {
        id: got.id,
        judge_name: judgment.judge_name.clone(),
        judge_hash: judgment.judge_hash.clone(),
        conversation_a: judgment.conversation_a,
        conversation_b: judgment.conversation_b,
        call: call.clone(),
        created_at: got.created_at,
    };
    assert_eq!(*got, want);
}

fn assert_same_job(got: &JobRow, want: &JobRow) {
    assert_eq!(
        (got.id, got.name.as_str(), got.kind.as_str()),
        (want.id, want.name.as_str(), want.kind.as_str())
    );
    assert_eq!(got.config_snapshot, want.config_snapshot);
    assert_eq!(got.config_hash, want.config_hash);
    assert_eq!(got.status, want.status);
    assert_eq!(
        (got.created_at, got.updated_at),
        (want.created_at, want.updated_at)
    );
}

fn assert_lease_lost<T: std::fmt::Debug>(result: Result<T, StoreError>, item_id: i64, owner: &str) {
    match result {
        Err(StoreError::LeaseLost {
            item_id: lost_item,
            owner: lost_owner,
        }) => {
            assert_eq!(lost_item, item_id);
            assert_eq!(lost_owner, owner);
        }
        other => panic!("expected LeaseLost for item {item_id} and owner {owner}, got {other:?}"),
    }
}
