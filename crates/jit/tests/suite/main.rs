//! The integration tests of `jit`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod a64;
mod bounds;
mod coiter;
mod common;
mod ewise;
mod ewise_pool;
mod generate;
mod generated;
mod half;
mod reference;
mod spgemm;
mod spmm;
mod spmm_formats;
