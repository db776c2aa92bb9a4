// Off (`--no-default-features`) only to profile the heap with heaptrack,
// which sees the system allocator's calls.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    sparring::cli::closed_stdout::end_quietly_when_stdout_closes();
    sparring::cli::logging::init_logging();
    std::process::exit(sparring::cli::main().await);
}
