//! Reading `new ChatStore(options)`.

use js_sys::Function;
use wasm_bindgen::prelude::*;

use agent_chat_store::Capabilities;
use agent_chat_store::{AutoSend, StoreOptions};

use super::{js, usage_error};

/// What the shell itself needs from the options (the core gets the rest).
pub(crate) struct HostOptions {
    /// What the JS request driver (driver.rs) reads per request: `baseUrl`, `headers` (an
    /// object, or a function returning one or a promise of one: credentials and tokens only
    /// ever pass through JS), `credentials`, `fetch` and `prepareSendMessagesRequest`.
    pub fetch_host: JsValue,
    pub throttle_ms: f64,
    pub on_data: Option<Function>,
    pub on_error: Option<Function>,
    pub on_event: Option<Function>,
    /// `onSessionChange(id)`: the open session changed (a host keeps the id in its URL).
    pub on_session_change: Option<Function>,
    /// A host predicate `({messages}) => boolean` for `sendAutomaticallyWhen`.
    pub send_automatically_when: Option<Function>,
    /// Keep each session's last `clientSeq` in `localStorage` (`persistSeq`, default true).
    pub persist_seq: bool,
    /// `onFinish({message, messages, isAbort, isDisconnect, isError, finishReason})`.
    pub on_finish: Option<Function>,
    /// `onToolCall({toolCall})`: a tool call for the client to run.
    pub on_tool_call: Option<Function>,
}

use crate::store::prop as get;

fn string(obj: &JsValue, key: &str) -> Result<Option<String>, JsValue> {
    let v = get(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.as_string()
        .map(|mut s| {
            agent_chat_store::shell_json::mark_private_in(&mut s);
            Some(s)
        })
        .ok_or_else(|| super::arg_error(key, &format!("option {key} must be a string")))
}

fn number(obj: &JsValue, key: &str) -> Result<Option<f64>, JsValue> {
    let v = get(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    match v.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
        _ => Err(super::arg_error(
            key,
            &format!("option {key} must be a non-negative number"),
        )),
    }
}

fn function(obj: &JsValue, key: &str) -> Result<Option<Function>, JsValue> {
    let v = get(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into::<Function>()
        .map(Some)
        .map_err(|_| super::arg_error(key, &format!("option {key} must be a function")))
}

pub(crate) fn read(o: &JsValue) -> Result<(StoreOptions, HostOptions), JsValue> {
    if !o.is_object() {
        return Err(usage_error("ChatStore needs an options object"));
    }
    let session_id = string(o, "sessionId")?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| usage_error("option sessionId is required"))?;
    let mut opts = StoreOptions::new(session_id);
    let caps = get(o, "capabilities");
    if caps.is_object() {
        let text = super::json_text(&caps, "option capabilities")?.unwrap_or_default();
        opts.capabilities = Some(
            Capabilities::from_json(text.as_bytes())
                .ok_or_else(|| usage_error("option capabilities must be an object"))?,
        );
    }
    let routes = get(o, "routes");
    let r = &mut opts.routes;
    for (key, slot) in [
        ("capabilities", &mut r.capabilities),
        ("catalog", &mut r.catalog),
        ("chat", &mut r.chat),
        ("followup", &mut r.followup),
        ("messages", &mut r.messages),
        ("stream", &mut r.stream),
        ("turn", &mut r.turn),
        ("approval", &mut r.approval),
        ("toolOutput", &mut r.tool_output),
        ("sessions", &mut r.sessions),
        ("session", &mut r.session),
    ] {
        if let Some(path) = string(&routes, key)? {
            *slot = path;
        }
    }
    let limits = get(o, "limits");
    if let Some(n) = number(&limits, "maxEventBytes")? {
        opts.limits.max_event_bytes = n as usize;
    }
    if let Some(n) = number(&limits, "maxBodyBytes")? {
        opts.limits.max_body_bytes = n as usize;
    }
    if let Some(n) = number(&limits, "maxMessages")? {
        opts.limits.max_messages = n as usize;
    }
    if let Some(n) = number(&limits, "maxMessageChars")? {
        opts.limits.max_message_chars = n as usize;
    }
    if let Some(n) = number(&limits, "maxHistoryChars")? {
        opts.limits.max_history_chars = n as usize;
    }
    if let Some(n) = number(&limits, "maxStoredDataUrlChars")? {
        opts.limits.max_stored_data_url_chars = n as usize;
    }
    let retry = get(o, "retry");
    if let Some(n) = number(&retry, "maxAttempts")? {
        opts.retry.max_attempts = n as u32;
    }
    if let Some(n) = number(&retry, "baseDelayMs")? {
        opts.retry.base_delay_ms = n as u64;
    }
    if let Some(n) = number(&retry, "maxDelayMs")? {
        opts.retry.max_delay_ms = n as u64;
    }
    if let Some(n) = number(o, "followUpTimeoutMs")? {
        opts.followup_timeout_ms = n as u64;
    }
    if let Some(n) = number(o, "resumeAttempts")? {
        opts.resume_attempts = n as u32;
    }
    if let Some(n) = number(o, "resumeDelayMs")? {
        opts.resume_delay_ms = n as u64;
    }
    // 0 turns the stream idle timeout off.
    if let Some(n) = number(o, "streamIdleTimeoutMs")? {
        opts.stream_idle_timeout_ms = (n > 0.0).then_some(n as u64);
    }
    // 0 turns the heartbeat watchdog off (only the idle timeout holds).
    if let Some(n) = number(o, "heartbeatGraceMs")? {
        opts.heartbeat_grace_ms = (n > 0.0).then_some(n as u64);
    }
    if let Some(n) = number(o, "sessionPageSize")? {
        opts.session_page_size = (n as u32).clamp(1, 1000);
    }
    if let Some(b) = get(o, "attach").as_bool() {
        opts.attach = b;
    }
    if let Some(b) = get(o, "hydrate").as_bool() {
        opts.hydrate = b;
    }
    if let Some(b) = get(o, "persist").as_bool() {
        opts.persist = b;
    }
    match string(o, "protocol")?.as_deref() {
        None | Some("sse") => {}
        #[cfg(feature = "pi")]
        Some("pi-native") => {
            opts.pi_native = Some(string(o, "agentType")?.unwrap_or_else(|| "pi".into()));
        }
        #[cfg(not(feature = "pi"))]
        Some("pi-native") => {
            return Err(super::arg_error(
                "protocol",
                "option protocol \"pi-native\" needs the full build of agent-chat-store",
            ))
        }
        Some(_) => {
            return Err(super::arg_error(
                "protocol",
                "option protocol must be \"sse\" or \"pi-native\"",
            ))
        }
    }
    if let Some(b) = get(o, "aiSdkRequests").as_bool() {
        opts.ai_sdk_requests = b;
    }
    opts.body = crate::store::body_arg(&get(o, "body"), "body")?;
    // `sendAutomaticallyWhen`: the `ai` package's two built-in predicates by name, or the
    // host's own function.
    let auto = get(o, "sendAutomaticallyWhen");
    let mut auto_fn = None;
    if let Some(name) = auto.as_string() {
        opts.send_automatically_when = match name.as_str() {
            "lastAssistantMessageIsCompleteWithToolCalls" => AutoSend::ToolCallsComplete,
            "lastAssistantMessageIsCompleteWithApprovalResponses" => AutoSend::ApprovalsAnswered,
            _ => {
                return Err(usage_error(
                    "option sendAutomaticallyWhen: unknown predicate name",
                ))
            }
        };
    } else if js::is_function(&auto) {
        opts.send_automatically_when = AutoSend::Host;
        auto_fn = Some(auto.unchecked_into::<Function>());
    }
    let headers = get(o, "headers");
    if !(headers.is_undefined()
        || headers.is_null()
        || headers.is_object()
        || js::is_function(&headers))
    {
        return Err(usage_error(
            "option headers must be an object or a function",
        ));
    }
    // `prepareSendMessagesRequest(options)`: may replace a chat POST's `api`, `body`,
    // `headers` and `credentials` (the `ai` package's `HttpChatTransport` hook).
    let prepare = function(o, "prepareSendMessagesRequest")?;
    opts.prepare_hook = prepare.is_some();
    let host = HostOptions {
        fetch_host: super::driver::fetch_host(
            &string(o, "baseUrl")?.unwrap_or_default(),
            &headers,
            string(o, "credentials")?,
            function(o, "fetch")?,
            prepare,
        ),
        throttle_ms: number(o, "throttleMs")?.unwrap_or(0.0),
        on_data: function(o, "onData")?,
        on_error: function(o, "onError")?,
        on_event: function(o, "onEvent")?,
        on_session_change: function(o, "onSessionChange")?,
        send_automatically_when: auto_fn,
        persist_seq: get(o, "persistSeq").as_bool() != Some(false),
        on_finish: function(o, "onFinish")?,
        on_tool_call: function(o, "onToolCall")?,
    };
    Ok((opts, host))
}
