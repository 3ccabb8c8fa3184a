//! SPEC §13 in pi mode: the user's answers to tool calls the server holds open (an approval,
//! an ask-user question), posted exactly once as follow-ups are: every retry carries the same
//! ids (the server answers a repeat `already_answered`), a failure is visible on the waiting
//! call and answering again retries it, and a switch parks what is not answered yet with the
//! session. The part shows the answer at once; a refusal puts it back as it was.
//!
//! An answer may come before the ask: a tool UI renders its form from the call's input, which
//! is known before the server asks (pi), or while the input still streams (AI SDK mode). Such
//! an answer is held (`snapshot.pending.held`) and given exactly once when the call can take
//! it; if the call ends, or the turn does, first, it is let go with a `NotAsked` error.

use super::*;
use crate::protocol::{Json, Question, ToolPart, ToolState};

/// The session's answers to calls that wait for the user (SPEC §13): those on their way,
/// and why the last one of a call did not get through.
#[derive(Debug, Default)]
pub(super) struct Answers {
    /// On their way (or due again after a failure), one per tool call.
    pub(super) pending: Vec<Answer>,
    /// Why the last answer to a waiting call did not get through, by tool call.
    pub(super) errors: Vec<(String, ChatError)>,
    /// Answers given before the call could take them, in the order given (with those let go
    /// unsent since the turn began, which show their error).
    pub(super) held: Vec<HeldAnswer>,
    /// Counts the changes of `held` (the snapshot exports it again only then).
    pub(super) held_version: u64,
}

/// The user's answer to a tool call given before the call could take it
/// (`snapshot.pending.held`): before the server asked (pi), or while the call's input still
/// streams (AI SDK mode). It is given once the call can take it, and let go (`error`) when
/// the call ends, or the turn does, first.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldAnswer {
    /// The tool call answered.
    pub tool_call_id: String,
    /// The tool called.
    pub tool_name: String,
    /// The message the call is part of.
    pub message_id: String,
    /// The answer (an output).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The answer (an error result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_text: Option<String>,
    /// Why it was let go unsent (`NotAsked`); absent while it is held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ChatError>,
}

impl HeldAnswer {
    fn answer(&self) -> Result<Value, String> {
        match &self.error_text {
            Some(e) => Err(e.clone()),
            None => Ok(self.output.clone().unwrap_or(Value::Null)),
        }
    }
}

/// What a held answer's call says now.
enum HeldFate {
    /// It cannot take the answer yet: held on.
    Wait,
    /// It takes it now.
    Give,
    /// It never will: let go, with why.
    Drop(&'static str),
}

/// One answer on its way to the server.
#[derive(Debug, Clone)]
pub(super) struct Answer {
    /// The tool call answered.
    pub(super) tool_call_id: String,
    /// `ApprovalPost` or `ToolOutputPost`.
    pub(super) kind: RequestKind,
    /// The request's body: the same on every retry.
    pub(super) body: String,
    pub(super) attempts: u32,
    pub(super) in_flight: Option<RequestId>,
    /// When the next retry goes (after a retryable failure).
    pub(super) due_at: Option<u64>,
    /// The part before the answer and as answered: a refusal puts the first back while the
    /// part is still the second (the stream has not moved it on).
    pub(super) before: ToolPart,
    pub(super) after: ToolPart,
}

/// A call waiting for the user (`snapshot.pending`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// The approval's id (approvals only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// The tool call that waits.
    pub tool_call_id: String,
    /// The tool called.
    pub tool_name: String,
    /// The call's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Json>,
    /// The message the call is part of.
    pub message_id: String,
    /// The question (questions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The answers to choose from (questions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    /// Why the last answer to it did not get through; answering again retries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ChatError>,
}

/// Whether a tool part waits for the user: an approval asked (`Some(true)`), a question
/// asked (`Some(false)`).
fn waits(t: &ToolPart) -> Option<bool> {
    match t.state {
        ToolState::ApprovalRequested => Some(true),
        ToolState::InputAvailable if t.interrupt.is_some() => Some(false),
        _ => None,
    }
}

fn approval_id(t: &ToolPart) -> Option<&str> {
    t.approval.as_deref()?.id()
}

impl<'a> SessionView<'a> {
    /// The calls of messages `from..` that wait for the user (`snapshot.pending`), with the
    /// index of the message each is in.
    pub fn pending_from(&self, from: usize) -> Vec<(usize, PendingCall)> {
        let s = &self.store.session;
        let messages = s.conversation.history().messages();
        let mut out = Vec::new();
        for (i, m) in messages.iter().enumerate().skip(from) {
            for t in m.parts.iter().filter_map(Part::as_tool) {
                let Some(approval) = waits(t) else { continue };
                let interrupt = t.interrupt.as_deref();
                let error = (s.answers.errors.iter())
                    .find(|(id, _)| *id == t.tool_call_id)
                    .map(|(_, e)| e.clone());
                out.push((
                    i,
                    PendingCall {
                        approval_id: approval
                            .then(|| approval_id(t).map(str::to_string))
                            .flatten(),
                        tool_call_id: t.tool_call_id.clone(),
                        tool_name: t.tool_name.clone(),
                        input: t.input.clone(),
                        message_id: m.id.clone(),
                        question: interrupt.and_then(Question::question).map(str::to_string),
                        options: interrupt.and_then(Question::options).cloned(),
                        error,
                    },
                ));
            }
        }
        out
    }

    /// The answers held for calls that could not take them yet, and those let go unsent
    /// since the turn began (`snapshot.pending.held`).
    pub fn held_answers(&self) -> &'a [HeldAnswer] {
        &self.store.session.answers.held
    }

    /// Changes whenever [`held_answers`](Self::held_answers) does.
    pub fn held_answers_version(&self) -> u64 {
        self.store.session.answers.held_version
    }
}

impl ChatStore {
    /// Acts on what a user's answer did: a refusal is told, a queued answer posted.
    pub(super) fn after_answer(&mut self, answered: Answered, now_ms: u64) -> bool {
        match answered {
            Answered::Nothing => false,
            Answered::Held => {
                self.revisions.touch();
                true
            }
            Answered::Refused(error) => {
                self.outbox.events.push_back(StoreEvent::Error { error });
                self.revisions.touch();
                false
            }
            Answered::Queued(aborted) => {
                if let Some(r) = aborted {
                    self.outbox.abort(r);
                }
                self.revisions.touch();
                (self.session).send_due_answers(&self.opts, &mut self.outbox, now_ms);
                true
            }
        }
    }
}

/// What a user's answer to a waiting call did.
pub(super) enum Answered {
    /// Nothing: no such waiting call, or the part did not take it.
    Nothing,
    /// Refused at once, with this error on the waiting call.
    Refused(ChatError),
    /// Shown on the part and queued to be posted; the answer it replaced was on its way as
    /// this request.
    Queued(Option<RequestId>),
    /// Held until the call can take it (`snapshot.pending.held`).
    Held,
}

impl ChatStore {
    /// The held answers after the history moved: each one whose call can take it now is
    /// given (once: it leaves the held list as it goes), each one whose call never will is
    /// let go with a `NotAsked` error.
    pub(super) fn settle_held_answers(&mut self, now_ms: u64) {
        let answers = &self.session.answers;
        if answers.held.iter().all(|a| a.error.is_some()) {
            return;
        }
        let pi = self.session.pi_owns_history();
        let mut k = 0;
        while k < self.session.answers.held.len() {
            let a = &self.session.answers.held[k];
            if a.error.is_some() {
                k += 1;
                continue;
            }
            let id = a.tool_call_id.clone();
            let part = self.session.tool_part(|t| t.tool_call_id == id);
            match part
                .as_ref()
                .map_or(HeldFate::Drop("the call is gone"), |t| held_fate(t, pi))
            {
                HeldFate::Wait => k += 1,
                HeldFate::Give => {
                    let answers = &mut self.session.answers;
                    answers.held_version += 1;
                    let answer = answers.held.remove(k).answer();
                    if pi {
                        let answered = self.session.answer_question(&id, answer, now_ms);
                        self.after_answer(answered, now_ms);
                    } else if (self.session.conversation).add_tool_output(&id, &answer) {
                        self.revisions.touch();
                        self.send_automatically(now_ms);
                    }
                }
                HeldFate::Drop(why) => {
                    self.drop_held(k, why);
                    k += 1;
                }
            }
        }
    }

    /// The turn ends: what its calls could take was given; the rest is let go.
    pub(super) fn drop_held_answers(&mut self, now_ms: u64) {
        self.settle_held_answers(now_ms);
        for k in 0..self.session.answers.held.len() {
            if self.session.answers.held[k].error.is_none() {
                self.drop_held(k, "the turn ended before the server asked for it");
            }
        }
    }

    fn drop_held(&mut self, k: usize, why: &str) {
        let error = ChatError::new(
            ErrorKind::NotAsked,
            format!("the answer was not sent: {why}"),
        );
        let answers = &mut self.session.answers;
        answers.held_version += 1;
        answers.held[k].error = Some(error.clone());
        self.outbox.events.push_back(StoreEvent::Error { error });
        self.revisions.touch();
    }
}

/// Whether a held answer's call can take it: a pi call once the server asks (an approval
/// asked instead never takes an output), an AI SDK call once its input is whole; a call that
/// moved on any other way never will.
fn held_fate(t: &ToolPart, pi: bool) -> HeldFate {
    match (t.state, waits(t)) {
        (_, Some(false)) if pi => HeldFate::Give,
        (_, Some(true)) if pi => HeldFate::Drop("the call waits for an approval, not an answer"),
        (ToolState::InputAvailable, _) if !pi => HeldFate::Give,
        (ToolState::InputStreaming | ToolState::InputAvailable, _) => HeldFate::Wait,
        _ => HeldFate::Drop("the call ended before it was asked"),
    }
}

impl Session {
    /// Posts every answer due (all of them when a session opens again).
    pub(super) fn send_due_answers(&mut self, opts: &StoreOptions, out: &mut Outbox, now_ms: u64) {
        if out.disposed {
            return;
        }
        for k in 0..self.answers.pending.len() {
            let a = &self.answers.pending[k];
            if a.in_flight.is_some() || a.due_at.is_none_or(|t| t > now_ms) {
                continue;
            }
            let (kind, body) = (a.kind, a.body.clone());
            let route = match kind {
                RequestKind::ApprovalPost => opts.route(&self.id, |r| &r.approval),
                _ => opts.route(&self.id, |r| &r.tool_output),
            };
            let deadline = opts.deadline(kind, now_ms);
            let id = out.push(&self.id, kind, Method::Post, route, Some(body), deadline);
            let a = &mut self.answers.pending[k];
            a.in_flight = Some(id);
            a.due_at = None;
            a.attempts += 1;
        }
    }

    /// Holds the user's answer to a known call of the running turn that cannot take it yet
    /// (`snapshot.pending.held`): in pi mode one the server has not asked about (no ask, no
    /// approval, no outcome yet), in AI SDK mode one whose input still streams. An answer
    /// held for the same call before is replaced. `Nothing` for any other call.
    pub(super) fn hold_answer(
        &mut self,
        tool_call_id: &str,
        output: Result<Value, String>,
        pi: bool,
    ) -> Answered {
        let h = self.conversation.history();
        let found = h.messages().iter().rev().find_map(|m| {
            (m.parts.iter().filter_map(Part::as_tool))
                .find(|t| t.tool_call_id == tool_call_id)
                .map(|t| (m.id.clone(), t))
        });
        let Some((message_id, t)) = found else {
            return Answered::Nothing;
        };
        let early = match t.state {
            ToolState::InputStreaming => true,
            ToolState::InputAvailable => pi && t.interrupt.is_none() && t.approval.is_none(),
            _ => false,
        };
        if !early || !self.turn.phase.running() {
            return Answered::Nothing;
        }
        let tool_name = t.tool_name.clone();
        let (output, error_text) = match output {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(e)),
        };
        self.answers.held_version += 1;
        self.answers.held.retain(|a| a.tool_call_id != tool_call_id);
        self.answers.held.push(HeldAnswer {
            tool_call_id: tool_call_id.to_string(),
            tool_name,
            message_id,
            output,
            error_text,
            error: None,
        });
        Answered::Held
    }

    /// The open session's newest tool part that `pick` takes, copied.
    fn tool_part(&self, pick: impl Fn(&ToolPart) -> bool) -> Option<ToolPart> {
        let h = self.conversation.history();
        h.messages().iter().rev().find_map(|m| {
            (m.parts.iter().filter_map(Part::as_tool))
                .find(|t| pick(t))
                .cloned()
        })
    }

    /// The waiting tool part `pick` takes.
    fn waiting_part(&self, pick: impl Fn(&ToolPart) -> bool) -> Option<ToolPart> {
        self.tool_part(|t| waits(t).is_some() && pick(t))
    }

    /// pi mode's `addToolApprovalResponse`: the part answers at once, the answer is queued.
    pub(super) fn answer_approval(
        &mut self,
        approval: &str,
        approved: bool,
        reason: Option<String>,
        now_ms: u64,
    ) -> Answered {
        let Some(before) = self.waiting_part(|t| approval_id(t) == Some(approval)) else {
            return Answered::Nothing;
        };
        let c = &mut self.conversation;
        if !c.add_tool_approval_response(approval, approved, reason.as_deref()) {
            return Answered::Nothing;
        }
        let mut body = json!({ "approvalId": approval, "approved": approved });
        if let Some(r) = reason {
            body["reason"] = Value::String(r);
        }
        self.queue_answer(RequestKind::ApprovalPost, before, body, now_ms)
    }

    /// pi mode's `addToolOutput` for a call that waits for the user's answer (a question):
    /// the part answers at once, the answer is queued. One that waits for an approval is
    /// refused with a `Validation` error on its pending entry.
    pub(super) fn answer_question(
        &mut self,
        tool_call_id: &str,
        output: Result<Value, String>,
        now_ms: u64,
    ) -> Answered {
        let Some(before) = self.waiting_part(|t| t.tool_call_id == tool_call_id) else {
            // Not asked yet: held until it is.
            return self.hold_answer(tool_call_id, output, true);
        };
        if waits(&before) == Some(true) {
            // The server holds this call for an approval and would refuse an output; taken
            // here, it would show as answered (no approval to give) until that refusal. The
            // AI SDK writes any output into its own history, which the server does not keep
            // here: refused at once, the call left waiting for its approval.
            let error = ChatError::new(
                ErrorKind::Validation,
                "this tool call waits for an approval: answer it with \
                 addToolApprovalResponse, not addToolOutput",
            );
            self.answers.errors.retain(|(t, _)| t != tool_call_id);
            (self.answers.errors).push((tool_call_id.to_string(), error.clone()));
            return Answered::Refused(error);
        }
        if !self.conversation.add_tool_output(tool_call_id, &output) {
            return Answered::Nothing;
        }
        let body = match output {
            Ok(v) => json!({ "toolCallId": tool_call_id, "output": v }),
            Err(e) => json!({ "toolCallId": tool_call_id, "errorText": e }),
        };
        self.queue_answer(RequestKind::ToolOutputPost, before, body, now_ms)
    }

    fn queue_answer(
        &mut self,
        kind: RequestKind,
        before: ToolPart,
        body: Value,
        now_ms: u64,
    ) -> Answered {
        let id = before.tool_call_id.clone();
        let after = (self.tool_part(|t| t.tool_call_id == id)).unwrap_or_else(|| before.clone());
        self.answers.errors.retain(|(t, _)| *t != id);
        // Answered again: the one on its way (or failed) gives way; the same ids go again.
        let mut aborted = None;
        if let Some(k) = self
            .answers
            .pending
            .iter()
            .position(|a| a.tool_call_id == id)
        {
            aborted = self.answers.pending.remove(k).in_flight;
        }
        self.answers.pending.push(Answer {
            tool_call_id: id,
            kind,
            body: to_string(&body),
            attempts: 0,
            in_flight: None,
            due_at: Some(now_ms),
            before,
            after,
        });
        Answered::Queued(aborted)
    }

    /// An answer POST's outcome: taken (a 2xx, or `already_answered`), to retry (the network,
    /// a 5xx or 429, a timeout), or refused (put back, with the error on the waiting call).
    /// `true` when what a snapshot shows changed.
    pub(super) fn on_answer(
        &mut self,
        id: RequestId,
        result: Result<(), ChatError>,
        now_ms: u64,
        retry: &RetryPolicy,
        rng: &mut dyn RandomSource,
        out: &mut Outbox,
    ) -> bool {
        let answers = &mut self.answers;
        let Some(k) = (answers.pending.iter()).position(|a| a.in_flight == Some(id)) else {
            return false;
        };
        answers.pending[k].in_flight = None;
        let error = match result {
            Ok(()) => None,
            Err(e) if e.says("already_answered") => None,
            Err(e) => Some(e),
        };
        let Some(error) = error else {
            answers.pending.remove(k);
            return true;
        };
        let attempts = answers.pending[k].attempts;
        if error.is_retryable() && attempts < retry.max_attempts.max(1) {
            let wait = retry.backoff_ms(attempts, rng.unit());
            answers.pending[k].due_at = Some(now_ms + wait);
            return false;
        }
        let a = answers.pending.remove(k);
        // Put back as it was, unless the stream has moved the call on since.
        let current = self.tool_part(|t| t.tool_call_id == a.tool_call_id);
        if current.as_ref() == Some(&a.after) {
            (self.conversation).replace_tool_part(&a.tool_call_id, a.before);
        }
        self.answers.errors.push((a.tool_call_id, error.clone()));
        out.events.push_back(StoreEvent::Error { error });
        true
    }
}

impl Answers {
    /// The next retry of an answer.
    pub(super) fn due_at(&self) -> Option<u64> {
        (self.pending.iter())
            .filter(|a| a.in_flight.is_none())
            .filter_map(|a| a.due_at)
            .min()
    }

    /// A stop ends every wait on the server: answers still on their way are let go.
    pub(super) fn drop_all(&mut self, out: &mut Outbox) {
        for r in self.pending.drain(..).filter_map(|a| a.in_flight) {
            out.abort(r);
        }
        self.errors.clear();
    }
}
