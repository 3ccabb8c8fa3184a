//! Browser tests of the wasm shell in headless Chromium (wasm-bindgen-test), against the
//! scripted server `tests/server/test-server.mjs` that the test command starts on 127.0.0.1.
//! Real fetches, real streamed bodies, real AbortControllers.
use crate::JsChatStore;
use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const SERVER: &str = match option_env!("ACS_TEST_SERVER") {
    Some(s) => s,
    None => "http://127.0.0.1:18787",
};

fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", (js_sys::Math::random() * 1e9) as u64)
}

async fn sleep(ms: i32) {
    let p = Promise::new(&mut |resolve, _| {
        let g = js_sys::global();
        let set: Function = Reflect::get(&g, &"setTimeout".into()).unwrap().into();
        set.call2(&JsValue::NULL, &resolve, &ms.into()).unwrap();
    });
    JsFuture::from(p).await.unwrap();
}

fn get(v: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(v.clone(), |acc, k| {
        if acc.is_undefined() || acc.is_null() {
            return JsValue::UNDEFINED;
        }
        match k.parse::<u32>() {
            Ok(i) if Array::is_array(&acc) => Array::from(&acc).get(i),
            _ => Reflect::get(&acc, &k.into()).unwrap_or(JsValue::UNDEFINED),
        }
    })
}

fn store(session: &str, extra: &[(&str, JsValue)]) -> JsChatStore {
    let o = Object::new();
    Reflect::set(&o, &"baseUrl".into(), &SERVER.into()).unwrap();
    Reflect::set(&o, &"sessionId".into(), &session.into()).unwrap();
    for (k, v) in extra {
        Reflect::set(&o, &(*k).into(), v).unwrap();
    }
    let s = JsChatStore::new(o.into()).expect("options accepted");
    s.start(); // what a first subscribe or action does
    s
}

fn snap(s: &JsChatStore) -> JsValue {
    s.get_snapshot().call0(&JsValue::NULL).unwrap()
}

/// Polls the snapshot until `pred` holds (20 s at most).
async fn until(s: &JsChatStore, what: &str, pred: impl Fn(&JsValue) -> bool) -> JsValue {
    for _ in 0..1000 {
        let v = snap(s);
        if pred(&v) {
            return v;
        }
        sleep(20).await;
    }
    panic!(
        "timed out waiting for: {what}; snapshot: {:?}",
        js_sys::JSON::stringify(&snap(s))
    );
}

async fn server_log(session: &str) -> JsValue {
    let g = js_sys::global();
    let fetch: Function = Reflect::get(&g, &"fetch".into()).unwrap().into();
    let url = format!("{SERVER}/test/log?session={session}");
    let resp = JsFuture::from(Promise::from(
        fetch.call1(&JsValue::NULL, &url.into()).unwrap(),
    ))
    .await
    .unwrap();
    let json: Function = Reflect::get(&resp, &"json".into()).unwrap().into();
    JsFuture::from(Promise::from(json.call0(&resp).unwrap()))
        .await
        .unwrap()
}

fn log_entries(log: &JsValue, method: &str, path_part: &str) -> Vec<JsValue> {
    Array::from(&get(log, "log"))
        .iter()
        .filter(|e| get(e, "method").as_string().as_deref() == Some(method))
        .filter(|e| {
            get(e, "path")
                .as_string()
                .unwrap_or_default()
                .contains(path_part)
        })
        .collect()
}

fn status(v: &JsValue) -> String {
    get(v, "status").as_string().unwrap_or_default()
}

#[wasm_bindgen_test]
async fn capabilities_are_fetched_and_a_stale_sessions_answer_is_ignored() {
    let pi = unique("pi");
    let s = store(&pi, &[]);
    let v = until(&s, "capabilities", |v| {
        get(v, "capabilitiesLoaded").as_bool() == Some(true)
    })
    .await;
    assert_eq!(get(&v, "capabilities.nativeFollowUp").as_bool(), Some(true));
    assert_eq!(
        get(&v, "capabilities.aiSdkOwnsHistory").as_bool(),
        Some(false)
    );

    // A slow pi session's answer arrives after the switch to an AI SDK session.
    let slow = unique("pi-slow");
    let ai = unique("ai");
    let s = store(&slow, &[]);
    s.switch_session(JsValue::from_str(&ai)).unwrap();
    let v = until(&s, "ai capabilities", |v| {
        get(v, "capabilitiesLoaded").as_bool() == Some(true)
    })
    .await;
    assert_eq!(
        get(&v, "capabilities.nativeFollowUp").as_bool(),
        Some(false)
    );
    sleep(600).await; // the slow answer (400 ms) has come and gone
    let v = snap(&s);
    assert_eq!(
        get(&v, "sessionId").as_string().as_deref(),
        Some(ai.as_str())
    );
    assert_eq!(
        get(&v, "capabilities.nativeFollowUp").as_bool(),
        Some(false)
    );
    s.dispose();
}

#[wasm_bindgen_test]
async fn a_streamed_turn_updates_the_snapshot_before_the_body_ends() {
    let id = unique("pi");
    let s = store(&id, &[]);
    until(&s, "hydrated", |v| {
        get(v, "hydrated").as_bool() == Some(true)
    })
    .await;
    let r = s
        .send(
            "hello words:12 pace:60".into(),
            JsValue::UNDEFINED,
            JsValue::UNDEFINED,
        )
        .unwrap();
    assert_eq!(get(&r, "kind").as_string().as_deref(), Some("sent"));
    // Partial assistant text while the status is still streaming: the body is read as it
    // arrives.
    let mid = until(&s, "partial text while streaming", |v| {
        status(v) == "streaming"
            && get(v, "messages.1.parts.0.text")
                .as_string()
                .is_some_and(|t| t.starts_with("w0 w1"))
    })
    .await;
    let user_before = get(&mid, "messages.0");
    let done = until(&s, "turn end", |v| status(v) == "ready").await;
    let text = get(&done, "messages.1.parts.0.text").as_string().unwrap();
    assert!(text.starts_with("w0 w1 w2"), "{text}");
    assert!(text.ends_with("w11 "), "{text}");
    assert_eq!(
        Array::from(&get(&done, "messages")).length(),
        2,
        "no duplicate of the user message"
    );
    // The user message did not change: the very same frozen object.
    assert!(JsValue::eq(&user_before, &get(&done, "messages.0")));
    assert!(Object::is_frozen(&get(&done, "messages.0").into()));
    // Nothing changed → the same snapshot object.
    assert!(JsValue::eq(&snap(&s), &snap(&s)));
    s.dispose();
}

#[wasm_bindgen_test]
async fn three_follow_ups_are_posted_strictly_in_order() {
    let id = unique("pi-delay");
    let s = store(&id, &[]);
    until(&s, "capabilities", |v| {
        get(v, "capabilitiesLoaded").as_bool() == Some(true)
    })
    .await;
    s.send(
        "start words:25 pace:60".into(),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    )
    .unwrap();
    until(&s, "busy", |v| status(v) == "streaming").await;
    for t in ["one", "two", "three"] {
        let r = s
            .send(t.into(), JsValue::UNDEFINED, JsValue::UNDEFINED)
            .unwrap();
        assert_eq!(get(&r, "kind").as_string().as_deref(), Some("queued"));
    }
    assert_eq!(Array::from(&get(&snap(&s), "queued")).length(), 3);
    // Each POST waits 600 ms for its answer; the next must not start before.
    for _ in 0..200 {
        if log_entries(&server_log(&id).await, "POST", "/followup").len() == 3 {
            break;
        }
        sleep(50).await;
    }
    let log = server_log(&id).await;
    let posts = log_entries(&log, "POST", "/followup");
    let texts: Vec<String> = posts
        .iter()
        .map(|p| get(p, "body.message").as_string().unwrap())
        .collect();
    assert_eq!(texts, ["one", "two", "three"]);
    let seqs: Vec<f64> = posts
        .iter()
        .map(|p| get(p, "body.clientSeq").as_f64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert_eq!(
        get(&log, &format!("maxInFlight.{id}")).as_f64(),
        Some(1.0),
        "never two at once"
    );
    let times: Vec<f64> = posts
        .iter()
        .map(|p| get(p, "t").as_f64().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[1] - w[0] >= 550.0),
        "posted one after another: {times:?}"
    );
    // The server runs them; the bubbles become messages, none twice.
    let v = until(&s, "all consumed", |v| {
        status(v) == "ready" && Array::from(&get(v, "queued")).length() == 0
    })
    .await;
    let users: Vec<String> = Array::from(&get(&v, "messages"))
        .iter()
        .filter(|m| get(m, "role").as_string().as_deref() == Some("user"))
        .map(|m| get(&m, "parts.0.text").as_string().unwrap())
        .collect();
    assert_eq!(users, ["start words:25 pace:60", "one", "two", "three"]);
    s.dispose();
}

#[wasm_bindgen_test]
async fn switching_session_aborts_the_in_flight_post_and_its_late_answer_changes_nothing() {
    let id = unique("pi-delay");
    let other = unique("ai");
    let s = store(&id, &[]);
    until(&s, "capabilities", |v| {
        get(v, "capabilitiesLoaded").as_bool() == Some(true)
    })
    .await;
    s.send(
        "start words:40 pace:50".into(),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    )
    .unwrap();
    until(&s, "busy", |v| status(v) == "streaming").await;
    s.send(
        "queued while busy".into(),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    )
    .unwrap();
    until(&s, "posting", |v| {
        get(v, "queued.0.state").as_string().as_deref() == Some("posting")
    })
    .await;
    // Switch only once the server holds the POST (it answers after 600 ms).
    for _ in 0..100 {
        if !log_entries(&server_log(&id).await, "POST", "/followup").is_empty() {
            break;
        }
        sleep(20).await;
    }
    s.switch_session(JsValue::from_str(&other)).unwrap();
    let after = snap(&s);
    assert_eq!(
        Array::from(&get(&after, "queued")).length(),
        0,
        "the old session's queue is not shown"
    );
    sleep(900).await; // the delayed answer (600 ms) would have arrived by now
    let v = snap(&s);
    assert_eq!(get(&v, "sessionId").as_string(), Some(other.clone()));
    assert_eq!(Array::from(&get(&v, "queued")).length(), 0);
    assert_eq!(
        Array::from(&get(&v, "messages")).length(),
        0,
        "nothing of the old session"
    );
    assert_eq!(status(&v), "ready");
    let log = server_log(&id).await;
    let posts = log_entries(&log, "POST", "/followup");
    assert!(
        posts
            .iter()
            .any(|p| get(p, "aborted").as_bool() == Some(true)),
        "the fetch was aborted"
    );
    s.dispose();
}

#[wasm_bindgen_test]
async fn stop_aborts_the_stream_and_sends_the_turn_delete() {
    let id = unique("pi");
    let s = store(&id, &[]);
    until(&s, "capabilities", |v| {
        get(v, "capabilitiesLoaded").as_bool() == Some(true)
    })
    .await;
    s.send(
        "long words:200 pace:40".into(),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    )
    .unwrap();
    let v = until(&s, "streaming with a turn id", |v| {
        status(v) == "streaming" && get(v, "turnId").is_string()
    })
    .await;
    let turn = get(&v, "turnId").as_string().unwrap();
    sleep(200).await;
    s.stop();
    let v = snap(&s);
    assert_eq!(status(&v), "ready");
    let text_at_stop = get(&v, "messages.1.parts.0.text")
        .as_string()
        .unwrap_or_default();
    sleep(300).await;
    let log = server_log(&id).await;
    let deletes = log_entries(&log, "DELETE", "/turn");
    assert_eq!(deletes.len(), 1);
    assert!(get(&deletes[0], "path")
        .as_string()
        .unwrap()
        .contains(&format!("turnId={turn}")));
    // The stream is gone: no more text arrives after the stop.
    assert_eq!(
        get(&snap(&s), "messages.1.parts.0.text")
            .as_string()
            .unwrap_or_default(),
        text_at_stop
    );
    assert_eq!(get(&snap(&s), "composer.canSend").as_bool(), Some(false)); // empty draft
    s.set_draft("next".into()).unwrap();
    assert_eq!(get(&snap(&s), "composer.canSend").as_bool(), Some(true));
    s.dispose();
}

#[wasm_bindgen_test]
async fn listeners_are_notified_once_per_microtask_and_may_read_the_snapshot() {
    let id = unique("ai");
    let s = store(&id, &[("hydrate", JsValue::FALSE)]);
    let count = std::rc::Rc::new(std::cell::Cell::new(0));
    let c = count.clone();
    let getter = s.get_snapshot();
    let listener = Closure::<dyn FnMut()>::new(move || {
        // Reading the snapshot inside the listener must not re-enter a borrowed store.
        let v = getter.call0(&JsValue::NULL).unwrap();
        assert!(v.is_object());
        c.set(c.get() + 1);
    });
    let unsubscribe = s
        .subscribe()
        .call1(&JsValue::NULL, listener.as_ref())
        .unwrap();
    s.set_draft("a".into()).unwrap();
    s.set_draft("ab".into()).unwrap();
    s.set_draft("abc".into()).unwrap();
    assert_eq!(count.get(), 0, "not synchronously");
    sleep(0).await;
    assert_eq!(count.get(), 1, "coalesced into one");
    Function::from(unsubscribe).call0(&JsValue::NULL).unwrap();
    s.set_draft("abcd".into()).unwrap();
    sleep(0).await;
    assert_eq!(count.get(), 1);
    // Bad options are typed errors, not panics.
    let bad = JsChatStore::new(JsValue::from_str("nope"));
    let e = bad.err().expect("rejected");
    assert_eq!(get(&e, "code").as_string().as_deref(), Some("Validation"));
    s.dispose();
}
