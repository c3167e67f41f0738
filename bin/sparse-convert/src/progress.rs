//! Progress bars on standard error: shown only on a terminal and without `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn visible(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

fn bytes_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{msg:>10} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

/// A byte-counting bar of `total` bytes, or a hidden one.
pub fn bytes(quiet: bool, total: u64, what: &str) -> ProgressBar {
    if !visible(quiet) {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(total);
    bar.set_style(bytes_style());
    bar.set_message(what.to_string());
    bar
}

/// The bar of an input of `total` bytes, and the callback its reader reports to. Until
/// the reader reports a position it is a spinner with the time taken: most readers
/// (Parquet, Arrow, HDF5, NumPy, `.spt`) read in steps that report nothing, and a bar
/// would stay at 0 B; Matrix Market and `.tns` readers report, and turn it into a bar of
/// bytes.
pub fn reading(quiet: bool, total: u64) -> (ProgressBar, sptk_tensor::Progress) {
    if !visible(quiet) {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let tick = bar.clone();
        return (bar, Arc::new(move |done| tick.set_position(done)));
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} {spinner} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message("reading");
    bar.enable_steady_tick(Duration::from_millis(120));
    let tick = bar.clone();
    let counted = AtomicBool::new(false);
    let report = move |done: u64| {
        if !counted.swap(true, Ordering::Relaxed) {
            tick.disable_steady_tick();
            tick.set_style(bytes_style());
        }
        tick.set_position(done);
    };
    (bar, Arc::new(report))
}

/// A bar counting `total` entries, or a hidden one.
pub fn count(quiet: bool, total: u64, what: &str) -> ProgressBar {
    if !visible(quiet) {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{bar:40}] {human_pos}/{human_len} entries ({per_sec}, {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A spinner for work of unknown length, or a hidden one.
pub fn spinner(quiet: bool, what: &str) -> ProgressBar {
    if !visible(quiet) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// Clears a bar.
pub fn finish(bar: ProgressBar) {
    bar.finish_and_clear();
}
