use tracing_subscriber::EnvFilter;

// Off (`--no-default-features`) only to profile the heap with heaptrack,
// which sees the system allocator's calls.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("USERSIM_LOG").unwrap_or_else(|_| EnvFilter::new("error")),
        )
        .with_writer(std::io::stderr)
        .init();
    std::process::exit(usersim::cli::main().await);
}
