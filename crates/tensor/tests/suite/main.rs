//! The integration tests of `tensor`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod conformance;
mod hostile_sizes;
mod limits;
mod mlir_goldens;
mod plan;
mod properties;
mod validate;
