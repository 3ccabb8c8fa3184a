//! What the store fuzz targets share: their trace and the watch on the store's timer.

/// `FUZZ_TRACE=1 cargo fuzz run <target> <crash file>` prints every step, to read a finding.
pub fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FUZZ_TRACE").is_some())
}

/// `eprintln!` while [`tracing`].
macro_rules! trace {
    ($($t:tt)*) => {
        if $crate::harness::tracing() {
            eprintln!($($t)*);
        }
    };
}

/// Watches the times the store's timer fires at: one that keeps firing at the same instant
/// without the store moving on is a livelock, not a schedule.
#[derive(Default)]
pub struct TimerWatch {
    same: u32,
    last: Option<u64>,
}

impl TimerWatch {
    /// The timer fired at `now` (asked for `t`).
    pub fn fired(&mut self, now: u64, t: u64) {
        if self.last == Some(now) {
            self.same += 1;
            assert!(
                self.same < 1000,
                "the timer keeps firing at {t} without progress"
            );
        } else {
            self.same = 0;
        }
        self.last = Some(now);
    }
}
