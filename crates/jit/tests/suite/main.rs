//! The integration tests of `jit`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").

mod common;
mod a64;
mod bounds;
mod coiter;
mod ewise;
mod ewise_pool;
mod generate;
mod generated;
mod half;
mod reference;
mod spgemm;
mod spmm;
mod spmm_formats;
