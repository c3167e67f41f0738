//! The integration tests of `sparse-convert`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").
//! Files that change process-wide state stay test binaries of their own beside
//! this folder (spare_helper.rs).

mod common;
mod cli;
mod compress;
mod damaged;
mod damaged_tables;
mod hdf5;
mod hostile;
mod inputs;
mod interrupt;
mod isolation;
mod mat5_safetensors;
mod messages;
mod numpy;
mod overwrite;
mod pipes;
mod relabel;
mod tables;
