//! The integration tests of `sparse-convert`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").
//! Files that change process-wide state stay test binaries of their own beside
//! this folder (spare_helper.rs).

mod cgroup;
mod cli;
mod common;
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
mod out_of_core;
mod overwrite;
mod pipes;
mod relabel;
mod tables;
