//! The integration tests of `mtx`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").

mod common;
mod direct;
mod hostile;
mod malformed;
mod testdata;
mod variants;
mod write;
