//! The integration tests, in one binary: each module is one story, told through
//! real interfaces (the `usersim` binary, HTTP to the mock model, SQLite files,
//! Postgres when `USERSIM_TEST_POSTGRES` names it, headless Chromium, the local
//! model). One binary links once, instead of once per file.

mod common;

mod bad_inputs;
mod browser;
mod cli;
mod data_root;
mod episodes;
mod http1_transport;
mod judge_mock;
mod judging;
mod limits;
mod llm_client;
mod mock_faults;
mod nemo_gym;
mod progress;
mod real_model;
mod resume;
mod server_api;
mod stats_export;
mod store_story;
mod telemetry;
