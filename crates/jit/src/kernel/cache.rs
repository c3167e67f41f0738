//! The process's kernels: each description generated and mapped once, then shared.

use std::sync::Arc;

use super::Kernel;
use crate::code::Cache;
use crate::desc::Desc;
use crate::KernelError;

/// The kernel of `desc`, generated on first use and kept for the life of the process.
///
/// # Errors
/// As [`Kernel::compile`].
pub fn kernel(desc: &Desc) -> Result<Arc<Kernel>, KernelError> {
    static CACHE: Cache<Desc, Kernel> = Cache::new();
    CACHE.get(desc, Kernel::compile)
}
