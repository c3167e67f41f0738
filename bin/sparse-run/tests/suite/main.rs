//! The integration tests of `sparse-run`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").

mod common;
mod cli;
mod ewise;
mod ewise_peers;
mod hdf5_tables;
mod inputs;
mod spgemm_peers;
mod value_types;
