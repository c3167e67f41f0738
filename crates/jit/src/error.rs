//! Why a kernel cannot run.

use std::fmt;

/// A kernel refused its operands or cannot be made for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// The sparse operand's encoding has no kernel (yet); the message names it.
    Unsupported(String),
    /// An operand's value type is not the kernel's.
    ValueType {
        /// The operand (`A`, `x`, ...).
        operand: &'static str,
        /// The type the kernel works in.
        expected: &'static str,
        /// The operand's type.
        found: String,
    },
    /// An operand's shape does not fit the sparse operand's dimensions.
    Shape {
        /// The operand (`x`, `y`, `X`, `Y`).
        operand: &'static str,
        /// What fits, in words.
        expected: String,
        /// What was given.
        found: String,
    },
    /// The instruction set asked for is not on this CPU.
    Isa(String),
    /// A kernel description's text form does not parse.
    Description(String),
    /// Memory a kernel needs (the partials of a scatter) cannot be allocated on this
    /// machine; the message says how much.
    Alloc(String),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Unsupported(m) | KernelError::Isa(m) | KernelError::Alloc(m) => {
                f.write_str(m)
            }
            KernelError::ValueType {
                operand,
                expected,
                found,
            } => write!(
                f,
                "{operand} holds {found} values; this kernel works in {expected}"
            ),
            KernelError::Shape {
                operand,
                expected,
                found,
            } => write!(f, "{operand} has {found}; it must have {expected}"),
            KernelError::Description(m) => write!(f, "kernel description: {m}"),
        }
    }
}

impl std::error::Error for KernelError {}
