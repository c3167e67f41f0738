//! The integration tests of `table`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").
//! Files that change process-wide state stay test binaries of their own beside
//! this folder (damaged.rs).

mod common;
mod batches;
mod peers;
mod relabel;
mod roundtrip;
mod testdata;
