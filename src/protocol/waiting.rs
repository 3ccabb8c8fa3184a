//! What a tool call that waits for the user carries (SPEC §13): its `approval` (`ai` 7's
//! `ToolUIPart.approval`: the request for the user's approval, and the answer) and the
//! `interrupt` of an ask-user call (pi: the question and its options). Typed: a reducer says
//! what it means (`answered`, `granted`) through these methods instead of editing a JSON
//! object in place. Each keeps its JSON object as it is stored and sent (keys this version
//! does not know, from a stored history or a newer server, stay as they came), which costs
//! the wasm no serializer of its own.

use serde::ser::{Serialize, Serializer};
use serde_json::Value;

use super::json::Object;

/// The approval of one tool call: a JSON object (a `Value`, so it serializes through
/// `Value`'s own code).
#[derive(Debug, Clone, PartialEq)]
pub struct Approval(Value);

impl Approval {
    /// A request for approval `id`.
    pub fn requested(id: String) -> Self {
        let mut a = Approval(Value::Object(Object::new()));
        a.put("id", Some(Value::String(id)));
        a
    }

    /// An approval no request was seen for (an answer that came alone).
    pub fn unasked() -> Self {
        Approval(Value::Object(Object::new()))
    }

    /// Reads a stored approval; `None` for one that is not a JSON object (dropped, as `ai`'s
    /// validation would refuse the part).
    pub fn from_value(v: Value) -> Option<Self> {
        v.is_object().then_some(Approval(v))
    }

    /// `id`: the approval's id, which the answer names.
    pub fn id(&self) -> Option<&str> {
        self.0.get("id")?.as_str()
    }

    /// Whether this is the approval `id`.
    pub fn is(&self, id: &str) -> bool {
        self.id() == Some(id)
    }

    /// `approved`: the answer, once given.
    pub fn approved(&self) -> Option<bool> {
        self.0.get("approved")?.as_bool()
    }

    /// The user granted it.
    pub fn granted(&self) -> bool {
        self.approved() == Some(true)
    }

    /// The user denied it.
    pub fn denied(&self) -> bool {
        self.approved() == Some(false)
    }

    /// `requestReason`: why the call asks for approval.
    pub fn set_request_reason(&mut self, reason: Option<String>) {
        self.put("requestReason", reason.map(Value::String));
    }

    /// `descriptor`: what the approval is about, as the server describes it.
    pub fn set_descriptor(&mut self, descriptor: Option<Value>) {
        self.put("descriptor", descriptor);
    }

    /// `inputSchemaInput`: the input the approval's schema describes.
    pub fn set_input_schema_input(&mut self, input: Option<Value>) {
        self.put("inputSchemaInput", input);
    }

    /// `isAutomatic: true`: approved by a rule, not by the user.
    pub fn set_automatic(&mut self) {
        self.put("isAutomatic", Some(Value::Bool(true)));
    }

    /// `signature`: the server's signature of the request.
    pub fn set_signature(&mut self, signature: Option<String>) {
        self.put("signature", signature.map(Value::String));
    }

    /// The answer to approval `id`, as a stream reports it: a reason it does not give leaves
    /// the one there.
    pub fn answered(&mut self, id: String, approved: bool, reason: Option<String>) {
        self.put("id", Some(Value::String(id)));
        self.put("approved", Some(Value::Bool(approved)));
        self.put("reason", reason.map(Value::String));
    }

    /// The user's answer to approval `id`: its reason, or none, replaces the one there.
    pub fn answered_by_user(&mut self, id: &str, approved: bool, reason: Option<&str>) {
        if let Value::Object(o) = &mut self.0 {
            o.remove("reason");
        }
        self.answered(id.to_string(), approved, reason.map(str::to_string));
    }

    fn put(&mut self, key: &str, v: Option<Value>) {
        if let (Value::Object(o), Some(v)) = (&mut self.0, v) {
            o.insert(key.into(), v);
        }
    }
}

impl Serialize for Approval {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// The question an ask-user call waits on (`interrupt` on its tool part): a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct Question(Value);

impl Question {
    /// The question `question` with the answers `options` offered.
    pub fn asked(question: String, options: Value) -> Self {
        let mut o = Object::new();
        o.insert("question".into(), Value::String(question));
        o.insert("options".into(), options);
        Question(Value::Object(o))
    }

    /// Reads a stored one; `None` for one that is not a JSON object.
    pub fn from_value(v: Value) -> Option<Self> {
        v.is_object().then_some(Question(v))
    }

    /// `question`: what the user is asked.
    pub fn question(&self) -> Option<&str> {
        self.0.get("question")?.as_str()
    }

    /// `options`: the answers offered, as the server gave them.
    pub fn options(&self) -> Option<&Value> {
        self.0.get("options")
    }
}

impl Serialize for Question {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_approval_reads_and_writes_back_as_it_was() {
        let stored = json!({"id": "a1", "approved": false, "reason": "no", "future": "kept"});
        let a = Approval::from_value(stored.clone()).expect("an object");
        assert!(a.is("a1") && a.denied() && !a.granted());
        assert_eq!(serde_json::to_value(&a).unwrap(), stored);
        let odd = Approval::from_value(json!({"id": 7, "approved": "yes"})).unwrap();
        assert_eq!((odd.id(), odd.approved()), (None, None));
        assert_eq!(Approval::from_value(json!("x")), None);
    }

    #[test]
    fn a_stream_answer_keeps_a_reason_a_user_answer_replaces_it() {
        let mut a = Approval::requested("a1".into());
        a.set_request_reason(Some("rm".into()));
        a.answered("a1".into(), false, Some("why".into()));
        a.answered("a1".into(), true, None);
        let want = json!({"id": "a1", "approved": true, "reason": "why", "requestReason": "rm"});
        assert_eq!(serde_json::to_value(&a).unwrap(), want);
        a.answered_by_user("a1", false, None);
        let want = json!({"id": "a1", "approved": false, "requestReason": "rm"});
        assert_eq!(serde_json::to_value(&a).unwrap(), want);
    }

    #[test]
    fn a_question_reads_its_text_and_options() {
        let q = Question::asked("Which?".into(), json!(["a", "b"]));
        assert_eq!(q.question(), Some("Which?"));
        assert_eq!(q.options(), Some(&json!(["a", "b"])));
        let stored = json!({"question": 3, "future": 1});
        let q = Question::from_value(stored.clone()).unwrap();
        assert_eq!(
            (q.question(), serde_json::to_value(&q).unwrap()),
            (None, stored)
        );
    }
}
