//! `--plot FILE.png`: the runs on a roofline picture. The x axis is arithmetic intensity
//! (FLOP per byte moved, at least), the y axis GFLOP/s, both logarithmic. The memory roof
//! is the measured triad bandwidth times the intensity: a kernel on that line runs at the
//! speed of memory.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use plotters::prelude::*;

use crate::Run;

/// Fonts looked for when `SPTK_PLOT_FONT` names none (DejaVu and Liberation on Linux,
/// Arial on macOS and Windows).
const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers a TrueType font for the labels, once per process.
fn load_font() -> Result<()> {
    let path = match std::env::var_os("SPTK_PLOT_FONT") {
        Some(p) => PathBuf::from(p),
        None => match FONTS.iter().map(PathBuf::from).find(|p| p.is_file()) {
            Some(p) => p,
            None => bail!(
                "--plot needs a TrueType font for its labels and found none: install DejaVu \
                 (Debian: apt-get install fonts-dejavu-core) or set SPTK_PLOT_FONT to a .ttf file"
            ),
        },
    };
    let bytes =
        std::fs::read(&path).with_context(|| format!("cannot read the font {}", path.display()))?;
    // The font lives as long as the process: plotters keeps a reference to it.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| anyhow::anyhow!("{} is not a TrueType font", path.display()))?;
    Ok(())
}

/// Draws `runs` against the memory roof of `bandwidth` GB/s into the PNG file `path`,
/// written atomically.
pub fn roofline(path: &Path, runs: &[Run], bandwidth: f64) -> Result<()> {
    load_font()?;
    let (w, h) = (960u32, 640u32);
    let mut pixels = vec![255u8; (w * h * 3) as usize];
    let points: Vec<(f64, f64, String)> = runs
        .iter()
        .map(|r| {
            let t = r.median().as_secs_f64().max(1e-12);
            let ai = r.flops as f64 / r.bytes.max(1) as f64;
            let name = Path::new(&r.input)
                .file_name()
                .map_or(r.input.clone(), |n| n.to_string_lossy().into_owned());
            let pad = match r.padding.0 {
                0 => String::new(),
                _ => format!(", padding {}", crate::stats::padding(r.padding)),
            };
            (
                ai,
                r.flops as f64 / t / 1e9,
                format!("{name}: {}{pad}", r.desc),
            )
        })
        .collect();
    let ai_lo = points
        .iter()
        .map(|p| p.0)
        .fold(f64::INFINITY, f64::min)
        .max(1e-4)
        / 4.0;
    let ai_hi = points
        .iter()
        .map(|p| p.0)
        .fold(0.0, f64::max)
        .max(ai_lo * 16.0)
        * 4.0;
    let perf_lo = points
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .min(bandwidth * ai_lo)
        .max(1e-4)
        / 2.0;
    let perf_hi = points
        .iter()
        .map(|p| p.1)
        .fold(0.0, f64::max)
        .max(bandwidth * ai_hi)
        * 2.0;
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        let draw = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("cannot draw the roofline: {e:?}");
        root.fill(&WHITE).map_err(draw)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Roofline: memory bandwidth (triad) {bandwidth:.1} GB/s"),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d((ai_lo..ai_hi).log_scale(), (perf_lo..perf_hi).log_scale())
            .map_err(draw)?;
        chart
            .configure_mesh()
            .x_desc("arithmetic intensity (FLOP per byte moved)")
            .y_desc("GFLOP/s")
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|v| short(*v))
            .x_labels(8)
            .y_labels(8)
            .draw()
            .map_err(draw)?;
        let roof: Vec<(f64, f64)> = (0..=64)
            .map(|i| ai_lo * (ai_hi / ai_lo).powf(f64::from(i) / 64.0))
            .map(|ai| (ai, bandwidth * ai))
            .collect();
        chart
            .draw_series(LineSeries::new(roof, BLUE.stroke_width(2)))
            .map_err(draw)?
            .label(format!("memory roof, {bandwidth:.1} GB/s"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        let palette = [RED, GREEN, MAGENTA, CYAN, BLACK];
        for (i, (ai, perf, label)) in points.iter().enumerate() {
            let color = palette[i % palette.len()];
            chart
                .draw_series(std::iter::once(Circle::new(
                    (*ai, *perf),
                    6,
                    color.filled(),
                )))
                .map_err(draw)?
                .label(format!(
                    "{label}: {perf:.2} GFLOP/s, {:.0}% of the roof",
                    100.0 * perf / (bandwidth * ai)
                ))
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(("sans-serif", 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(draw)?;
        root.present().map_err(draw)?;
    }
    sptk_output::write_atomic(path, |file| -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(file);
        {
            let mut enc = png::Encoder::new(&mut out, w, h);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut writer = enc.write_header().map_err(std::io::Error::other)?;
            writer
                .write_image_data(&pixels)
                .map_err(std::io::Error::other)?;
            writer.finish().map_err(std::io::Error::other)?;
        }
        out.flush()
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// A number as an axis shows it: few digits, no float noise (0.3, not 0.30000000000000004).
fn short(v: f64) -> String {
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".into()
    } else {
        text.to_string()
    }
}
