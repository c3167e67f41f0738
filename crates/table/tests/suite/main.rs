//! The integration tests of `table`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").
//! Files that change process-wide state stay test binaries of their own beside
//! this folder (damaged.rs).

mod batches;
mod common;
mod out_of_core;
mod peers;
mod relabel;
mod roundtrip;
mod testdata;
