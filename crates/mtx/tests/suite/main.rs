//! The integration tests of `mtx`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod common;
mod direct;
mod hostile;
mod malformed;
mod testdata;
mod variants;
mod write;
