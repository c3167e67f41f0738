//! The integration tests of `input`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod mat5;
mod seam;
