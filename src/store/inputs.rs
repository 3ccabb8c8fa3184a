//! The host's inputs: response heads, bodies and ends, failed requests, timeouts.

use super::*;

impl ChatStore {
    // ----- inputs --------------------------------------------------------------------------

    /// A response's status line and headers arrived.
    pub fn handle_response_head(&mut self, id: RequestId, head: ResponseHead, now_ms: u64) {
        let events_seen = self.session.turn.events_seen;
        let Some(p) = self.outbox.live(id, &self.session.id) else {
            return;
        };
        p.status = Some(head.status);
        p.events_before = events_seen;
        let kind = p.kind;
        if self.transport_head(id, kind, head.status, now_ms) {
            return;
        }
        if !kind.is_stream() {
            return;
        }
        if self.session.turn.probe == Some(id) {
            if !(self.session).on_probe_head(id, head.status, &self.opts, &mut self.outbox) {
                return; // nothing runs (its end changes nothing), or this client's turn runs
            }
            self.revisions.touch();
        }
        let ok = (200..300).contains(&head.status);
        if !ok || head.status == 204 {
            return; // the body (an error, or nothing) is read to the end first
        }
        let is_html = head.content_type.as_deref().is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/html")
        });
        if is_html {
            // A proxy's or a dev server's page instead of the stream: nothing in it is a chunk.
            self.outbox.abort(id);
            let e = ChatError::protocol("the server answered HTML instead of an event stream");
            self.end_turn(Ending::Failed(e), now_ms);
            return;
        }
        if let Some(turn) = head.turn_id {
            if self.session.turn.turn_id.is_none() {
                self.session.turn.turn_id = Some(turn);
                self.revisions.touch();
            }
        }
        self.session.turn.resume_tries = 0;
        self.session.turn.beats.opened();
    }

    /// Bytes of a response body arrived (any split: the SSE decoder reassembles events).
    pub fn handle_response_body(&mut self, id: RequestId, bytes: &[u8], now_ms: u64) {
        let limit = self.opts.limits.max_body_bytes;
        let max_messages = self.opts.limits.max_messages;
        let idle = self.opts.stream_idle_timeout_ms;
        let Some(p) = self.outbox.live(id, &self.session.id) else {
            return;
        };
        if p.kind.is_stream() || p.kind == RequestKind::NativeEvents {
            p.deadline = idle.map(|t| now_ms + t);
        } else if p.kind == RequestKind::NativeState {
            // A large state may take longer than the deadline, as long as it comes.
            p.deadline = Some(now_ms + super::outbox::NATIVE_READ_DEADLINE_MS);
        }
        let ok = p.status.is_some_and(|s| (200..300).contains(&s));
        #[cfg(feature = "pi")]
        if p.kind == RequestKind::NativeEvents && ok {
            return self.on_native_events(id, native::EventsPart::Bytes(bytes), now_ms);
        }
        if p.kind == RequestKind::MessagesGet && ok {
            // Converted message by message as it arrives: the body is never held whole.
            p.received += bytes.len();
            if p.received > limit {
                p.history = None;
                p.status = Some(0); // marks the answer unusable; reported at the end
            } else {
                p.history
                    .get_or_insert_with(|| Box::new(HistoryParser::new(max_messages)))
                    .push(bytes);
            }
            return;
        }
        let streaming = p.kind.is_stream() && ok;
        if !streaming {
            if p.body.len() + bytes.len() > limit {
                p.body.clear();
                p.status = Some(0); // marks the answer unusable; reported at the end
            } else if p.status != Some(0) {
                p.body.extend_from_slice(bytes);
            }
            return;
        }
        if p.body.len() < SNIFF_BYTES {
            let n = bytes.len().min(SNIFF_BYTES - p.body.len());
            p.body.extend_from_slice(&bytes[..n]);
        }
        if self.session.turn.phase.stream() != Some(id) {
            return;
        }
        // pi mode streams from the first byte; the AI SDK's status waits for the first chunk
        // that changes the message (`begin_streaming`).
        if let (Phase::Submitted { stream }, true) =
            (&self.session.turn.phase, self.session.pi_owns_history())
        {
            self.session.turn.phase = Phase::Streaming { stream: *stream };
            self.revisions.touch();
            // Follow-ups queued while the chat POST was on its way may go now.
            self.pump(now_ms);
        }
        let mut batch = std::mem::take(&mut self.scratch.sse);
        let comments = self.session.turn.decoder.comments_seen();
        self.session.turn.decoder.push_into(bytes, &mut batch);
        if self.session.turn.decoder.comments_seen() != comments {
            self.session.turn.beats.beat(now_ms);
        }
        let window = (self.session.turn.beats).window(
            self.session.runtime.heartbeat_ms,
            self.opts.heartbeat_grace_ms,
        );
        if let (Some(p), Some(_)) = (self.outbox.pending.get_mut(&id), window) {
            p.deadline = liveness::stream_deadline(idle, window, now_ms);
        }
        self.apply_events(&batch, now_ms);
        batch.clear();
        self.scratch.sse = batch;
    }

    /// The response ended normally.
    pub fn handle_response_end(&mut self, id: RequestId, now_ms: u64) {
        let Some(p) = self.settle(id, now_ms) else {
            return;
        };
        let status = p.status.unwrap_or(0);
        let ok = (200..300).contains(&status);
        match p.kind {
            // Only the pi-native transport (the `pi` feature) makes native requests: without
            // it their answers cannot come.
            #[cfg(feature = "pi")]
            k @ (RequestKind::NativeState
            | RequestKind::NativeEvents
            | RequestKind::NativePrompt
            | RequestKind::NativeStop
            | RequestKind::NativeCreate
            | RequestKind::NativeClear
            | RequestKind::NativeInterrupt) => {
                self.on_native_answer(id, k, Ok((status, &p.body)), now_ms)
            }
            #[cfg(not(feature = "pi"))]
            RequestKind::NativeState
            | RequestKind::NativeEvents
            | RequestKind::NativePrompt
            | RequestKind::NativeStop
            | RequestKind::NativeCreate
            | RequestKind::NativeClear
            | RequestKind::NativeInterrupt => {}
            RequestKind::Capabilities => self.on_capabilities(ok.then_some(&p.body[..]), now_ms),
            RequestKind::Catalog => {
                if self.session.on_catalog(status, &p.body, &mut self.outbox) {
                    self.revisions.tool_ui += 1;
                }
                self.revisions.touch();
            }
            RequestKind::MessagesGet => self.on_history(status, &p.body, p.history, now_ms),
            RequestKind::FollowUpPost => {
                let outcome = if ok {
                    match crate::protocol::json::from_slice(&p.body) {
                        Ok(v)
                            if v.get("deleted").and_then(Value::as_bool) == Some(true)
                                && v.get("queued").and_then(Value::as_bool) != Some(true) =>
                        {
                            PostOutcome::Deleted
                        }
                        Ok(v) => PostOutcome::Accepted {
                            duplicate: v.get("duplicate").and_then(Value::as_bool).unwrap_or(false),
                        },
                        // A 2xx is the server's yes, whatever its body says.
                        Err(_) => PostOutcome::Accepted { duplicate: false },
                    }
                } else {
                    PostOutcome::Failed(refusal(status, &p.body, "follow-up answer"))
                };
                self.on_followup_answer(p.ticket, outcome, now_ms);
            }
            RequestKind::FollowUpDelete | RequestKind::TurnDelete | RequestKind::MessagesPut => {
                // A take-back told the item started or is not queued is acted on (`settle`),
                // not a failure to show.
                let told = p.kind == RequestKind::FollowUpDelete
                    && DeleteAnswer::of(Some(status), &p.body).acted_on();
                if !ok && !told {
                    let e = ChatError::from_http(status, &p.body);
                    self.outbox.events.push_back(StoreEvent::Error { error: e });
                } else if p.kind == RequestKind::TurnDelete {
                    (self.session).after_stop(&self.opts, &mut self.outbox, now_ms);
                }
            }
            RequestKind::SessionsGet | RequestKind::SessionPatch | RequestKind::SessionDelete => {
                self.sessions_mut()
                    .on_answer(id, p.kind, Ok((status, &p.body)), now_ms)
            }
            RequestKind::ApprovalPost | RequestKind::ToolOutputPost => {
                let result = match ok {
                    true => Ok(()),
                    false => Err(refusal(status, &p.body, "answer")),
                };
                {
                    let (retry, rng) = (&self.opts.retry, self.rng.as_mut());
                    if (self.session).on_answer(id, result, now_ms, retry, rng, &mut self.outbox) {
                        self.revisions.touch();
                    }
                }
            }
            RequestKind::Chat | RequestKind::StreamResume => {
                let no_event = self.session.turn.events_seen == p.events_before;
                self.on_stream_end(id, p.kind, status, &p.body, no_event, now_ms)
            }
        }
        self.pump(now_ms);
    }

    /// The request failed without an answer (network error, CORS, DNS…), or the body broke
    /// off. An abort the store asked for is not reported here (its record is gone already).
    pub fn handle_request_failed(&mut self, id: RequestId, message: &str, now_ms: u64) {
        let Some(p) = self.settle(id, now_ms) else {
            return;
        };
        let error = ChatError::network(message);
        match p.kind {
            #[cfg(feature = "pi")]
            k @ (RequestKind::NativeState
            | RequestKind::NativeEvents
            | RequestKind::NativePrompt
            | RequestKind::NativeStop
            | RequestKind::NativeCreate
            | RequestKind::NativeClear
            | RequestKind::NativeInterrupt) => self.on_native_answer(id, k, Err(message), now_ms),
            #[cfg(not(feature = "pi"))]
            RequestKind::NativeState
            | RequestKind::NativeEvents
            | RequestKind::NativePrompt
            | RequestKind::NativeStop
            | RequestKind::NativeCreate
            | RequestKind::NativeClear
            | RequestKind::NativeInterrupt => {}
            RequestKind::Capabilities => self.on_capabilities(None, now_ms),
            RequestKind::Catalog => {
                if self.session.on_catalog(0, &[], &mut self.outbox) {
                    self.revisions.tool_ui += 1;
                }
                self.revisions.touch();
            }
            RequestKind::MessagesGet => {
                self.session.history.hydrated = true;
                self.outbox.events.push_back(StoreEvent::Error { error });
                self.revisions.touch();
            }
            RequestKind::FollowUpPost => {
                self.on_followup_answer(p.ticket, PostOutcome::Failed(error), now_ms)
            }
            RequestKind::FollowUpDelete | RequestKind::TurnDelete | RequestKind::MessagesPut => {
                self.outbox.events.push_back(StoreEvent::Error { error });
            }
            RequestKind::SessionsGet | RequestKind::SessionPatch | RequestKind::SessionDelete => {
                self.sessions_mut()
                    .on_answer(id, p.kind, Err(error), now_ms)
            }
            RequestKind::ApprovalPost | RequestKind::ToolOutputPost => {
                let (retry, rng) = (&self.opts.retry, self.rng.as_mut());
                let answer = Err(error);
                if (self.session).on_answer(id, answer, now_ms, retry, rng, &mut self.outbox) {
                    self.revisions.touch();
                }
            }
            RequestKind::Chat | RequestKind::StreamResume => {
                if self.session.turn.phase.stream() != Some(id) {
                    return;
                }
                let streaming = p.status.is_some_and(|s| (200..300).contains(&s));
                if streaming || p.kind == RequestKind::StreamResume {
                    // The body broke off: resume from the last chunk received.
                    self.session.turn.decoder.finish();
                    let (turn, opts) = (&mut self.session.turn, &self.opts);
                    if let Err(e) = turn.schedule_resume(error, opts, now_ms, &mut self.outbox) {
                        self.end_turn(Ending::Failed(e), now_ms);
                    }
                } else {
                    self.end_turn(Ending::Failed(error), now_ms);
                }
            }
        }
        self.pump(now_ms);
    }

    /// Time passed: backoffs end, timeouts expire, resumes start.
    pub fn handle_timeout(&mut self, now_ms: u64) {
        let expired: Vec<RequestId> = self
            .outbox
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now_ms))
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            // Abort the fetch but keep the record for handle_request_failed to classify:
            // `abort()` would drop it, and the follow-up queue would then wait for an answer
            // to its request in flight forever.
            self.outbox.aborts.push_back(id);
            if let Some(p) = self.outbox.pending.get_mut(&id) {
                p.deadline = None;
            }
            let why = self.stall_of(id).unwrap_or_else(|| "timed out".into());
            self.handle_request_failed(id, &why, now_ms);
            self.outbox.pending.remove(&id);
        }
        // After `dispose()` only the requests still out time out (the deadlines
        // `poll_timeout` gives then): no retry, resume or queued post is sent.
        if self.outbox.disposed {
            return;
        }
        for (seq, nonce) in self.session.take_backs.due_keys(now_ms) {
            self.take_back(seq, &nonce, now_ms);
        }
        (self.session).send_due_answers(&self.opts, &mut self.outbox, now_ms);
        self.sessions_mut().on_watch(now_ms);
        #[cfg(feature = "pi")]
        self.pump_native(now_ms);
        #[cfg(feature = "pi")]
        self.on_prompt(native::PromptInput::Clock, now_ms);
        if self
            .session
            .turn
            .phase
            .resume_at()
            .is_some_and(|t| t <= now_ms)
        {
            let path = self
                .opts
                .stream_path(&self.session.id, &self.session.cursor());
            self.session.conversation.resumed();
            let stream = self.request(RequestKind::StreamResume, Method::Get, path, None, now_ms);
            self.session.turn.phase = Phase::Streaming { stream };
            // After a stall the resume must answer within the beat window too: a proxy in
            // front of a dead server may hold it without a head as long as the idle timeout.
            let window = self.session.turn.beats.stalled.then(|| {
                let beats = &self.session.turn.beats;
                beats.window(
                    self.session.runtime.heartbeat_ms,
                    self.opts.heartbeat_grace_ms,
                )
            });
            if let (Some(p), Some(w)) = (self.outbox.pending.get_mut(&stream), window.flatten()) {
                p.deadline = Some(p.deadline.map_or(now_ms + w, |d| d.min(now_ms + w)));
            }
        }
        self.pump(now_ms);
    }

    // ----- the pure helpers' entry: feeding chunks without IO -------------------------------

    /// Applies one already-parsed chunk to the current session as if it came from the turn's
    /// stream. Hosts with their own transport (and tests) use it.
    pub fn handle_chunk(&mut self, chunk: Chunk, now_ms: u64) {
        if self.outbox.disposed {
            return;
        }
        let before = self.session.conversation.history().revision();
        self.through_gate(|c, turn, rng, out| c.apply(chunk, turn, rng, out), now_ms);
        if self.session.conversation.history().revision() != before {
            self.revisions.touch();
            self.settle_held_answers(now_ms);
        }
        self.pump(now_ms);
    }
}
