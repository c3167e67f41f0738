//! Progress bars on standard error: shown only on a terminal and without `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

fn visible(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// A byte-counting bar of `total` bytes, or a hidden one.
pub fn bytes(quiet: bool, total: u64, what: &str) -> ProgressBar {
    if !visible(quiet) {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
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
