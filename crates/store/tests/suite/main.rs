//! The integration tests of `store`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod appender;
mod checksums;
mod common;
mod crash;
mod hostile;
mod labels;
mod mutation;
mod python_reader;
mod roundtrip;
mod vector;
