//! The integration tests of `store`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").

mod common;
mod checksums;
mod crash;
mod hostile;
mod labels;
mod mutation;
mod python_reader;
mod roundtrip;
mod vector;
