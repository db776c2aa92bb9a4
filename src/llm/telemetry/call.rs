//! What one model call's HTTP attempts cost, told by the retry service to the
//! `Endpoint::complete` that started them: time waited for admission (so the
//! call's latency can leave it out) and how many retries were made. It works
//! because the HTTP service runs inside the caller's task (async-openai
//! drives it inline), so a task-local reaches it.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Default)]
struct Counters {
    admission_wait_nanos: AtomicU64,
    retries: AtomicU64,
}

tokio::task_local! {
    static CALL: Arc<Counters>;
}

/// One call's measure, once it is over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallMeasure {
    /// Time its attempts waited for the endpoint's limits and pauses.
    pub admission_wait: Duration,
    /// Attempts after the first.
    pub retries: u64,
}

pub fn note_admission_wait(waited: Duration) {
    let nanos = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
    // Outside `measure_call` there is nobody to tell.
    let _ = CALL.try_with(|c| c.admission_wait_nanos.fetch_add(nanos, Ordering::Relaxed));
}

pub fn note_retries(retries: u32) {
    let _ = CALL.try_with(|c| c.retries.store(u64::from(retries), Ordering::Relaxed));
}

/// Run `call` and measure its attempts.
pub async fn measure_call<F: Future>(call: F) -> (F::Output, CallMeasure) {
    let counters = Arc::new(Counters::default());
    let output = CALL.scope(counters.clone(), call).await;
    let measure = CallMeasure {
        admission_wait: Duration::from_nanos(counters.admission_wait_nanos.load(Ordering::Relaxed)),
        retries: counters.retries.load(Ordering::Relaxed),
    };
    (output, measure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_add_up_and_retries_are_the_last_count_told() {
        let ((), m) = measure_call(async {
            note_admission_wait(Duration::from_millis(3));
            note_retries(1);
            note_admission_wait(Duration::from_millis(4));
            note_retries(2);
        })
        .await;
        assert_eq!(
            m,
            CallMeasure {
                admission_wait: Duration::from_millis(7),
                retries: 2
            }
        );
        note_retries(9); // outside a call: ignored, no panic
    }
}
