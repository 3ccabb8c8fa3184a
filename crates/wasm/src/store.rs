//! The JS `ChatStore`: the core behind one `Rc<Shell>`, its requests performed by the JS
//! driver (driver.rs), one timer armed for `poll_timeout`, identity-stable frozen snapshots
//! (snapshot.rs), and notifications delivered after every Rust call has returned (so a
//! listener that reads the snapshot never re-enters a borrowed store). The `store` feature:
//! the package's replay module is built without it.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use js_sys::{Function, Uint8Array};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use agent_chat_store::shell_json::opt_string;
use agent_chat_store::RandomSource;
use agent_chat_store::{FileAttachment, SendOptions, UIMessage};
use agent_chat_store::{Output, StoreEvent, SubmitResult};

use super::options::HostOptions;
use super::snapshot::SnapshotCache;
use super::{arg_error, js, js_error, json_value, usage_error};
use super::{driver, options};

/// A string argument. Taken as a `JsValue`: wasm-bindgen's own `&str` conversion reads any
/// other type as a string's memory (a trap) or throws a plain `TypeError`.
pub(crate) fn string_arg(v: &JsValue, name: &str) -> Result<String, JsValue> {
    v.as_string()
        .map(|mut s| {
            // Held as every other text is (`protocol::json::MARKERS`).
            agent_chat_store::shell_json::mark_private_in(&mut s);
            s
        })
        .ok_or_else(|| arg_error(name, &format!("{name} must be a string")))
}

/// An optional string argument: `undefined` and `null` are none.
pub(crate) fn opt_string_arg(v: &JsValue, name: &str) -> Result<Option<String>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    string_arg(v, name).map(Some)
}

/// A property of an options bag, `undefined` when the bag has none or its getter throws.
pub(crate) fn prop(bag: &JsValue, key: &str) -> JsValue {
    if !bag.is_object() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(bag, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Where a session's last `clientSeq` is kept in `localStorage`.
fn seq_key(session: &str) -> String {
    format!("agent-chat-store:seq:{session}")
}

/// Randomness from `crypto.getRandomValues` (nonces, ids, jitter).
struct CryptoRandom;

impl RandomSource for CryptoRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        let arr = Uint8Array::new_with_length(buf.len() as u32);
        js::fill_random(&arr);
        arr.copy_to(buf);
    }
}

fn now() -> u64 {
    js::now_ms().max(0.0) as u64
}

/// An options-bag argument: `undefined` / `null` or an object (whose getters may throw: a
/// throwing one reads as absent).
fn bag_arg(v: &JsValue, name: &str) -> Result<(), JsValue> {
    if v.is_undefined() || v.is_null() || v.is_object() {
        return Ok(());
    }
    Err(arg_error(name, &format!("{name} must be an object")))
}

/// A `body` option: `undefined` / `null` (none) or a plain object of keys to merge.
pub(crate) fn body_arg(v: &JsValue, name: &str) -> Result<serde_json::Map<String, Value>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(serde_json::Map::new());
    }
    match json_value(v, name)? {
        Value::Object(m) => Ok(m),
        _ => Err(arg_error(name, &format!("{name} must be an object"))),
    }
}

/// The options bag of `send`, `regenerate` and `continueTurn`: `body`, `headers` (an object
/// or a `Headers`), `metadata` (request metadata, for `prepareSendMessagesRequest`), and for a
/// new user message `messageMetadata` and `id`, and `responseId` for the answer's message.
fn send_options(bag: &JsValue) -> Result<SendOptions, JsValue> {
    bag_arg(bag, "options")?;
    let metadata = |key: &str| -> Result<Option<Value>, JsValue> {
        let v = prop(bag, key);
        if v.is_undefined() {
            return Ok(None);
        }
        json_value(&v, key).map(Some)
    };
    Ok(SendOptions {
        body: body_arg(&prop(bag, "body"), "body")?,
        headers: header_pairs(&prop(bag, "headers"))?,
        metadata: metadata("metadata")?,
        message_metadata: metadata("messageMetadata")?,
        message_id: opt_string_arg(&prop(bag, "id"), "id")?,
        response_id: opt_string_arg(&prop(bag, "responseId"), "responseId")?,
    })
}

/// An answer's `options` (`{body, headers, metadata}`), for the continuation it may send.
fn answer_options(args: &JsValue) -> Result<Option<SendOptions>, JsValue> {
    let v = prop(args, "options");
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    send_options(&v).map(Some)
}

/// Headers given as a plain object or a `Headers`, as name–value pairs.
fn header_pairs(v: &JsValue) -> Result<Vec<(String, String)>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Vec::new());
    }
    let entries =
        js::header_entries(v).map_err(|_| arg_error("headers", "headers cannot be read"))?;
    let entries: js_sys::Array = entries.unchecked_into();
    Ok(entries
        .iter()
        .filter_map(|e| {
            let pair: js_sys::Array = e.dyn_into().ok()?;
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect())
}

/// Everything one JS `ChatStore` owns. Tasks (fetches, timers) hold it weakly or strongly
/// for their life; the core is borrowed only inside one Rust call, never across an await or
/// a call into JS.
pub(crate) struct Shell {
    pub(crate) core: RefCell<agent_chat_store::ChatStore>,
    pub(crate) host: HostOptions,
    pub(crate) controllers: RefCell<driver::Controllers>,
    listeners: RefCell<Vec<(u32, Function)>>,
    next_listener: Cell<u32>,
    snapshot: RefCell<SnapshotCache>,
    notified_revision: Cell<u64>,
    notify_pending: Cell<bool>,
    last_notify_ms: Cell<f64>,
    timer: RefCell<Option<(u64, JsValue)>>,
    timer_fn: RefCell<Option<Closure<dyn FnMut()>>>,
    /// A notification held back by `throttleMs`, cleared by `dispose`.
    notify_timer: RefCell<Option<JsValue>>,
    /// The status listeners were last told of: a turn's start and end are told at once.
    notified_status: Cell<Option<agent_chat_store::Status>>,
    /// With `throttleMs`: the snapshot listeners were last told of, which `getSnapshot` gives
    /// (a render in between shows no newer messages, as `useChat`'s throttle).
    published: RefCell<Option<JsValue>>,
    bound: RefCell<Option<(Function, Function)>>,
    draining: Cell<bool>,
    disposed: Cell<bool>,
    /// Whether the store performs what the core asks (first `subscribe` or action): until
    /// then its requests wait, in order, in the core's outbox and no timer is armed.
    started: Cell<bool>,
    /// The core's clock, stopped until the start: what the core asked at construction times
    /// out from the start, not from `new ChatStore()`. Before the start, when it was made;
    /// after, how far it is behind `Date.now()`.
    clock: Cell<u64>,
    /// The last `clientSeq` of the current session known to be in `localStorage`.
    stored_seq: Cell<u64>,
}

impl Shell {
    /// Runs `f` on the core (an action starts the store), then drains its outputs. The
    /// borrow ends before any JS runs.
    pub(crate) fn with_core<R>(
        self: &Rc<Self>,
        f: impl FnOnce(&mut agent_chat_store::ChatStore, u64) -> R,
    ) -> R {
        self.start();
        let r = {
            let mut core = self.core.borrow_mut();
            f(&mut core, self.now())
        };
        self.drive();
        r
    }

    /// The core's time: the wall clock less the time the store waited to start.
    fn now(&self) -> u64 {
        match self.started.get() {
            true => now().saturating_sub(self.clock.get()),
            false => self.clock.get(),
        }
    }

    /// Starts performing what the core asked (once; never for a store disposed unstarted).
    fn start(self: &Rc<Self>) {
        if self.started.get() || self.disposed.get() {
            return;
        }
        self.clock.set(now().saturating_sub(self.clock.get()));
        self.started.set(true);
        self.drive();
    }

    /// The drain rule: after every input, take every output until there are none.
    fn drive(self: &Rc<Self>) {
        if !self.started.get() {
            return; // the outputs wait in the core until the start
        }
        if self.draining.replace(true) {
            return; // a callback re-entered: the outer loop picks up what it added
        }
        let mut ask = None;
        loop {
            // Taken out before acting on them: a callback may call back into the store. A
            // request's AbortController exists once its fetch started, so requests go first.
            let outputs: Vec<Output> = {
                let mut core = self.core.borrow_mut();
                std::iter::from_fn(|| core.poll_output()).collect()
            };
            if outputs.is_empty() {
                break;
            }
            for out in outputs {
                match out {
                    Output::Abort(id) => {
                        if let Some(c) = self.controllers.borrow_mut().remove(id) {
                            c.abort();
                        }
                    }
                    Output::Request(req) => driver::spawn(self, req),
                    Output::Event(ev) => self.deliver(ev),
                    // Asked once the drain is over, about its result.
                    Output::AskAutoSend { token } => ask = Some(token),
                }
            }
        }
        self.draining.set(false);
        self.save_seq();
        self.arm_timer();
        self.schedule_notify();
        if let Some(token) = ask {
            self.ask_host_predicate(token);
        }
    }

    /// The current session's stored last `clientSeq` raises its queue's floor (SPEC §6: a
    /// clock behind what it was before a reload).
    fn load_seq(&self) {
        if !self.host.persist_seq {
            return;
        }
        let mut core = self.core.borrow_mut();
        let stored = js::stored_seq(&seq_key(core.session().id())).map_or(0, |v| v as u64);
        core.follow_ups_mut().raise_client_seq(stored);
        self.stored_seq.set(core.session().last_client_seq());
    }

    /// Keeps the current session's last `clientSeq` once it moved on.
    fn save_seq(&self) {
        if !self.host.persist_seq {
            return;
        }
        let core = self.core.borrow();
        let seq = core.session().last_client_seq();
        if seq > self.stored_seq.get() {
            js::store_seq(&seq_key(core.session().id()), seq as f64);
            self.stored_seq.set(seq);
        }
    }

    fn deliver(&self, ev: StoreEvent) {
        match ev {
            StoreEvent::Data { .. } => {
                if let Some(f) = &self.host.on_data {
                    // The chunk as the host would have seen it on the wire.
                    let v = js::parse(&agent_chat_store::shell_json::to_string(&ev));
                    js::call_safely(f, &v);
                }
            }
            StoreEvent::Error { error } => {
                if let Some(f) = &self.host.on_error {
                    js::call_safely(f, &js_error(&error));
                }
            }
            StoreEvent::SessionChange {
                session_id,
                renamed_from,
            } => {
                if let Some(f) = &self.host.on_session_change {
                    let id = JsValue::from_str(&session_id);
                    match renamed_from {
                        None => js::call_safely(f, &id),
                        Some(old) => {
                            let change = js::object_of("renamedFrom", &JsValue::from_str(&old));
                            js::call2_safely(f, &id, &change);
                        }
                    }
                }
            }
            StoreEvent::ToolCall { ref call } => {
                if let Some(f) = &self.host.on_tool_call {
                    let call = js::parse(&agent_chat_store::shell_json::to_string(call));
                    js::call_safely(f, &js::object_of("toolCall", &call));
                }
            }
            StoreEvent::Finish { ref message_id, .. } => {
                if let Some(f) = &self.host.on_finish {
                    let messages = js_sys::Reflect::get(&self.fresh_snapshot(), &"messages".into())
                        .unwrap_or(JsValue::UNDEFINED);
                    let event = js::parse(&agent_chat_store::shell_json::to_string(&ev));
                    js::call_safely(
                        f,
                        &js::finish_event(&event, &messages, message_id.as_deref()),
                    );
                }
                if let Some(f) = &self.host.on_event {
                    js::call_safely(f, &js::parse(&agent_chat_store::shell_json::to_string(&ev)));
                }
            }
            StoreEvent::Diagnostic { .. } => {
                if let Some(f) = &self.host.on_event {
                    js::call_safely(f, &js::parse(&agent_chat_store::shell_json::to_string(&ev)));
                }
            }
        }
    }

    /// Asks the host's own `sendAutomaticallyWhen` predicate (the core's question `token`)
    /// and tells the core its answer: at once, or when the promise it returned settles
    /// (`boolean | PromiseLike<boolean>`, as the `ai` package takes it: a thenable's
    /// truthiness is not the answer). Whether the answer still counts is the core's rule.
    fn ask_host_predicate(self: &Rc<Self>, token: u64) {
        let Some(f) = self.host.send_automatically_when.clone() else {
            return;
        };
        let snapshot = self.fresh_snapshot();
        let arg = js_sys::Object::new();
        let _ = js_sys::Reflect::set(
            &arg,
            &"messages".into(),
            &js_sys::Reflect::get(&snapshot, &"messages".into()).unwrap_or(JsValue::UNDEFINED),
        );
        let answer = f.call1(&JsValue::UNDEFINED, &arg).unwrap_or(JsValue::FALSE);
        let thenable = answer.is_object()
            && js_sys::Reflect::get(&answer, &"then".into()).is_ok_and(|t| t.is_function());
        if !thenable {
            let yes = answer.is_truthy();
            self.with_core(|c, now| c.handle_auto_send(token, yes, now));
            return;
        }
        let shell = Rc::downgrade(self);
        let answered = Closure::once_into_js(move |yes: bool| {
            if let Some(shell) = shell.upgrade() {
                shell.with_core(|c, now| c.handle_auto_send(token, yes, now));
            }
        });
        js::when_settled(&answer, answered.unchecked_ref());
    }

    fn arm_timer(self: &Rc<Self>) {
        let due = if self.disposed.get() {
            None
        } else {
            self.core.borrow().poll_timeout()
        };
        let mut timer = self.timer.borrow_mut();
        if timer.as_ref().map(|(at, _)| *at) == due {
            return;
        }
        if let Some((_, handle)) = timer.take() {
            js::clear_timeout(&handle);
        }
        let Some(at) = due else { return };
        let mut slot = self.timer_fn.borrow_mut();
        let f = slot.get_or_insert_with(|| {
            let weak: Weak<Shell> = Rc::downgrade(self);
            Closure::new(move || {
                if let Some(shell) = weak.upgrade() {
                    shell.timer.borrow_mut().take();
                    shell.with_core(|c, now| c.handle_timeout(now));
                }
            })
        });
        let delay = at.saturating_sub(self.now()) as f64;
        let handle = js::set_timeout(f.as_ref().unchecked_ref(), delay);
        *timer = Some((at, handle));
    }

    /// At most one notification per microtask (or per `throttleMs`, except for a turn's start
    /// and end), and only when the snapshot would differ.
    fn schedule_notify(self: &Rc<Self>) {
        let (revision, status) = {
            let core = self.core.borrow();
            (core.revision(), core.status())
        };
        if revision == self.notified_revision.get() {
            return;
        }
        let throttle = self.host.throttle_ms;
        // A turn's start and end are told at once, throttle or not (its last messages with
        // its end, as the `ai` package's throttle); what streams in between, the first words
        // included, at most once per `throttleMs`.
        use agent_chat_store::Status::{Streaming, Submitted};
        let urgent = match (self.notified_status.get(), status) {
            (None, _) | (Some(Submitted), Streaming) => false,
            (Some(told), now) => told != now,
        };
        if self.notify_pending.get() {
            let held = urgent.then(|| self.notify_timer.borrow_mut().take());
            let Some(Some(handle)) = held else { return };
            js::clear_timeout(&handle);
        }
        self.notify_pending.set(true);
        let weak = Rc::downgrade(self);
        let f = Closure::once_into_js(move || {
            if let Some(shell) = weak.upgrade() {
                shell.notify();
            }
        });
        let wait = throttle - (js::now_ms() - self.last_notify_ms.get());
        if throttle > 0.0 && wait > 0.0 && !urgent {
            *self.notify_timer.borrow_mut() = Some(js::set_timeout(f.unchecked_ref(), wait));
        } else {
            js::queue_microtask(f.unchecked_ref());
        }
    }

    fn notify(&self) {
        self.notify_pending.set(false);
        if let Some(handle) = self.notify_timer.borrow_mut().take() {
            js::clear_timeout(&handle); // a flush before the throttle's end
        }
        let rev = self.core.borrow().revision();
        if rev == self.notified_revision.get() {
            return;
        }
        self.notified_revision.set(rev);
        self.notified_status.set(Some(self.core.borrow().status()));
        self.last_notify_ms.set(js::now_ms());
        if self.host.throttle_ms > 0.0 {
            let fresh = self.fresh_snapshot();
            *self.published.borrow_mut() = Some(fresh);
        }
        let listeners: Vec<Function> = self
            .listeners
            .borrow()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        for f in listeners {
            js::call_safely(&f, &JsValue::UNDEFINED);
        }
    }

    fn get_snapshot(&self) -> JsValue {
        if self.host.throttle_ms > 0.0 {
            let mut published = self.published.borrow_mut();
            return published
                .get_or_insert_with(|| self.fresh_snapshot())
                .clone();
        }
        self.fresh_snapshot()
    }

    pub(crate) fn fresh_snapshot(&self) -> JsValue {
        let core = self.core.borrow();
        self.snapshot.borrow_mut().get(&core)
    }

    fn subscribe(self: &Rc<Self>, listener: Function) -> Function {
        let id = self.next_listener.get();
        self.next_listener.set(id + 1);
        self.listeners.borrow_mut().push((id, listener));
        self.start();
        let weak = Rc::downgrade(self);
        let unsubscribe = Closure::once_into_js(move || {
            if let Some(shell) = weak.upgrade() {
                shell.listeners.borrow_mut().retain(|(i, _)| *i != id);
            }
        });
        unsubscribe.unchecked_into()
    }

    fn dispose(self: &Rc<Self>) {
        if self.disposed.replace(true) {
            return;
        }
        // Never started: nothing left, nothing to abort, and its requests are never sent.
        if !self.started.get() {
            return;
        }
        self.with_core(|c, _| c.dispose());
        for (_, c) in self.controllers.borrow_mut().take_all() {
            c.abort();
        }
        self.clear_timers();
    }

    fn clear_timers(&self) {
        if let Some((_, handle)) = self.timer.borrow_mut().take() {
            js::clear_timeout(&handle);
        }
        if let Some(handle) = self.notify_timer.borrow_mut().take() {
            js::clear_timeout(&handle);
        }
    }
}

/// A store freed without `dispose()` (its JS object collected, or `free()` called) may still
/// have a timer armed, say a resume's backoff: its callback is `timer_fn`, dropped with the
/// shell, and a dropped closure called from JS throws ("closure invoked … after being
/// dropped") out of a `setTimeout`, uncaught. The notification's callback holds the shell
/// weakly and lives until called.
impl Drop for Shell {
    fn drop(&mut self) {
        self.clear_timers();
    }
}

/// The chat store for JS. `subscribe` and `getSnapshot` are bound functions (getters), so
/// `useSyncExternalStore(store.subscribe, store.getSnapshot)` works as written.
#[wasm_bindgen(js_name = ChatStore, skip_typescript)]
pub struct JsChatStore {
    pub(crate) shell: Rc<Shell>,
}

#[wasm_bindgen(js_class = ChatStore)]
impl JsChatStore {
    /// `new ChatStore(options)`; throws a `Validation` error for unusable options.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<JsChatStore, JsValue> {
        let (store_opts, host) = options::read(&options)?;
        let created = now();
        let core = agent_chat_store::ChatStore::new(store_opts, Box::new(CryptoRandom), created);
        let shell = Rc::new(Shell {
            core: RefCell::new(core),
            host,
            controllers: RefCell::default(),
            listeners: RefCell::new(Vec::new()),
            next_listener: Cell::new(0),
            snapshot: RefCell::new(SnapshotCache::default()),
            notified_revision: Cell::new(0),
            notify_pending: Cell::new(false),
            notified_status: Cell::new(None),
            published: RefCell::new(None),
            last_notify_ms: Cell::new(0.0),
            timer: RefCell::new(None),
            timer_fn: RefCell::new(None),
            notify_timer: RefCell::new(None),
            bound: RefCell::new(None),
            draining: Cell::new(false),
            disposed: Cell::new(false),
            started: Cell::new(false),
            clock: Cell::new(created),
            stored_seq: Cell::new(0),
        });
        shell.load_seq();
        Ok(JsChatStore { shell })
    }

    fn bound(&self) -> (Function, Function) {
        if let Some(b) = self.shell.bound.borrow().as_ref() {
            return b.clone();
        }
        // Weak, so the bound functions kept by React do not keep a disposed store alive.
        let weak = Rc::downgrade(&self.shell);
        let subscribe = Closure::<dyn FnMut(JsValue) -> Result<JsValue, JsValue>>::new(
            move |listener: JsValue| -> Result<JsValue, JsValue> {
                let f = (listener.dyn_into::<Function>())
                    .map_err(|_| arg_error("listener", "listener must be a function"))?;
                Ok(match weak.upgrade() {
                    Some(shell) => shell.subscribe(f).into(),
                    None => Closure::once_into_js(|| {}),
                })
            },
        )
        .into_js_value()
        .unchecked_into::<Function>();
        let weak = Rc::downgrade(&self.shell);
        let get = Closure::<dyn FnMut() -> JsValue>::new(move || -> JsValue {
            weak.upgrade()
                .map(|s| s.get_snapshot())
                .unwrap_or(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into::<Function>();
        let pair = (subscribe, get);
        *self.shell.bound.borrow_mut() = Some(pair.clone());
        pair
    }

    /// `subscribe(listener) → unsubscribe`.
    #[wasm_bindgen(getter)]
    pub fn subscribe(&self) -> Function {
        self.bound().0
    }

    /// `getSnapshot()`: the same frozen object until something changed.
    #[wasm_bindgen(getter, js_name = getSnapshot)]
    pub fn get_snapshot(&self) -> Function {
        self.bound().1
    }

    /// Tells the listeners now of what changed since they were last told, instead of on the
    /// next microtask (or at the end of `throttleMs`): the drop-in `useChat` shows a sent
    /// message in the very render its click caused, as `@ai-sdk/react` does.
    pub fn flush(&self) {
        if !self.shell.disposed.get() {
            self.shell.notify();
        }
    }

    /// Replaces the composer's draft text (the files stay).
    #[wasm_bindgen(js_name = setDraft)]
    pub fn set_draft(&self, text: JsValue) -> Result<(), JsValue> {
        let text = string_arg(&text, "text")?;
        self.shell
            .with_core(|c, _| c.composer_mut().set_draft(&text));
        Ok(())
    }

    /// Replaces the draft's files (`{mediaType, url, filename?}[]`); a bad entry throws and
    /// leaves them as they were.
    #[wasm_bindgen(js_name = setDraftFiles)]
    pub fn set_draft_files(&self, files: JsValue) -> Result<(), JsValue> {
        let files = read_files(&files)?;
        self.shell
            .with_core(|c, _| c.composer_mut().set_files(files));
        Ok(())
    }

    /// Sends the draft: `{kind: 'sent' | 'queued' | 'blocked', reason?}`.
    pub fn submit(&self) -> JsValue {
        let r = self.shell.with_core(|c, now| c.composer_mut().submit(now));
        submit_result(r)
    }

    /// Sends `text` (and files) without touching the draft. With `{messageId}` it edits that
    /// user message instead (AI SDK mode): it is replaced and what follows is dropped.
    pub fn send(
        &self,
        text: JsValue,
        files: JsValue,
        options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let text = string_arg(&text, "text")?;
        let files = read_files(&files)?;
        let message_id = opt_string_arg(&prop(&options, "messageId"), "messageId")?;
        let extra = send_options(&options)?;
        let r = match message_id {
            Some(id) => (self.shell)
                .with_core(|c, now| c.use_chat().edit_with(&id, &text, files, extra, now)),
            None => (self.shell).with_core(|c, now| c.send_with(&text, files, extra, now)),
        };
        Ok(submit_result(r))
    }

    /// `addToolOutput({toolCallId, output} | {toolCallId, errorText}, options?)`: the result of
    /// a tool the client runs; `options` (`{body, headers, metadata}`) go with the automatic
    /// continuation it may send. Returns false for an unknown tool call.
    #[wasm_bindgen(js_name = addToolOutput)]
    pub fn add_tool_output(&self, args: JsValue) -> Result<bool, JsValue> {
        let get = |k: &str| prop(&args, k);
        let id = get("toolCallId")
            .as_string()
            .ok_or_else(|| usage_error("addToolOutput needs a toolCallId"))?;
        let error = get("errorText").as_string();
        let result = match error {
            Some(e) => Err(e),
            None => Ok(json_value(&get("output"), "output")?),
        };
        let options = answer_options(&args)?;
        let ok = self.shell.with_core(|c, now| {
            if let Some(o) = options {
                c.use_chat().set_request_options(o);
            }
            c.use_chat().add_tool_output(&id, result, now)
        });
        Ok(ok)
    }

    /// `addToolApprovalResponse({id, approved, reason?})` (`approvalId` is accepted for `id`).
    #[wasm_bindgen(js_name = addToolApprovalResponse)]
    pub fn add_tool_approval_response(&self, args: JsValue) -> Result<bool, JsValue> {
        let get = |k: &str| prop(&args, k);
        let id = get("id")
            .as_string()
            .or_else(|| get("approvalId").as_string())
            .ok_or_else(|| usage_error("addToolApprovalResponse needs an approval id"))?;
        let approved = get("approved")
            .as_bool()
            .ok_or_else(|| usage_error("approved must be a boolean"))?;
        let reason = get("reason").as_string();
        let options = answer_options(&args)?;
        let ok = self.shell.with_core(|c, now| {
            if let Some(o) = options {
                c.use_chat().set_request_options(o);
            }
            c.use_chat()
                .add_tool_approval_response(&id, approved, reason, now)
        });
        Ok(ok)
    }

    /// Continues the conversation from the last assistant message (what `sendAutomaticallyWhen`
    /// does when its predicate holds). Returns false when nothing can be continued.
    #[wasm_bindgen(js_name = continueTurn)]
    pub fn continue_turn(&self, options: JsValue) -> Result<bool, JsValue> {
        if options.is_undefined() {
            return Ok(self
                .shell
                .with_core(|c, now| c.use_chat().continue_turn(now)));
        }
        let extra = send_options(&options)?;
        Ok(self
            .shell
            .with_core(|c, now| c.use_chat().continue_turn_with(extra, now)))
    }

    /// `useChat`'s `setMessages`: replaces the messages while no turn runs. Throws a
    /// `Validation` error (nothing changed) for a message it cannot read, or while busy.
    #[wasm_bindgen(js_name = setMessages)]
    pub fn set_messages(&self, messages: JsValue) -> Result<(), JsValue> {
        let Value::Array(list) = json_value(&messages, "messages")? else {
            return Err(arg_error("messages", "messages must be an array"));
        };
        let messages = (list.into_iter().enumerate())
            .map(|(i, m)| {
                UIMessage::from_json(m).map_err(|e| {
                    arg_error(
                        "messages",
                        &format!("messages[{i}] is not a UIMessage: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if self
            .shell
            .with_core(|c, _| c.use_chat().set_messages(messages))
        {
            return Ok(());
        }
        Err(usage_error(
            "setMessages: a turn is running (stop it first)",
        ))
    }

    /// Stops the running turn (SPEC §7): the stream is aborted and the server told.
    pub fn stop(&self) {
        self.shell.with_core(|c, now| c.turn_mut().stop(now));
    }

    /// `useChat`'s `resumeStream`: attaches to a turn the server runs (a 204: nothing runs).
    /// Returns false when a turn is already followed.
    #[wasm_bindgen(js_name = resumeStream)]
    pub fn resume_stream(&self) -> bool {
        self.shell
            .with_core(|c, now| c.turn_mut().resume_stream(now))
    }

    /// Retry after a failed turn, decided by the store per mode (`snapshot.canRetry`): the
    /// turn asked again where the client owns the history, else what the server still has
    /// (attach to its turn, pi-native's reconnect). False when nothing was done.
    pub fn retry(&self) -> bool {
        self.shell.with_core(|c, now| c.turn_mut().retry(now))
    }

    /// `useChat`'s `clearError`: status `error` becomes `ready`, `error` goes.
    #[wasm_bindgen(js_name = clearError)]
    pub fn clear_error(&self) {
        self.shell.with_core(|c, _| c.turn_mut().clear_error());
    }

    /// Makes another session current; this one's queue and history are parked.
    #[wasm_bindgen(js_name = switchSession)]
    pub fn switch_session(&self, session_id: JsValue) -> Result<(), JsValue> {
        let session_id = string_arg(&session_id, "sessionId")?;
        if session_id.is_empty() {
            return Err(arg_error("sessionId", "sessionId must not be empty"));
        }
        self.shell
            .with_core(|c, now| c.switch_session(&session_id, now));
        self.shell.load_seq();
        Ok(())
    }

    /// `loadSessions({archived?})`: the session list's first page again (SPEC §11). False when
    /// the server has no list.
    #[wasm_bindgen(js_name = loadSessions)]
    pub fn load_sessions(&self, options: JsValue) -> Result<bool, JsValue> {
        let archived = archived_arg(&options)?;
        Ok(self
            .shell
            .with_core(|c, now| c.sessions_mut().load(archived, now)))
    }

    /// `loadMoreSessions({archived?})`: the next page; false when there is none or a page is
    /// on its way.
    #[wasm_bindgen(js_name = loadMoreSessions)]
    pub fn load_more_sessions(&self, options: JsValue) -> Result<bool, JsValue> {
        let archived = archived_arg(&options)?;
        Ok(self
            .shell
            .with_core(|c, now| c.sessions_mut().load_more(archived, now)))
    }

    /// `newSession()`: switches to a fresh session and returns its id.
    #[wasm_bindgen(js_name = newSession)]
    pub fn new_session(&self) -> Option<String> {
        let id = self.shell.with_core(|c, now| c.sessions_mut().create(now));
        self.shell.load_seq();
        id
    }

    /// `renameSession(id, title)`: false for an unknown session or an empty title.
    #[wasm_bindgen(js_name = renameSession)]
    pub fn rename_session(&self, id: JsValue, title: JsValue) -> Result<bool, JsValue> {
        let id = string_arg(&id, "id")?;
        let title = string_arg(&title, "title")?;
        Ok(self
            .shell
            .with_core(|c, now| c.sessions_mut().rename(&id, &title, now)))
    }

    /// `archiveSession(id, archived = true)`: false for a session the server has not listed.
    #[wasm_bindgen(js_name = archiveSession)]
    pub fn archive_session(&self, id: JsValue, archived: JsValue) -> Result<bool, JsValue> {
        let id = string_arg(&id, "id")?;
        let archived = match archived.is_undefined() || archived.is_null() {
            true => true,
            false => archived
                .as_bool()
                .ok_or_else(|| arg_error("archived", "archived must be a boolean"))?,
        };
        Ok(self
            .shell
            .with_core(|c, now| c.sessions_mut().archive(&id, archived, now)))
    }

    /// `deleteSession(id)`: deleting the open session switches to a new one first.
    #[wasm_bindgen(js_name = deleteSession)]
    pub fn delete_session(&self, id: JsValue) -> Result<bool, JsValue> {
        let id = string_arg(&id, "id")?;
        let ok = self
            .shell
            .with_core(|c, now| c.sessions_mut().delete(&id, now));
        self.shell.load_seq();
        Ok(ok)
    }

    /// Removes a queued follow-up (a posted one is deleted on the server); false if unknown.
    #[wasm_bindgen(js_name = removeQueued)]
    pub fn remove_queued(&self, id: JsValue) -> Result<bool, JsValue> {
        let id = string_arg(&id, "id")?;
        Ok(self
            .shell
            .with_core(|c, now| c.follow_ups_mut().remove(&id, now)))
    }

    /// Retries a `failed` follow-up, or sends a `stalled` one as a new message.
    #[wasm_bindgen(js_name = retryQueued)]
    pub fn retry_queued(&self, id: JsValue) -> Result<bool, JsValue> {
        let id = string_arg(&id, "id")?;
        Ok(self
            .shell
            .with_core(|c, now| c.follow_ups_mut().retry(&id, now)))
    }

    /// "Run Now" on a queued follow-up (its `runNow` says what it does): retried, run now by
    /// an interrupt (pi-native), or left to run after the current answer. Answers a
    /// `RunNowOutcome`.
    #[wasm_bindgen(js_name = runQueuedNow)]
    pub fn run_queued_now(&self, id: JsValue) -> Result<JsValue, JsValue> {
        let id = string_arg(&id, "id")?;
        let outcome = self
            .shell
            .with_core(|c, now| c.follow_ups_mut().run_now(&id, now));
        Ok(JsValue::from_str(outcome.as_str()))
    }

    /// Regenerates an assistant message (the last by default) in AI SDK mode; false if not
    /// possible now.
    pub fn regenerate(&self, message_id: JsValue) -> Result<bool, JsValue> {
        // `useChat`'s `regenerate({messageId, body, headers, metadata})` as well as a plain id.
        let (message_id, extra) = match message_id.is_object() {
            true => (
                opt_string_arg(&prop(&message_id, "messageId"), "messageId")?,
                send_options(&message_id)?,
            ),
            false => (
                opt_string_arg(&message_id, "messageId")?,
                SendOptions::default(),
            ),
        };
        Ok(self.shell.with_core(|c, now| {
            c.use_chat()
                .regenerate_with(message_id.as_deref(), extra, now)
        }))
    }

    // ----- branches (AI SDK mode) -----

    /// Edits a user message as a new branch (AI SDK mode): a new user message beside it, the
    /// old one kept with its answers (`snapshot.branches`). Options as `send`'s (`messageId`
    /// names the new message).
    #[wasm_bindgen(js_name = editMessage)]
    pub fn edit_message(
        &self,
        source_id: JsValue,
        text: JsValue,
        files: JsValue,
        options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let source_id = string_arg(&source_id, "sourceId")?;
        let text = string_arg(&text, "text")?;
        let files = read_files(&files)?;
        let extra = send_options(&options)?;
        let r = self.shell.with_core(|c, now| {
            c.use_chat()
                .edit_as_branch(&source_id, &text, files, extra, now)
        });
        Ok(submit_result(r))
    }

    /// Shows the branch of `messageId` (AI SDK mode); the next send continues it. `null` when
    /// switched, else why nothing changed: `"busy"`, `"no-branches"`, `"unknown-message"`.
    #[wasm_bindgen(js_name = switchBranch)]
    pub fn switch_branch(&self, message_id: JsValue) -> Result<JsValue, JsValue> {
        let id = string_arg(&message_id, "messageId")?;
        let r = self.shell.with_core(|c, now| c.switch_branch(&id, now));
        Ok(r.err()
            .map_or(JsValue::NULL, |e| JsValue::from_str(e.as_str())))
    }

    /// Starts the store's IO now (what the first `subscribe` or action does): the requests
    /// the core asked for at construction (capabilities, history, state) leave in order.
    pub fn start(&self) {
        self.shell.start();
    }

    /// Aborts everything in flight; the store stays readable (React may read it once more).
    pub fn dispose(&self) {
        self.shell.dispose();
    }
}

fn read_files(files: &JsValue) -> Result<Vec<FileAttachment>, JsValue> {
    if files.is_undefined() || files.is_null() {
        return Ok(Vec::new());
    }
    // Read from the `Value` by hand: serde's `from_value` would bring a deserialiser over
    // `Value` into the wasm for this one type (some 2 KB gzip).
    let Value::Array(list) = json_value(files, "files")? else {
        return Err(usage_error("files: expected an array"));
    };
    let text = |f: &Value, key: &str| f.get(key).and_then(Value::as_str).map(str::to_owned);
    (list.iter().enumerate())
        .map(|(i, f)| {
            let Some(filename) = opt_string(f.get("filename")) else {
                return Err(usage_error(&format!("files[{i}].filename: not a string")));
            };
            match (text(f, "mediaType"), text(f, "url")) {
                (Some(media_type), Some(url)) => Ok(FileAttachment {
                    media_type,
                    filename,
                    url,
                    provider_reference: f.get("providerReference").cloned(),
                    provider_metadata: f.get("providerMetadata").cloned(),
                }),
                _ => Err(usage_error(&format!(
                    "files[{i}]: expected {{ mediaType: string, url: string, filename?: string }}"
                ))),
            }
        })
        .collect()
}

/// `{archived?: boolean}` of the list actions.
fn archived_arg(options: &JsValue) -> Result<bool, JsValue> {
    bag_arg(options, "options")?;
    let v = prop(options, "archived");
    match v.is_undefined() || v.is_null() {
        true => Ok(false),
        false => v
            .as_bool()
            .ok_or_else(|| arg_error("archived", "archived must be a boolean")),
    }
}

fn submit_result(r: SubmitResult) -> JsValue {
    js::parse_frozen(&agent_chat_store::shell_json::to_string(&r))
}
