//! sparring: synthetic multi-turn dialogues between a policy model and an
//! LLM-simulated user, run against resource tools, verified and stored.
//!
//! Module dependency direction (a module never imports one above it):
//! `cli, server` → `agent, stepped, bench` → `jobs, report, evaluation, synth, mine` → `policy` → `sim, judge, export, import` → `env, verify, user_checks, llm, prompt, persona` → `store, config, diagnostics, interval, minhash, token_ids, rollout_group, error_chain, starter, jsonl, regular_file, url_path, egress`.

pub mod agent;
pub mod bench;
pub mod cli;
pub mod config;
pub mod diagnostics;
pub mod egress;
pub mod env;
pub mod error_chain;
pub mod evaluation;
pub mod export;
pub mod import;
pub mod interval;
pub mod jobs;
pub mod jsonl;
pub mod judge;
pub mod llm;
pub mod mine;
pub mod minhash;
pub mod mock_llm;
pub mod persona;
pub mod policy;
pub mod prompt;
pub mod regular_file;
pub mod report;
pub mod rollout_group;
pub mod server;
pub mod sim;
pub mod starter;
pub mod stepped;
pub mod store;
pub mod synth;
pub mod token_ids;
pub mod url_path;
pub mod user_checks;
pub mod verify;
