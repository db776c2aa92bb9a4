// Off (`--no-default-features`) only to profile the heap with heaptrack,
// which sees the system allocator's calls.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    usersim::cli::closed_stdout::end_quietly_when_stdout_closes();
    usersim::cli::logging::init_logging();
    std::process::exit(usersim::cli::main().await);
}
