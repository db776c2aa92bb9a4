//! Built-in environments (one folder per domain).
