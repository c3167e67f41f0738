//! The process's kernels: each description generated and mapped once, then shared.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::Kernel;
use crate::desc::Desc;
use crate::KernelError;

/// The kernel of `desc`, generated on first use and kept for the life of the process.
///
/// # Errors
/// As [`Kernel::compile`].
pub fn kernel(desc: &Desc) -> Result<Arc<Kernel>, KernelError> {
    static CACHE: OnceLock<Mutex<HashMap<Desc, Arc<Kernel>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.get(desc) {
        return Ok(Arc::clone(k));
    }
    let k = Arc::new(Kernel::compile(desc)?);
    map.insert(*desc, Arc::clone(&k));
    Ok(k)
}
