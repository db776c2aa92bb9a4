//! `sparring jobs | head -1`: once the reader has gone, the next `println!`
//! fails with a broken pipe, and Rust's `println!` panics on that. Unix tools
//! end quietly there (killed by SIGPIPE, which Rust ignores), and so does
//! sparring: exit status 141 (128 + SIGPIPE), as a shell reports for them,
//! with no panic message. Every other panic keeps the default report.

/// Install the hook. Called once, first thing in `main`.
pub fn end_quietly_when_stdout_closes() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
