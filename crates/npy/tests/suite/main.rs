//! The integration tests of `npy`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod dense;
mod hostile;
mod mat5;
mod numpy_files;
mod peer;
mod safetensors_write;
mod scipy_npz;
