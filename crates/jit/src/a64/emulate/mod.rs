/*!
The AArch64 test harness: NEON kernels run under user-mode emulation (`qemu-aarch64`), many
cases in one emulated process, through the same run-side code as on a native CPU.

A [`Batch`] takes SpMV cases (a kernel description, a validated tensor, x, y, alpha and
beta). For each it makes a kernel whose calls a recording executor (`record.rs`) receives
instead of a CPU, and runs [`Kernel::spmv`](crate::Kernel::spmv) on one thread: the run side
splits the work into its chunks, pads, prefills and allocates partials exactly as it does
natively, and each call's argument struct is recorded with the arrays it points into.
[`Batch::run`] lays every case's arrays out in one static AArch64 executable (`elf.rs`),
each array in its own segment followed by an unmapped guard page (inputs read-only), the
kernels and a start stub that makes every recorded call in order and writes the outputs
to standard output; it runs the executable under qemu (`qemu.rs`) with a time limit, then
runs `Kernel::spmv` again, whose calls now write the emulated outputs where the run side
expects them, so partials are added, and y finished, by the run side's own code.

One emulated run costs about 13 ms of start-up, so cases are packed: thousands of calls
per run. Nothing here is used by the library itself; it is public, and hidden, for the
integration tests (`crates/jit/tests/a64*.rs`).
*/

mod elf;
mod qemu;
mod record;

use std::any::Any;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sptk_tensor::{IndexVec, Tensor};

use crate::desc::{Desc, Op};
use crate::kernel::index_ptr;
use crate::reference::RealValue;
use crate::{generate, Generated, Kernel};
use elf::{Access, Image};
pub use qemu::qemu;
use record::{Recorder, Region, Target};

/// The most segments (arrays) in one emulated executable; more cases take more runs.
const MAX_SEGMENTS: usize = 4000;

/// The most bytes of arrays in one emulated executable.
const MAX_BYTES: usize = 256 << 20;

/// A case's place in a [`Batch`] and the type of its y.
pub struct Handle<T> {
    index: usize,
    _t: PhantomData<T>,
}

/// A case's second pass: the run side again, now handing back the emulated outputs; its
/// y, boxed.
type Finish<'a> = Box<dyn FnOnce(&Kernel) -> Result<Box<dyn Any>, String> + 'a>;

/// One case: its kernel, recorder, the arrays its calls read, and the second pass.
struct Case<'a> {
    kernel: Kernel,
    recorder: Arc<Recorder>,
    inputs: Vec<Vec<u8>>,
    finish: Finish<'a>,
}

/// SpMV cases to run under emulation together.
#[derive(Default)]
pub struct Batch<'a> {
    cases: Vec<Case<'a>>,
    generated: HashMap<Desc, Generated>,
}

/// The outputs of a [`Batch`] and what running it took.
pub struct Results {
    ys: Vec<Box<dyn Any>>,
    /// Emulated processes started.
    pub runs: usize,
    /// Kernel calls made under emulation.
    pub calls: usize,
    /// Time spent in the emulator (writing the executables included).
    pub emulated: Duration,
}

impl Results {
    /// The y of the case `h`, as the run side left it after the emulated calls.
    pub fn y<T: 'static>(&self, h: &Handle<T>) -> &[T] {
        self.ys
            .get(h.index)
            .and_then(|y| y.downcast_ref::<Vec<T>>())
            .map_or(&[], Vec::as_slice)
    }
}

/// The bytes of an index array as stored.
fn index_bytes(v: &IndexVec) -> &[u8] {
    // SAFETY: an IndexVec's storage holds `byte_len()` bytes from `index_ptr` on (its
    // elements, or the packed bytes of 2-bit arrays), alive as long as `v`.
    unsafe { std::slice::from_raw_parts(index_ptr(v), v.byte_len()) }
}

/// The bytes of f32 / f64 values.
fn value_bytes<T: RealValue>(v: &[T]) -> &[u8] {
    // SAFETY: T is f32 or f64 (RealValue is implemented for those only): plain bytes,
    // `size_of_val(v)` of them.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

impl<'a> Batch<'a> {
    /// An empty batch.
    pub fn new() -> Batch<'a> {
        Batch::default()
    }

    /// Cases added so far.
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// True if no case was added.
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// Adds the case `y = alpha op(A) x + beta y` with the kernel of `desc` (`y` is
    /// copied; [`Results::y`] gives the result). The run side runs its first pass now.
    ///
    /// # Errors
    /// No kernel is generated for `desc`, `desc` is no SpMV description, or the run side
    /// refuses the operands (sizes, description).
    pub fn spmv<T: RealValue + 'static>(
        &mut self,
        desc: &Desc,
        a: &'a Tensor,
        x: &'a [T],
        y: &[T],
        (alpha, beta): (T, T),
    ) -> Result<Handle<T>, String> {
        let err = |e: crate::KernelError| format!("{desc}: {e}");
        if !matches!(desc.op, Op::Spmv | Op::SpmvT) {
            return Err(format!("{desc}: the harness runs SpMV kernels only"));
        }
        if !self.generated.contains_key(desc) {
            self.generated.insert(*desc, generate(desc).map_err(err)?);
        }
        let generated = &self.generated[desc];
        let vals = T::slice(a.values()).ok_or_else(|| format!("{desc}: values not {}", T::NAME))?;
        let mut arrays: Vec<&[u8]> = Vec::new();
        for l in 0..a.levels().len() {
            arrays.extend(a.pos(l).map(index_bytes));
            arrays.extend(a.crd(l).map(index_bytes));
        }
        arrays.push(value_bytes(vals));
        arrays.push(value_bytes(x));
        let regions = arrays
            .iter()
            .map(|b| Region {
                addr: b.as_ptr() as usize,
                len: b.len(),
            })
            .collect();
        let dims = a.dim_sizes();
        let out = if desc.op == Op::SpmvT {
            dims[1]
        } else {
            dims[0]
        } as usize;
        let mut y1 = y.to_vec();
        let y_region = Region {
            addr: y1.as_ptr() as usize,
            len: value_bytes(&y1).len(),
        };
        let recorder = Arc::new(Recorder::new(
            regions,
            y_region,
            out * std::mem::size_of::<T>(),
        ));
        let kernel = Kernel::recorded(generated, recorder.clone());
        kernel.spmv(a, x, &mut y1, (alpha, beta), 1).map_err(err)?;
        // The second pass starts from the same y, in the same vector (its address is
        // the registered output).
        y1.copy_from_slice(y);
        let text = desc.to_string();
        let finish = move |k: &Kernel| -> Result<Box<dyn Any>, String> {
            k.spmv(a, x, &mut y1, (alpha, beta), 1)
                .map_err(|e| format!("{text}: {e}"))?;
            Ok(Box::new(y1))
        };
        self.cases.push(Case {
            kernel,
            recorder,
            inputs: arrays.iter().map(|b| b.to_vec()).collect(),
            finish: Box::new(finish),
        });
        Ok(Handle {
            index: self.cases.len() - 1,
            _t: PhantomData,
        })
    }

    /// Runs every case's calls under qemu (as few processes as the limits allow), then the
    /// run side's second pass; the results in [`Results`].
    ///
    /// # Errors
    /// There is no emulator ([`qemu`]), a call could not be recorded, or an emulated run
    /// failed: a fault (an access outside the arrays hits a guard page), the time limit,
    /// or a short output.
    pub fn run(self) -> Result<Results, String> {
        let qemu = qemu().ok_or("no qemu-aarch64 on PATH (Debian: apt-get install qemu-user)")?;
        let mut results = Results {
            ys: Vec::new(),
            runs: 0,
            calls: 0,
            emulated: Duration::ZERO,
        };
        let mut recorded = Vec::with_capacity(self.cases.len());
        for case in &self.cases {
            recorded.push(case.recorder.take()?);
        }
        // Groups of cases within the limits of one executable.
        let mut groups: Vec<Vec<usize>> = vec![Vec::new()];
        let (mut segments, mut bytes) = (0, 0);
        for (n, case) in self.cases.iter().enumerate() {
            let s = case.inputs.len() + recorded[n].1.len();
            let b: usize = case.inputs.iter().map(Vec::len).sum::<usize>()
                + recorded[n].1.iter().map(|o| o.init.len()).sum::<usize>();
            if segments + s > MAX_SEGMENTS || bytes + b > MAX_BYTES {
                groups.push(Vec::new());
                (segments, bytes) = (0, 0);
            }
            segments += s;
            bytes += b;
            if let Some(g) = groups.last_mut() {
                g.push(n);
            }
        }
        let mut emulated: Vec<Vec<Vec<u8>>> = vec![Vec::new(); self.cases.len()];
        for group in groups.iter().filter(|g| !g.is_empty()) {
            let start = Instant::now();
            let (elf, lens) = image(&self.cases, &recorded, group)?;
            let out = qemu::run(&qemu, &elf)?;
            results.emulated += start.elapsed();
            results.runs += 1;
            let total: usize = lens.iter().flatten().sum();
            if out.len() != total {
                return Err(format!(
                    "the emulated run wrote {} bytes, not {total}",
                    out.len()
                ));
            }
            let mut at = 0;
            for (&n, lens) in group.iter().zip(&lens) {
                for &len in lens {
                    emulated[n].push(out[at..at + len].to_vec());
                    at += len;
                }
            }
        }
        for ((case, (calls, _)), outputs) in self.cases.into_iter().zip(recorded).zip(emulated) {
            results.calls += calls.len();
            let mut writes = HashMap::new();
            for c in &calls {
                let key = (field(&c.args, at_begin()), field(&c.args, at_end()));
                if let Some((_, Target::Output(n, _))) = c
                    .targets
                    .iter()
                    .find(|(at, _)| *at == crate::x86::at::Y as usize)
                {
                    writes.insert(key, *n);
                }
            }
            case.recorder.replay(outputs, writes);
            let y = (case.finish)(&case.kernel)?;
            if let Some(e) = case.recorder.error() {
                return Err(e);
            }
            results.ys.push(y);
        }
        Ok(results)
    }
}

fn at_begin() -> usize {
    crate::x86::at::BEGIN as usize
}

fn at_end() -> usize {
    crate::x86::at::END as usize
}

fn field(args: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = args.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}

/// The executable of the cases `group`, and the length of each output of each case (the
/// order in which the stub writes them).
fn image(
    cases: &[Case<'_>],
    recorded: &[(Vec<record::Call>, Vec<record::Output>)],
    group: &[usize],
) -> Result<(Vec<u8>, Vec<Vec<usize>>), String> {
    let mut img = Image::new();
    // The code: the stub (its length does not depend on its addresses), then each
    // distinct kernel, 16-byte aligned.
    let stub_len = elf::stub((0, 0), (0, 0))?.len().next_multiple_of(16);
    let mut code = vec![0u8; stub_len];
    let mut kernel_at: HashMap<&[u8], usize> = HashMap::new();
    for &n in group {
        let k = cases[n].kernel.code();
        if !kernel_at.contains_key(k) {
            kernel_at.insert(k, code.len());
            code.extend_from_slice(k);
            code.resize(code.len().next_multiple_of(16), 0);
        }
    }
    let code_at = img.add(code.clone(), Access::Exec);
    let mut args = Vec::new();
    let mut call_table = Vec::new();
    let mut output_table = Vec::new();
    let mut lens = Vec::new();
    for &n in group {
        let inputs: Vec<u64> = cases[n]
            .inputs
            .iter()
            .map(|b| img.add(b.clone(), Access::Read))
            .collect();
        let (calls, outputs) = &recorded[n];
        let outs: Vec<u64> = outputs
            .iter()
            .map(|o| img.add(o.init.clone(), Access::ReadWrite))
            .collect();
        for (o, &at) in outputs.iter().zip(&outs) {
            output_table.push((at, o.init.len() as u64));
        }
        lens.push(outputs.iter().map(|o| o.init.len()).collect());
        let kernel = code_at + kernel_at[cases[n].kernel.code()] as u64;
        for c in calls {
            let mut a = c.args.clone();
            for &(at, t) in &c.targets {
                let p = match t {
                    Target::Null => 0,
                    Target::Input(i, off) => inputs[i] + off as u64,
                    Target::Output(i, off) => outs[i] + off as u64,
                };
                a[at..at + 8].copy_from_slice(&p.to_le_bytes());
            }
            call_table.push((args.len(), kernel));
            args.extend_from_slice(&a);
        }
    }
    let args_at = img.add(args, Access::Read);
    let calls: Vec<u8> = call_table
        .iter()
        .flat_map(|&(off, k)| [args_at + off as u64, k])
        .flat_map(u64::to_le_bytes)
        .collect();
    let n_calls = call_table.len();
    let calls_at = img.add(calls, Access::Read);
    let outs: Vec<u8> = output_table
        .iter()
        .flat_map(|&(a, l)| [a, l])
        .flat_map(u64::to_le_bytes)
        .collect();
    let outs_at = img.add(outs, Access::Read);
    let stub = elf::stub((calls_at, n_calls), (outs_at, output_table.len()))?;
    code.get_mut(..stub.len())
        .ok_or("the start stub outgrew its place")?
        .copy_from_slice(&stub);
    img.patch(0, code);
    Ok((img.write(code_at), lens))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynasmrt::aarch64::Aarch64Relocation;
    use dynasmrt::{dynasm, VecAssembler};

    /// Runs one call of a kernel that reads the byte at `offset` of a 100-byte input and
    /// writes it to a 1-byte output: the output, or the run's error.
    fn read_at(qemu: &std::path::Path, offset: u64) -> Result<Vec<u8>, String> {
        let mut a = VecAssembler::<Aarch64Relocation>::new(0);
        dynasm!(a
            ; .arch aarch64
            ; ldr x1, [x0]
            ; ldr x2, [x0, #8]
            ; ldrb w3, [x1, x2]
            ; ldr x4, [x0, #16]
            ; strb w3, [x4]
            ; ret
        );
        let kernel = a.finalize().map_err(|e| e.to_string())?;
        let stub_len = elf::stub((0, 0), (0, 0))?.len().next_multiple_of(16);
        let mut img = Image::new();
        let code_at = img.add(vec![0; stub_len + kernel.len()], Access::Exec);
        let input: Vec<u8> = (0..100).collect();
        let array = img.add(input, Access::Read);
        let out = img.add(vec![0xff], Access::ReadWrite);
        let bytes = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let args = img.add(bytes(&[array, offset, out]), Access::Read);
        let calls = img.add(bytes(&[args, code_at + stub_len as u64]), Access::Read);
        let outs = img.add(bytes(&[out, 1]), Access::Read);
        let mut code = elf::stub((calls, 1), (outs, 1))?;
        code.resize(stub_len, 0);
        code.extend_from_slice(&kernel);
        img.patch(0, code);
        qemu::run(qemu, &img.write(code_at))
    }

    /// The last byte of an array reads; the byte after it is a guard page and faults, as
    /// does the page after that one (the next segment starts past it).
    #[test]
    fn a_read_past_an_array_hits_its_guard_page() {
        let found = qemu();
        if !sptk_testkit::isa_available("neon-qemu", found.is_some(), "NEON guard pages") {
            return;
        }
        let qemu = found.expect("checked just above");
        assert_eq!(read_at(&qemu, 99), Ok(vec![99]));
        assert_eq!(read_at(&qemu, 0), Ok(vec![0]));
        let err = read_at(&qemu, 100).unwrap_err();
        assert!(err.contains("signal 11"), "{err}");
        for past in [101, 4095, 4096] {
            assert!(read_at(&qemu, past).is_err(), "{past}");
        }
        // (The bytes before an array share its page: only reads past the end fault.)
        assert_eq!(read_at(&qemu, u64::MAX), Ok(vec![0]));
    }
}
