//! The command line: one file per subcommand. Errors here are `anyhow`.
//! Exit codes, the same for every command: 0 done, 1 the work failed (or was
//! stopped by the circuit breaker), 2 invalid input (a bad config, flag or
//! file; clap's usage errors too), 3 not found (a job or conversation id that
//! is not in the database).
//!
//! With `main`, this is the one place where sparring prints; the library below
//! reports through return values and tracing.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod agent;
mod bench;
pub mod closed_stdout;
mod compare_users;
mod context;
mod conversations;
mod evaluate;
mod export;
mod export_said;
mod filters;
mod import;
mod init;
mod jobs;
mod judge;
mod leaderboard;
mod leaderboard_render;
pub mod logging;
mod mine;
mod mock_llm;
mod number_flags;
mod openenv;
mod personas;
mod progress;
mod recheck;
mod run;
mod serve;
mod show;
mod stats;
mod submit;
mod synthesize;
mod validate;
mod verify;
mod worker;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Exit code for invalid input (bad config, persona, scenario or template).
pub const EXIT_INVALID: i32 = 2;
/// Exit code for a job or conversation id that is not in the database.
pub const EXIT_NOT_FOUND: i32 = 3;

const DEFAULT_DATABASE: &str = "sqlite://sparring.db";

/// `sparring --version`: the version and what it was built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("SPARRING_BUILT_FROM"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "sparring",
    version = VERSION,
    about = "Synthetic multi-turn dialogues: a policy model, an LLM-simulated user, resource tools; verified and stored."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a starter project (the quickstart's job config, personas,
    /// scenarios and prompts) into DIR; `sparring run DIR/quickstart.toml`
    /// then runs it offline against the mock model.
    Init {
        /// The folder to write into: a new or empty one (created with its parents).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Write into a folder that is not empty, over any files of the
        /// starter's names; nothing else in it is touched.
        #[arg(long)]
        force: bool,
    },
    /// Run a generation job here (resumes it if the same job already exists).
    Run(JobArgs),
    /// Benchmark a job against the mock model server: throughput vs ideal, overhead, memory.
    Bench {
        /// Mock model latency per call (0 to 600,000 ms).
        #[arg(long, default_value_t = 200, value_parser = crate::cli::number_flags::parse_mock_latency_ms)]
        latency_ms: u64,
        /// Conversations in flight (1 to 10,000).
        #[arg(long, default_value_t = 100, value_parser = crate::cli::number_flags::parse_concurrency)]
        concurrency: usize,
        /// Conversations to run (1 to 1,000,000).
        #[arg(long, default_value_t = 1000, value_parser = crate::cli::number_flags::parse_bench_conversations)]
        conversations: u32,
        /// Store in this database instead of a fresh SQLite file.
        #[arg(long)]
        database: Option<String>,
        /// Talk HTTP/2 (h2c) to the mock: one connection for every call in flight.
        #[arg(long)]
        http2: bool,
        /// tokens_per_minute of the policy's endpoint; the bench then prints how
        /// much of it the run used, as the mock counted the tokens it reported.
        #[arg(long, value_parser = crate::cli::number_flags::parse_tokens_per_minute)]
        tpm: Option<u32>,
        /// requests_per_minute of the policy's endpoint, reported the same way.
        #[arg(long, value_parser = crate::cli::number_flags::parse_requests_per_minute)]
        rpm: Option<u32>,
        /// Instead of a run: what token capture costs a conversation in flight
        /// (--conversations transcripts held at once, as the engine records
        /// them, without and with each policy generation's token ids and log
        /// probabilities; no model, no store).
        #[arg(long, conflicts_with_all = ["database", "http2", "tpm", "rpm"])]
        capture_memory: bool,
        /// The policy is an agent (`[policy] kind = "responses_agent"`) that
        /// the mock serves on its Responses route after the same latency:
        /// sparring's overhead per agent turn instead of per model call.
        #[arg(long, conflicts_with_all = ["http2", "capture_memory"])]
        agent: bool,
    },
    /// Benchmark an OpenEnv server (`sparring openenv`, or one of OpenEnv's
    /// own): C WebSocket clients, each one session, each waiting --think-ms
    /// before every step; prints steps a second against the ideal C ÷ L,
    /// each step's round trip and, given --server-pid, the server's memory
    /// per open session.
    BenchOpenenv {
        /// HOST:PORT of the server.
        #[arg(long)]
        addr: String,
        /// Clients (sessions) at once, 1 to 10,000.
        #[arg(long, default_value_t = 256, value_parser = crate::cli::number_flags::parse_concurrency)]
        concurrency: usize,
        /// The wait before each step (the trainer's generation), 1 to 60,000 ms.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=60_000))]
        think_ms: u64,
        /// Seconds steps are counted, after every client's first reset; 1 to 3,600.
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3_600))]
        duration_secs: u64,
        /// Each step's action, as JSON.
        #[arg(
            long,
            default_value = r#"{"content": "Could you tell me a little more about that?"}"#
        )]
        action: String,
        /// `reset`'s data, as JSON (a seed is set per episode).
        #[arg(long, default_value = "{}")]
        reset: String,
        /// The server's process id, for its resident memory.
        #[arg(long)]
        server_pid: Option<u32>,
    },
    /// Judge a job's conversations (or two jobs' matched pairs) with the judges
    /// of a judges file, as a judging job: resumable, rate-limited, cached.
    Judge {
        /// The judges file: [[judges]] tables and, optionally, [endpoints]
        /// (otherwise the judged job's endpoints are used).
        judges: PathBuf,
        /// The generation job whose conversations are judged.
        #[arg(long, required_unless_present = "pairwise")]
        job: Option<i64>,
        /// Compare job --a with job --b on the same scenario, persona and
        /// sample (or as --match-by says), with the file's pairwise judges.
        #[arg(long, requires_all = ["a", "b"], conflicts_with = "job")]
        pairwise: bool,
        #[arg(long, value_name = "JOB_A")]
        a: Option<i64>,
        #[arg(long, value_name = "JOB_B")]
        b: Option<i64>,
        /// How --pairwise pairs A's conversations with B's: scenario (the
        /// same scenario, persona and sample), prompt (the same system prompt
        /// and first user message: two models' answers, imported), or
        /// metadata.KEY (the same value of a metadata key).
        #[arg(long, default_value = "scenario", requires = "pairwise", value_parser = crate::jobs::judging::MatchBy::from_user)]
        match_by: crate::jobs::judging::MatchBy,
        /// Judge only conversations with at least this reward (A's, pairwise).
        #[arg(long, value_parser = crate::cli::number_flags::parse_finite)]
        min_reward: Option<f64>,
        #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
        database: String,
        /// Judgments in flight at once (default: the judged job's concurrency; 1 to 10,000).
        #[arg(long, value_parser = crate::cli::number_flags::parse_concurrency)]
        concurrency: Option<usize>,
        /// Make the calls of failed and unparseable judgments again.
        #[arg(long)]
        retry_failed: bool,
        /// A new judging job even if the same one exists (calls are still cached).
        #[arg(long)]
        new_job: bool,
        #[arg(long)]
        quiet: bool,
    },
    /// Create a job and its items for workers, without running it here.
    Submit {
        config: PathBuf,
        /// Start a new job even if a job with this name or config exists.
        #[arg(long)]
        new_job: bool,
    },
    /// Work jobs stored in a database (many workers may share one job).
    Worker {
        #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
        database: String,
        /// Work only this job, and exit when it is finished.
        #[arg(long)]
        job: Option<i64>,
        /// Conversations in flight in this worker (default: the job's config; 1 to 10,000).
        #[arg(long, value_parser = crate::cli::number_flags::parse_concurrency)]
        concurrency: Option<usize>,
        #[arg(long)]
        quiet: bool,
    },
    /// Check a job config and every persona, scenario and template it uses.
    Validate { config: PathBuf },
    /// Persona tables: draw a panel (docs/populations.md).
    Personas {
        #[command(subcommand)]
        command: personas::PersonasCommand,
    },
    /// Propose scenarios from an environment's real records, validate them by
    /// executing their gold actions, and write the accepted ones as a
    /// scenarios JSONL that `run` reads (SYNTH.toml names the output). A
    /// stored job: the same config resumes it.
    #[command(
        mut_arg("config", |a| a.help("The synthesis config (TOML); or use --resume ID")),
        mut_arg("resume", |a| a.help("Finish a stored synthesis job by id, from the config stored with it")),
        mut_arg("concurrency", |a| a.help("Proposals in flight at once (default: the config's; 1 to 10,000)")),
        mut_arg("retry_failed", |a| a.help("Retry the job's failed proposals (generator calls that failed)")),
    )]
    Synthesize(JobArgs),
    /// Send recorded NeMo Gym rollouts to /verify again and report how many
    /// recorded rewards are reproduced (exit 1 if any differs or fails).
    Verify {
        /// A config with [environment] kind = "nemo_gym" (a job config, or
        /// that table alone); its [dataset] rows (format nemo_gym), if any,
        /// complete rollouts that lack their verifier's fields.
        #[arg(long)]
        environment: PathBuf,
        /// The rollouts JSONL, e.g. a resources server's data/example_rollouts.jsonl.
        #[arg(long)]
        rollouts: PathBuf,
    },
    /// List the jobs in a database: id, name, kind, status, created, items, mean reward.
    Jobs {
        #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
        database: String,
    },
    /// List a job's conversations (id, scenario, persona, termination, reward),
    /// with the export's filters; `sparring show ID` prints one.
    Conversations(conversations::ConversationsArgs),
    /// Print one stored conversation as a readable transcript.
    Show {
        conversation_id: i64,
        #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
        database: String,
    },
    /// Export a job's conversations as training JSONL (openai), or a pairwise
    /// judge's verdicts as DPO preference pairs (dpo).
    Export(export::ExportArgs),
    /// Import conversations sparring did not generate (OpenAI or HF messages,
    /// ShareGPT, NeMo Gym rollouts) as the items of an import job, to judge,
    /// check, curate and export them as generated ones.
    Import(import::ImportArgs),
    /// Statistics of a job: rewards, pass^k, and what its judges said.
    Stats(stats::StatsArgs),
    /// Check a job's stored conversations again with this version of the
    /// simulated-user checks, where an older version checked them.
    Recheck(recheck::RecheckArgs),
    /// Compare the simulated users of two jobs (two user prompts or models)
    /// on matched scenarios, personas and samples: flag rates, reward, pass^k.
    CompareUsers(compare_users::CompareUsersArgs),
    /// Jobs that ran the same items with different policies, in one table:
    /// mean reward and pass rate with intervals, pass^k, Bradley–Terry
    /// ratings, McNemar and a paired bootstrap against a baseline, user flag
    /// rates, tokens and the reward–tokens frontier (docs/leaderboard.md).
    Leaderboard(leaderboard::LeaderboardArgs),
    /// Run one job config once per policy of an evaluation file, each a job
    /// with the same items (resumable: a finished policy does no work, a new
    /// one runs alone), then print their leaderboard (docs/leaderboard.md).
    #[command(
        mut_arg("concurrency", |a| a.help("Conversations in flight at once in each policy's job (overrides the job config; 1 to 10,000)")),
        mut_arg("retry_failed", |a| a.help("Retry each policy's failed items")),
    )]
    Evaluate(evaluate::EvaluateArgs),
    /// Turn each conversation of an import job into a scenario and a persona
    /// with a model, private values replaced by fakes (docs/mining.md).
    Mine(mine::MineArgs),
    /// Serve the HTTP API, live progress, metrics and the web UI; runs jobs submitted to it.
    Serve {
        #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
        database: String,
        /// Address to listen on; a non-loopback one needs a token.
        #[arg(long, default_value = "127.0.0.1:8080")]
        bind: String,
        /// Bearer token every route but /healthz requires.
        #[arg(long, env = "SPARRING_API_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Every path in a submitted config must resolve inside this folder
        /// (after symlinks); `?base=` is relative to it. Default: the working directory.
        #[arg(long, value_name = "DIR", default_value = ".")]
        data_root: PathBuf,
        /// Operator endpoints ([endpoints.NAME] with base_url, model,
        /// api_key_env, limits): the only endpoints that get a key of this
        /// server; submitted configs name them with `operator = "NAME"`.
        #[arg(long, value_name = "FILE")]
        endpoints: Option<PathBuf>,
        /// Egress allowlist (repeatable): every URL a submitted config names
        /// (endpoints, MCP and NeMo Gym servers) must match one of these
        /// SCHEME://HOST[:PORT][/PATH] patterns (`*.NAME` for subdomains,
        /// `:*` for any port). Default: any URL. Operator endpoints are exempt.
        #[arg(long = "allow-url", value_name = "PATTERN")]
        allow_url: Vec<String>,
        /// Stepped sessions (`/v1/sessions`) open at once; 1 to 100000.
        #[arg(long, default_value_t = crate::stepped::registry::DEFAULT_MAX_SESSIONS as u64)]
        max_sessions: u64,
        /// Seconds without a request before a stepped session expires (its
        /// episode dropped unstored); 1 to 86400.
        #[arg(long, value_name = "SECS", default_value_t = crate::stepped::registry::DEFAULT_IDLE_SECS)]
        session_timeout: u64,
    },
    /// Serve one job config as a NeMo Gym agent server (POST /run,
    /// /v1/responses, /aggregate_metrics), every rollout stored as an item
    /// of the agent's job; prints its address when it listens.
    Agent {
        /// The job config: models, simulated user, environment, limits, and
        /// the dataset whose rows (or scenarios, by `scenario_id`) it plays.
        #[arg(long)]
        config: PathBuf,
        /// Address to listen on (port 0: a free one, printed).
        #[arg(long, default_value = "127.0.0.1:8090")]
        bind: String,
        /// The database (default: the config's `database`).
        #[arg(long, alias = "db")]
        database: Option<String>,
        /// Token every route but /health wants, as `Authorization: Bearer
        /// TOKEN` or as a Basic password (NeMo Gym: the agent's host in its
        /// config as USER:TOKEN@HOST). Needed on a non-loopback address.
        #[arg(long, env = "SPARRING_AGENT_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Serve a non-loopback address without a token, on purpose: anyone
        /// who reaches it can run rollouts of the job at its cost.
        #[arg(long)]
        no_auth: bool,
    },
    /// Serve one job config as an OpenEnv environment (HTTP /reset, /step,
    /// /state, /schema, /metadata, /health and the WebSocket /ws): the
    /// action is the policy's message, the observation the tool results, the
    /// simulated user's reply or the end with its reward; every episode is
    /// stored as a conversation of the config's job. Prints its address.
    Openenv {
        /// The job config: the simulated user, environment, limits and scenarios.
        #[arg(long)]
        config: PathBuf,
        /// Address to listen on (port 0: a free one, printed).
        #[arg(long, default_value = "127.0.0.1:8000")]
        bind: String,
        /// The database (default: the config's `database`).
        #[arg(long, alias = "db")]
        database: Option<String>,
        /// Sessions open at once (WebSocket connections and HTTP sessions),
        /// as OpenEnv's `max_concurrent_envs`; 1 to 100000.
        #[arg(long, default_value_t = crate::stepped::registry::DEFAULT_MAX_SESSIONS as u64)]
        max_concurrent_envs: u64,
        /// Seconds without a request before a session expires (its episode
        /// dropped unstored); 1 to 86400.
        #[arg(long, value_name = "SECS", default_value_t = crate::stepped::registry::DEFAULT_IDLE_SECS)]
        session_timeout: u64,
    },
    /// Serve the mock OpenAI-compatible model server (a test double).
    MockLlm {
        #[arg(long, default_value_t = 8089)]
        port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Scenarios JSONL the mock may be asked to play.
        #[arg(long)]
        scenarios: Option<PathBuf>,
        #[command(flatten)]
        flags: mock_llm::MockFlags,
    },
}

/// The arguments `run` and `synthesize` share: a config to run, or a stored
/// job to resume. `synthesize` words four helps for proposals (see its
/// `mut_arg`s); the flags and what they do are the same.
#[derive(clap::Args)]
struct JobArgs {
    /// The job config (TOML); or use --resume ID.
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    config: Option<PathBuf>,
    /// Finish a stored job by id, from the config stored with it.
    #[arg(long, value_name = "JOB_ID")]
    resume: Option<i64>,
    /// Database of the job to resume (a config names its own).
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
    /// Start a new job even if a job with this name or config exists.
    #[arg(long, conflicts_with = "resume")]
    new_job: bool,
    #[command(flatten)]
    work: WorkArgs,
}

/// How a command works its jobs' items: the flags `run`, `synthesize` and
/// `evaluate` share.
#[derive(clap::Args, Debug, Clone)]
struct WorkArgs {
    /// Conversations in flight at once (overrides the config; 1 to 10,000).
    #[arg(long, value_parser = crate::cli::number_flags::parse_concurrency)]
    concurrency: Option<usize>,
    /// Retry the job's failed items.
    #[arg(long)]
    retry_failed: bool,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
}

impl WorkArgs {
    /// The run's options: these flags and progress on stderr.
    fn options(&self) -> crate::jobs::RunOptions {
        crate::jobs::RunOptions {
            concurrency: self.concurrency,
            retry_failed: self.retry_failed,
            progress: Some(progress::CliProgress::new(self.quiet, "")),
            ..Default::default()
        }
    }
}

/// What a [`JobArgs`] config starts.
enum Start {
    /// A generation job (`sparring run`).
    Run,
    /// A synthesis job (`sparring synthesize`).
    Synthesize,
}

impl JobArgs {
    /// Start the config's job, or resume the stored one (of either kind).
    async fn start(self, start: Start) -> anyhow::Result<i32> {
        let options = crate::jobs::RunOptions {
            new_job: self.new_job,
            ..self.work.options()
        };
        match (self.config, self.resume, start) {
            (_, Some(id), _) => run::resume(&self.database, id, &options).await,
            (Some(config), None, Start::Run) => run::run(&config, &options).await,
            (Some(config), None, Start::Synthesize) => {
                synthesize::synthesize(&config, &options).await
            }
            (None, None, _) => Ok(EXIT_INVALID),
        }
    }
}

/// Parse the arguments, run the command, and return the process exit code.
pub async fn main() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Init { dir, force } => init::init(&dir, force),
        Command::Run(args) => args.start(Start::Run).await,
        Command::Bench {
            latency_ms,
            concurrency,
            conversations,
            database,
            http2,
            tpm,
            rpm,
            capture_memory,
            agent,
        } => {
            if capture_memory {
                bench::capture_memory(conversations)
            } else {
                let limits = bench::Limits { tpm, rpm, agent };
                bench::bench(
                    latency_ms,
                    concurrency,
                    conversations,
                    database,
                    http2,
                    limits,
                )
                .await
            }
        }
        Command::Judge {
            judges,
            job,
            pairwise,
            a,
            b,
            match_by,
            min_reward,
            database,
            concurrency,
            retry_failed,
            new_job,
            quiet,
        } => {
            judge::judge(judge::JudgeArgs {
                judges: &judges,
                job,
                pair: if pairwise { a.zip(b) } else { None },
                match_by,
                min_reward,
                database: &database,
                options: crate::jobs::RunOptions {
                    concurrency,
                    retry_failed,
                    new_job,
                    progress: Some(progress::CliProgress::new(quiet, "")),
                    ..Default::default()
                },
            })
            .await
        }
        Command::Submit { config, new_job } => submit::submit(&config, new_job).await,
        Command::Worker {
            database,
            job,
            concurrency,
            quiet,
        } => worker::worker(&database, job, concurrency, quiet).await,
        Command::Validate { config } => validate::validate(&config).await,
        Command::Personas { command } => personas::personas(command),
        Command::Synthesize(args) => args.start(Start::Synthesize).await,
        Command::Verify {
            environment,
            rollouts,
        } => verify::verify(&environment, &rollouts).await,
        Command::Show {
            conversation_id,
            database,
        } => show::show(&database, conversation_id).await,
        Command::Jobs { database } => jobs::jobs(&database).await,
        Command::Conversations(args) => conversations::conversations(args).await,
        Command::Export(args) => export::export(args).await,
        Command::Import(args) => import::import(args).await,
        Command::Stats(args) => stats::stats(args).await,
        Command::Recheck(args) => recheck::recheck(args).await,
        Command::CompareUsers(args) => compare_users::compare_users(args).await,
        Command::Leaderboard(args) => leaderboard::leaderboard_command(args).await,
        Command::Evaluate(args) => evaluate::evaluate(args).await,
        Command::Mine(args) => mine::mine(args).await,
        Command::Serve {
            database,
            bind,
            token,
            data_root,
            endpoints,
            allow_url,
            max_sessions,
            session_timeout,
        } => {
            let boundary = serve::ServeBoundary {
                data_root,
                endpoints,
                allow_url,
                max_sessions,
                session_timeout,
            };
            serve::serve(&database, &bind, token, boundary).await
        }
        Command::Agent {
            config,
            bind,
            database,
            token,
            no_auth,
        } => {
            let access = agent::Access { token, no_auth };
            agent::agent(&config, &bind, database.as_deref(), access).await
        }
        Command::BenchOpenenv {
            addr,
            concurrency,
            think_ms,
            duration_secs,
            action,
            reset,
            server_pid,
        } => {
            bench::openenv(bench::OpenEnvArgs {
                addr,
                concurrency,
                think_ms,
                duration_secs,
                action,
                reset,
                server_pid,
            })
            .await
        }
        Command::Openenv {
            config,
            bind,
            database,
            max_concurrent_envs,
            session_timeout,
        } => {
            openenv::openenv(openenv::OpenEnvArgs {
                config: &config,
                bind: &bind,
                database: database.as_deref(),
                max_concurrent_envs,
                session_timeout,
            })
            .await
        }
        Command::MockLlm {
            port,
            host,
            scenarios,
            flags,
        } => mock_llm::serve(&host, port, scenarios.as_deref(), &flags).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", crate::error_chain::error_chain(e.as_ref()));
            1
        }
    }
}

/// For commands that only read a database: the exit code when it does not
/// exist (said on stderr), so that nothing creates it.
fn refuse_missing_database(url: &str) -> Option<i32> {
    match crate::store::must_exist(url) {
        Ok(()) => None,
        Err(e @ crate::store::StoreError::Missing { .. }) => {
            eprintln!("error: {e}");
            Some(EXIT_INVALID)
        }
        // A malformed URL: opening it says what is wrong.
        Err(_) => None,
    }
}

/// Print problems one per line, then how many.
fn report_problems(problems: &[crate::config::Problem]) {
    for p in problems {
        eprintln!("{p}");
    }
    eprintln!(
        "{} problem{} found",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
}
