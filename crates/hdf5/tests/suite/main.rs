//! The integration tests of `hdf5`, one test binary: each file of this folder is
//! a module (`cargo test -p PACKAGE --test suite MODULE::` runs one). One binary
//! instead of one per file, each of which linked the whole dependency graph again
//! (README, "Testing").

mod malformed;
mod peers;
mod roundtrip;
mod testdata;
