//! Progress as users expect it: a live bar on a terminal, plain lines in
//! CI logs (where a redrawn bar would be noise).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

pub struct Progress {
    bar: Option<ProgressBar>,
    active: Mutex<Vec<String>>,
}

impl Progress {
    /// A phase of `total` steps, e.g. "build" over the selected targets.
    pub fn new(phase: &str, total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>6} [{bar:30}] {pos}/{len} {elapsed:>4} {wide_msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(phase.to_string());
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            bar
        });
        Progress {
            bar,
            active: Mutex::new(Vec::new()),
        }
    }

    fn show_active(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(self.active.lock().unwrap().join(", "));
        }
    }

    pub fn start(&self, item: &str) {
        self.active.lock().unwrap().push(item.to_string());
        match &self.bar {
            Some(_) => self.show_active(),
            None => eprintln!("  start  {item}"),
        }
    }

    /// Marks `item` done with a one-line outcome.
    pub fn finish(&self, item: &str, outcome: &str) {
        self.active.lock().unwrap().retain(|a| a != item);
        match &self.bar {
            Some(bar) => {
                bar.println(format!("  {item}: {outcome}"));
                bar.inc(1);
                self.show_active();
            }
            None => eprintln!("  done   {item}: {outcome}"),
        }
    }

    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
