//! SQLite store (being built).

#![allow(dead_code)]
