//! The library's progress events shown as users expect them: a live bar
//! on a terminal, plain lines in CI logs (where a redrawn bar would be
//! noise).

use indicatif::{ProgressBar, ProgressStyle};
use lockmatrix::observe::{Event, Observer};
use std::io::IsTerminal;
use std::sync::Mutex;

/// Shows events on stderr.
#[derive(Default)]
pub struct Terminal {
    phase: Mutex<Option<Phase>>,
}

/// The phase under way: its bar (on a terminal) and its active steps.
struct Phase {
    bar: Option<ProgressBar>,
    active: Vec<String>,
    /// The latest estimate of the time left, if any.
    left: Option<String>,
}

impl Phase {
    fn new(name: &str, steps: usize) -> Phase {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(steps as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>6} [{bar:30}] {pos}/{len} {elapsed:>4} {wide_msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(name.to_string());
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            bar
        });
        Phase {
            bar,
            active: Vec::new(),
            left: None,
        }
    }

    fn show_active(&self) {
        if let Some(bar) = &self.bar {
            let left = self
                .left
                .as_deref()
                .map_or(String::new(), |l| format!("{l}; "));
            bar.set_message(lockmatrix::escape::terminal(&format!(
                "{left}{}",
                self.active.join(", ")
            )));
        }
    }
}

impl Observer for Terminal {
    fn event(&self, event: Event<'_>) {
        let mut phase = self.phase.lock().unwrap();
        match event {
            Event::RunStarted {
                run_id,
                targets,
                suites,
                dir,
            } => errln!(
                "lockmatrix run {run_id}: {targets} targets x {suites} suites -> {}",
                dir.display()
            ),
            Event::BuildingBase { rev, tree } => {
                errln!("building the base revision {rev} ({})", tree.display())
            }
            Event::Warning(what) => errln!("warning: {what}"),
            Event::Note(what) => errln!("{what}"),
            Event::Phase { name, steps } => *phase = Some(Phase::new(name, steps)),
            Event::StepStarted(step) => match phase.as_mut() {
                Some(p) if p.bar.is_some() => {
                    p.active.push(step.to_string());
                    p.show_active();
                }
                _ => errln!("  start  {step}"),
            },
            Event::StepDone { step, outcome } => match phase.as_mut() {
                Some(Phase { bar: Some(bar), .. }) => {
                    bar.println(lockmatrix::escape::terminal(&format!(
                        "  {step}: {outcome}"
                    )));
                    bar.inc(1);
                    let p = phase.as_mut().expect("a phase");
                    p.active.retain(|a| a != step);
                    p.show_active();
                }
                _ => errln!("  done   {step}: {outcome}"),
            },
            Event::TimeLeft { done, total, secs } => {
                let left = match secs {
                    Some(s) if s >= 90.0 => format!("about {:.0} min left", s / 60.0),
                    Some(s) => format!("about {:.0} s left", s.max(1.0)),
                    None => "time left not known yet".into(),
                };
                match phase.as_mut() {
                    Some(p) if p.bar.is_some() => {
                        p.left = Some(left);
                        p.show_active();
                    }
                    _ => errln!("  progress {done}/{total} builds and emulated runs: {left}"),
                }
            }
            Event::PhaseDone => {
                if let Some(bar) = phase.take().and_then(|p| p.bar) {
                    bar.finish_and_clear();
                }
            }
        }
    }
}
