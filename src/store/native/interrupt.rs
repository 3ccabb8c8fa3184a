//! "Run Now" of a follow-up over the pi-native transport: `POST …/interrupt` (reference
//! §3.14). The server aborts the running answer (`agent-end {aborted}`) and starts the FIRST
//! row of its queue as the next run, under the same `clientNonce` / `clientSeq` (the real
//! server may name none); the rest stay queued.
//!
//! The rules, and why:
//! - **Only the first row, only while a run is on.** The server takes no selector: any other
//!   row would not be the one that runs. Elsewhere Run Now is "after the current answer"
//!   (`RunNow::AfterCurrent`), which the server's order already gives.
//! - **The turn goes on.** The aborted end of the interrupted run does not end this client's
//!   turn (ended, its held follow-ups would be taken back and sent again: the one the server
//!   starts would run twice); the run that starts next is the turn's, and its end ends it.
//!   Should no run start (the receipt's cursor reached without one: the item ran or left
//!   first), the deferred end is applied then.
//! - **Once.** The `requestId` is the item's (`interrupt:<nonce>:<seq>`), the same on every
//!   try: a lost answer is asked for again and the server's ledger answers the first receipt
//!   without a second interrupt. The follow-up it starts is consumed by the user message the
//!   events bring, like any follow-up (by nonce, seq, or text).

use super::*;

/// How many times a lost answer of the interrupt is asked for again (same `requestId`).
const INTERRUPT_TRIES: u32 = 3;

/// An interrupt on its way, until the run it starts shows (or it is decided that none does).
#[derive(Debug)]
pub(in crate::store) struct Interrupt {
    /// The follow-up it runs now.
    pub(in crate::store) nonce: String,
    /// The command's id, the same on every try.
    request_id: String,
    /// The request in flight, if any.
    request: Option<RequestId>,
    /// Tries made.
    tries: u32,
    /// The receipt's cursor: the events up to it show what the interrupt did.
    receipt: Option<u64>,
    /// The interrupted run ended: the turn waits for the next run.
    pub(in crate::store) run_ended: bool,
}

impl ChatStore {
    /// Whether Run Now on `item` interrupts: pi-native, this client's turn streaming a run,
    /// no interrupt or clear of the whole queue open, the item the first row of the server's
    /// queue.
    pub(in crate::store) fn interruptible(&self, item: &FollowUpItem) -> bool {
        let s = &self.session;
        self.opts.native()
            && matches!(s.turn.phase, Phase::Streaming { .. })
            && s.native.link.gate().status() == RunStatus::Running
            && s.native.interrupt.is_none()
            && !s.native.clear_all_open()
            && item.held
            && s.queue.view().first().is_some_and(|f| f.id == item.id)
    }

    /// Run Now on the first row of the server's queue: `POST …/interrupt`.
    pub(in crate::store) fn interrupt_native(&mut self, item_id: &str, now_ms: u64) -> bool {
        let Some(item) = self.session.queue.get(item_id) else {
            return false;
        };
        if !self.interruptible(item) {
            return false;
        }
        let request_id = format!("interrupt:{}:{}", item.client_nonce, item.client_seq);
        let nonce = item.client_nonce.clone();
        self.session.native.interrupt = Some(Interrupt {
            nonce,
            request_id,
            request: None,
            tries: 0,
            receipt: None,
            run_ended: false,
        });
        self.send_interrupt(now_ms);
        self.revisions.touch();
        true
    }

    fn send_interrupt(&mut self, now_ms: u64) {
        let base = self.session.native_base(self.opts.native_agent());
        let Some(i) = self.session.native.interrupt.as_mut() else {
            return;
        };
        i.tries += 1;
        let body = Some(to_string(&json!({ "requestId": i.request_id })));
        let path = format!("{base}/interrupt");
        let id = self.request(
            RequestKind::NativeInterrupt,
            Method::Post,
            path,
            body,
            now_ms,
        );
        if let Some(i) = self.session.native.interrupt.as_mut() {
            i.request = Some(id);
        }
    }

    /// The interrupt's answer: a receipt (its cursor), a refusal (said on the item, the
    /// deferred end applied), or none (asked again, under the same `requestId`).
    pub(in crate::store) fn on_interrupt_answer(
        &mut self,
        id: RequestId,
        answer: NativeAnswer<'_>,
        now_ms: u64,
    ) {
        let Some(i) = self.session.native.interrupt.as_mut() else {
            return; // the turn ended meanwhile (a stop): nothing waits for it
        };
        if i.request != Some(id) {
            return;
        }
        i.request = None;
        let error = match answer {
            Ok((status, body)) if (200..300).contains(&status) => {
                let cursor = crate::protocol::json::from_slice(body)
                    .ok()
                    .and_then(|v| v.get("cursor")?.as_u64());
                i.receipt = Some(cursor.unwrap_or(0));
                return self.decide_interrupt(now_ms);
            }
            Ok((status, body)) => refusal(status, body, "interrupt answer"),
            Err(message) => ChatError::network(message),
        };
        if error.is_retryable() && i.tries < INTERRUPT_TRIES {
            return self.send_interrupt(now_ms);
        }
        let i = self.session.native.interrupt.take().expect("checked above");
        let mut shown = error.clone();
        shown.message = format!("could not run it now: {}", error.message);
        let item_id = format!("fu-{}", i.nonce);
        self.session.queue.note_error(&item_id, Some(shown));
        self.outbox.events.push_back(StoreEvent::Error { error });
        self.revisions.touch();
        if i.run_ended {
            // No answer says the server started it: the run that ended is the turn's end
            // (what it held is taken back, as at any end).
            self.end_turn(Ending::Finished, now_ms);
        }
    }

    /// The interrupted run ended: while an interrupt is on its way, that is not the turn's
    /// end (the server starts the follow-up next). `true` when it was held back.
    pub(in crate::store) fn interrupted_run_ended(&mut self) -> bool {
        let streaming = matches!(self.session.turn.phase, Phase::Streaming { .. });
        match self.session.native.interrupt.as_mut() {
            Some(i) if streaming && !i.run_ended => {
                i.run_ended = true;
                true
            }
            _ => false,
        }
    }

    /// A run started: after the interrupted one ended, it is the one the interrupt started
    /// (the turn goes on with it).
    pub(in crate::store) fn interrupt_run_started(&mut self) {
        if (self.session.native.interrupt.as_ref()).is_some_and(|i| i.run_ended) {
            self.session.native.interrupt = None;
            self.revisions.touch();
        }
    }

    /// The receipt is in and the events reached its cursor without a new run: the server
    /// started nothing (the item ran or left first, or no run was on). The deferred end, if
    /// any, is applied.
    pub(in crate::store) fn decide_interrupt(&mut self, now_ms: u64) {
        let seq = self.session.native.link.gate().seq();
        let Some(i) = self.session.native.interrupt.as_ref() else {
            return;
        };
        match i.receipt {
            Some(cursor) if seq >= cursor => {}
            _ => return,
        }
        let run_ended = i.run_ended;
        self.session.native.interrupt = None;
        self.revisions.touch();
        if run_ended {
            self.end_turn(Ending::Finished, now_ms);
        }
    }
}
