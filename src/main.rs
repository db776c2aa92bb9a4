#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    usersim::cli::logging::init_logging();
    std::process::exit(usersim::cli::main().await);
}
