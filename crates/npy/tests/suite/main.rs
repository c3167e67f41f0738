//! The integration tests of `npy`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file: each linked the whole dependency graph again, and the
//! links were most of the test build's time (README, "Testing").

mod peer;
mod dense;
mod hostile;
mod mat5;
mod numpy_files;
mod safetensors_write;
mod scipy_npz;
