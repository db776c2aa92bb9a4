//! The integration tests, in one binary: each module is one story, told through
//! real interfaces (the `sparring` binary, HTTP to the mock model, SQLite files,
//! Postgres when `SPARRING_TEST_POSTGRES` names it, headless Chromium, the local
//! model). One binary links once, instead of once per file.
//!
//! Test code may panic and print: a panic is how a test fails (the crate's
//! `unwrap_used`/`print_*` lints guard the library, not its tests' helpers).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
// The fence of clippy.toml is the library's: tests are the servers the
// transport talks to and the clients of the service, so they open connections.
#![allow(clippy::disallowed_types)]

mod architecture;
mod common;
mod postgres;

mod agent_frameworks;
mod agent_paths;
mod bad_inputs;
mod batch_judging;
mod before_rename;
mod black_box;
mod black_box_a2a;
mod black_box_http;
mod black_box_responses;
mod breaker;
mod browser;
mod capture_groups;
mod cli;
mod curate;
mod data_root;
mod docs_blocks;
mod dual_control;
mod episodes;
mod evaluations;
mod export_consumers;
mod first_user;
mod frameworks_hold_the_line;
mod frameworks_play_the_orders_desk;
mod hardening;
mod hostile_requests;
mod import_job;
mod import_readers;
mod import_real;
mod judge_mock;
mod judging;
mod leaderboard;
mod limits;
mod llm_client;
mod machine_traces;
mod mcp;
mod mcp_folders;
mod mine;
mod mine_privacy;
mod mock_faults;
mod nemo_gym;
mod nemo_gym_agent;
mod persona_tables;
mod probes;
mod progress;
mod real_model;
mod real_users;
mod realism;
mod responses_api;
mod resume;
mod rewards;
mod rollouts_api;
mod served;
mod server_api;
mod service_boundary;
mod sessions;
mod simulated_tools;
mod starter_project;
mod stats_export;
mod store_story;
mod strata;
mod synthesis_job;
mod synthesize;
mod synthesize_envs;
mod telemetry;
mod trainer_libraries;
mod transport;
mod ui_pages;
mod unsolved;
mod user_checks;
