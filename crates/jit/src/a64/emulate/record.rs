//! The recording executor: what a kernel of the harness does when the run-side code calls
//! it. In the first pass each call's argument struct is kept, its pointers resolved to the
//! arrays they point into (the tensor's arrays, x and y, registered before the run; any
//! other output pointer is a partial the run side made, as long as y) and the outputs'
//! contents at the call taken; nothing runs and the run side goes on as if the call had
//! been made. After the emulated run, the second pass makes the same calls (the chunks
//! depend on the data only, one thread), and each call writes the emulated outputs of
//! the first pass's call of the same range where the run side's own output is.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::code::Executor;
use crate::x86::at;

/// The pointer fields of an SpMV argument struct, by offset; `Y` is the output.
const POINTERS: [usize; 6] = [
    at::POS as usize,
    at::CRD as usize,
    at::VAL as usize,
    at::X as usize,
    at::Y as usize,
    at::OUTER as usize,
];

/// The field of the output, and of the range `begin..end` a call runs.
const Y: usize = at::Y as usize;
const BEGIN: usize = at::BEGIN as usize;
const END: usize = at::END as usize;

/// An array a call may point into: host address and bytes.
#[derive(Clone, Copy)]
pub(crate) struct Region {
    pub(crate) addr: usize,
    pub(crate) len: usize,
}

impl Region {
    /// True if `p` points into the region, or at its end.
    fn holds(&self, p: usize) -> bool {
        p >= self.addr && p <= self.addr + self.len
    }
}

/// Where a pointer of a recorded call points.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    /// Null (no outer coordinates).
    Null,
    /// Input `n` (the registered regions, in order), at a byte offset.
    Input(usize, usize),
    /// Output `n`, at a byte offset.
    Output(usize, usize),
}

/// One recorded call: its argument bytes and where each pointer field points.
pub(crate) struct Call {
    pub(crate) args: Vec<u8>,
    pub(crate) targets: [(usize, Target); 6],
}

/// An output array of a case: y itself, or a partial.
pub(crate) struct Output {
    /// The host address the first pass saw (a partial's is gone after it).
    host: usize,
    /// Its contents at its first call (the emulated run starts from them).
    pub(crate) init: Vec<u8>,
}

/// What the executor does with a call.
enum Pass {
    Record,
    /// The emulated outputs, and which output each range wrote.
    Replay(Vec<Vec<u8>>, HashMap<(u64, u64), usize>),
}

/// The recording executor of one case.
pub(crate) struct Recorder {
    inputs: Vec<Region>,
    y: Region,
    /// Bytes of a partial (y's length in the kernel's value type).
    partial_len: usize,
    state: Mutex<State>,
}

struct State {
    pass: Pass,
    calls: Vec<Call>,
    outputs: Vec<Output>,
    error: Option<String>,
}

fn field(args: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = args.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}

impl Recorder {
    /// A recorder for calls that read `inputs` and write `y` or partials of
    /// `partial_len` bytes.
    pub(crate) fn new(inputs: Vec<Region>, y: Region, partial_len: usize) -> Recorder {
        Recorder {
            inputs,
            y,
            partial_len,
            state: Mutex::new(State {
                pass: Pass::Record,
                calls: Vec::new(),
                outputs: Vec::new(),
                error: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The first pass's calls and outputs, or the first call that could not be recorded.
    pub(crate) fn take(&self) -> Result<(Vec<Call>, Vec<Output>), String> {
        let mut s = self.lock();
        if let Some(e) = s.error.take() {
            return Err(e);
        }
        Ok((std::mem::take(&mut s.calls), std::mem::take(&mut s.outputs)))
    }

    /// The first call the second pass could not match, if any.
    pub(crate) fn error(&self) -> Option<String> {
        self.lock().error.take()
    }

    /// Switches to the second pass: `emulated[n]` is output `n` after the run, and
    /// `writes` says which output each range `(begin, end)` wrote.
    pub(crate) fn replay(&self, emulated: Vec<Vec<u8>>, writes: HashMap<(u64, u64), usize>) {
        self.lock().pass = Pass::Replay(emulated, writes);
    }

    /// Records a call of the first pass.
    fn record(&self, s: &mut State, args: &[u8]) -> Result<(), String> {
        let mut targets = [(0, Target::Null); 6];
        for (t, &at) in targets.iter_mut().zip(&POINTERS) {
            let p = field(args, at) as usize;
            *t = (at, self.target(s, at, p)?);
        }
        s.calls.push(Call {
            args: args.to_vec(),
            targets,
        });
        Ok(())
    }

    /// Where the pointer `p` of the field at `at` points; a new output for y or a
    /// partial met for the first time, its contents taken now.
    fn target(&self, s: &mut State, at: usize, p: usize) -> Result<Target, String> {
        if p == 0 && at != Y {
            return Ok(Target::Null);
        }
        if at != Y {
            return self
                .inputs
                .iter()
                .position(|r| r.holds(p))
                .map(|n| Target::Input(n, p - self.inputs[n].addr))
                .ok_or_else(|| format!("argument field {at} points outside every input array"));
        }
        let (base, len) = if self.y.holds(p) {
            (self.y.addr, self.y.len)
        } else {
            (p, self.partial_len)
        };
        if let Some(n) = s.outputs.iter().position(|o| o.host == base) {
            return Ok(Target::Output(n, p - base));
        }
        // SAFETY: `base` is the run side's output of this call, alive while the call is
        // made: y (`len` bytes, registered from the case's own vector) or a partial, which
        // the run side of the walks emulated here (SpMV scatters and COO, kernel/spmv.rs)
        // makes as long as y (`partial_len` bytes), zeroed. No other thread writes it:
        // the harness runs one thread.
        let init = unsafe { std::slice::from_raw_parts(base as *const u8, len) }.to_vec();
        s.outputs.push(Output { host: base, init });
        Ok(Target::Output(s.outputs.len() - 1, p - base))
    }
}

impl Executor for Recorder {
    fn call(&self, args: &[u8]) {
        let mut s = self.lock();
        match &s.pass {
            Pass::Record => {
                if let Err(e) = self.record(&mut s, args) {
                    s.error.get_or_insert(e);
                }
            }
            Pass::Replay(emulated, writes) => {
                let key = (field(args, BEGIN), field(args, END));
                let Some(out) = writes.get(&key).and_then(|&n| emulated.get(n)) else {
                    s.error
                        .get_or_insert(format!("the second pass calls {key:?}, the first did not"));
                    return;
                };
                let p = field(args, Y) as usize;
                let (skip, len) = if self.y.holds(p) {
                    (p - self.y.addr, self.y.len - (p - self.y.addr))
                } else {
                    (0, self.partial_len)
                };
                let src = out.get(skip..).unwrap_or_default();
                // SAFETY: as in `target`: `p` is this call's output, y from `skip` on or a
                // partial of `partial_len` bytes, the same array the first pass's call of
                // this range wrote (the same chunks on the same data, one thread); at most
                // `len` bytes are written.
                unsafe {
                    std::ptr::copy_nonoverlapping(src.as_ptr(), p as *mut u8, len.min(src.len()))
                };
            }
        }
    }
}
