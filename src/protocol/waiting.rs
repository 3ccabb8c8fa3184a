//! What a tool call that waits for the user carries (SPEC §13): its `approval` (`ai` 7's
//! `ToolUIPart.approval`: the request for the user's approval, and the answer) and the
//! `interrupt` of an ask-user call (pi: the question and its options). Typed, so a reducer
//! sets what they mean instead of editing a JSON object in place; fields this version does
//! not know, from a stored history or a newer server, are kept as they came.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::json::Object;
use super::part::entry_opt;

/// The approval of one tool call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Approval {
    /// `id`: the approval's id, which the answer names.
    pub id: Option<String>,
    /// `approved`: the answer, once given.
    pub approved: Option<bool>,
    /// `reason`: why, with the answer.
    pub reason: Option<String>,
    /// `requestReason`: why the call asks for approval.
    pub request_reason: Option<String>,
    /// `isAutomatic`: approved by a rule, not by the user.
    pub is_automatic: Option<bool>,
    /// `signature`: the server's signature of the request.
    pub signature: Option<String>,
    /// `descriptor`: what the approval is about, as the server describes it.
    pub descriptor: Option<Value>,
    /// `inputSchemaInput`: the input the approval's schema describes.
    pub input_schema_input: Option<Value>,
    /// Keys this version does not model, kept as they came.
    pub extra: Object,
}

impl Approval {
    /// A request for approval `id`.
    pub fn requested(id: String) -> Self {
        Approval {
            id: Some(id),
            ..Approval::default()
        }
    }

    /// Whether this is the approval `id`.
    pub fn is(&self, id: &str) -> bool {
        self.id.as_deref() == Some(id)
    }

    /// The user granted it.
    pub fn granted(&self) -> bool {
        self.approved == Some(true)
    }

    /// The user denied it.
    pub fn denied(&self) -> bool {
        self.approved == Some(false)
    }

    /// The answer to approval `id`, as a stream reports it: a reason it does not give leaves
    /// the one there.
    pub fn answered(&mut self, id: String, approved: bool, reason: Option<String>) {
        self.id = Some(id);
        self.approved = Some(approved);
        if reason.is_some() {
            self.reason = reason;
        }
    }

    /// Reads a stored approval; `None` for one that is not a JSON object (dropped, as `ai`'s
    /// validation would refuse the part).
    pub fn from_value(v: Value) -> Option<Self> {
        let Value::Object(mut o) = v else {
            return None;
        };
        fn take<T>(o: &mut Object, k: &str, f: impl Fn(&Value) -> Option<T>) -> Option<T> {
            let v = f(o.get(k)?)?;
            o.remove(k);
            Some(v)
        }
        let string = |v: &Value| v.as_str().map(str::to_string);
        Some(Approval {
            id: take(&mut o, "id", string),
            approved: take(&mut o, "approved", Value::as_bool),
            reason: take(&mut o, "reason", string),
            request_reason: take(&mut o, "requestReason", string),
            is_automatic: take(&mut o, "isAutomatic", Value::as_bool),
            signature: take(&mut o, "signature", string),
            descriptor: o.remove("descriptor"),
            input_schema_input: o.remove("inputSchemaInput"),
            extra: o,
        })
    }
}

impl Serialize for Approval {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        entry_opt(&mut m, "id", self.id.as_ref())?;
        entry_opt(&mut m, "approved", self.approved.as_ref())?;
        entry_opt(&mut m, "reason", self.reason.as_ref())?;
        entry_opt(&mut m, "requestReason", self.request_reason.as_ref())?;
        entry_opt(&mut m, "isAutomatic", self.is_automatic.as_ref())?;
        entry_opt(&mut m, "signature", self.signature.as_ref())?;
        entry_opt(&mut m, "descriptor", self.descriptor.as_ref())?;
        entry_opt(&mut m, "inputSchemaInput", self.input_schema_input.as_ref())?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The question an ask-user call waits on (`interrupt` on its tool part).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Question {
    /// `question`: what the user is asked.
    pub question: Option<String>,
    /// `options`: the answers offered, as the server gave them.
    pub options: Option<Value>,
    /// Keys this version does not model, kept as they came.
    pub extra: Object,
}

impl Question {
    /// The question `question` with the answers `options` offered.
    pub fn asked(question: String, options: Value) -> Self {
        Question {
            question: Some(question),
            options: Some(options),
            extra: Object::new(),
        }
    }

    /// Reads a stored one; `None` for one that is not a JSON object.
    pub fn from_value(v: Value) -> Option<Self> {
        let Value::Object(mut o) = v else {
            return None;
        };
        let question = match o.get("question") {
            Some(Value::String(q)) => Some(q.clone()),
            _ => None,
        };
        if question.is_some() {
            o.remove("question");
        }
        Some(Question {
            question,
            options: o.remove("options"),
            extra: o,
        })
    }
}

impl Serialize for Question {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        entry_opt(&mut m, "question", self.question.as_ref())?;
        entry_opt(&mut m, "options", self.options.as_ref())?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_approval_reads_and_writes_back_as_it_was() {
        let stored = json!({"id": "a1", "approved": false, "reason": "no", "requestReason": "rm",
            "isAutomatic": true, "signature": "s", "descriptor": {"k": 1},
            "inputSchemaInput": [1], "future": "kept"});
        let a = Approval::from_value(stored.clone()).expect("an object");
        assert!(a.is("a1") && a.denied());
        assert_eq!(serde_json::to_value(&a).unwrap(), stored);
        // A known key of another type is kept as it came, not dropped.
        let odd = json!({"id": 7, "approved": "yes"});
        let a = Approval::from_value(odd.clone()).expect("an object");
        assert_eq!(a.id, None);
        assert_eq!(serde_json::to_value(&a).unwrap(), odd);
        assert_eq!(Approval::from_value(json!("x")), None);
    }

    #[test]
    fn a_stored_question_reads_and_writes_back_as_it_was() {
        let stored = json!({"question": "Which?", "options": ["a", "b"], "future": 1});
        let q = Question::from_value(stored.clone()).expect("an object");
        assert_eq!(q.question.as_deref(), Some("Which?"));
        assert_eq!(serde_json::to_value(&q).unwrap(), stored);
        let odd = json!({"question": 3});
        assert_eq!(
            serde_json::to_value(Question::from_value(odd.clone()).unwrap()).unwrap(),
            odd
        );
    }

    #[test]
    fn an_answer_without_a_reason_keeps_the_one_there() {
        let mut a = Approval::requested("a1".into());
        a.answered("a1".into(), false, Some("why".into()));
        a.answered("a1".into(), true, None);
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"id": "a1", "approved": true, "reason": "why"})
        );
    }
}
