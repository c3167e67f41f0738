//! The integration tests of `sparse-run`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod cli;
mod common;
mod ewise;
mod ewise_peers;
mod hdf5_tables;
mod inputs;
mod spgemm_peers;
mod structure;
mod value_types;
