//! The integration tests of `input`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").

mod mat5;
mod seam;
