//! Typed tool UI metadata (the "harness tool UI capabilities" design): which renderer a tool
//! part wants, resolved from typed data only, never from the tool's human text.
//!
//! Every tool part exposes `ui: {rendererId?, displayGroup?, icon?, details?}`, each field from
//! the first of these that has it:
//! 0. the part's own `ui` (pi-native's call and result hints, merged);
//! 1. the tool result's `details` (`details.uiKind` is the renderer id);
//! 2. a `data-tool-ui` chunk keyed by `toolCallId` (`{toolCallId, rendererId?, details?,
//!    displayGroup?, icon?}`; the latest one for a call wins; it carries live progress);
//! 3. the session's tool catalog entry for the tool's name (its `ui`).

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::util::hash::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::json::opt_string;
use crate::protocol::{Part, ToolPart, UIMessage};

/// How the catalog says a tool would like to be shown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ToolUiHints {
    /// `rendererId`: the renderer the tool's parts ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renderer_id: Option<String>,
    /// `displayGroup`: the group the UI may show the tool's parts under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_group: Option<String>,
    /// `icon`: the name of the tool's icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

/// One tool of the session's runtime (`GET …/catalog`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ToolCatalogEntry {
    /// `name`: the tool's name, as in its parts' `tool-<name>`.
    pub name: String,
    /// `description`: what the tool does, in words for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `inputSchema`: the JSON Schema of the tool's input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub input_schema: Option<Value>,
    /// `ui`: how the tool would like its parts shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<ToolUiHints>,
}

/// Reads a catalog answer; entries without a string `name` are skipped (reported by count).
pub fn parse_catalog(body: &[u8]) -> Option<(Vec<ToolCatalogEntry>, usize)> {
    let value: Value = crate::protocol::json::from_slice(body).ok()?;
    let list = value.get("tools")?.as_array()?;
    let mut tools = Vec::with_capacity(list.len());
    let mut skipped = 0;
    for t in list {
        match catalog_entry(t) {
            Some(entry) => tools.push(entry),
            None => skipped += 1,
        }
    }
    Some((tools, skipped))
}

/// `ToolCatalogEntry`'s derived `Deserialize` over a `Value`, by hand (serde's would add a
/// second `Value` deserialiser, some 2.5 KB gzip). `None` where that fails: no string `name`, a
/// field of the wrong type. Like the derive, an array is read as the fields in order.
fn catalog_entry(t: &Value) -> Option<ToolCatalogEntry> {
    const ENTRY: [&str; 4] = ["name", "description", "inputSchema", "ui"];
    const HINTS: [&str; 3] = ["rendererId", "displayGroup", "icon"];
    /// The fields of a struct, by name from an object, by position from an array.
    fn fields<'a, const N: usize>(
        v: &'a Value,
        names: [&str; N],
    ) -> Option<[Option<&'a Value>; N]> {
        match v {
            Value::Object(o) => Some(names.map(|k| o.get(k))),
            Value::Array(a) if a.len() <= N => Some(std::array::from_fn(|i| a.get(i))),
            _ => None,
        }
    }
    let [name, description, input_schema, ui] = fields(t, ENTRY)?;
    let ui = match ui {
        None | Some(Value::Null) => None,
        Some(u) => {
            let [renderer_id, display_group, icon] = fields(u, HINTS)?;
            Some(ToolUiHints {
                renderer_id: opt_string(renderer_id)?,
                display_group: opt_string(display_group)?,
                icon: opt_string(icon)?,
            })
        }
    };
    Some(ToolCatalogEntry {
        name: name?.as_str()?.to_string(),
        description: opt_string(description)?,
        input_schema: input_schema.filter(|v| !v.is_null()).cloned(),
        ui,
    })
}

/// What a `data-tool-ui` chunk said for one tool call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolUiUpdate {
    /// `rendererId`: the renderer for the call's part.
    pub renderer_id: Option<String>,
    /// `displayGroup`: the group the UI may show the call's part under.
    pub display_group: Option<String>,
    /// `icon`: the name of the call's icon.
    pub icon: Option<String>,
    /// `details`: structured data for the renderer (e.g. live progress).
    pub details: Option<Value>,
}

impl ToolUiUpdate {
    /// Reads a `data-tool-ui` chunk's data; `None` without a `toolCallId`.
    pub fn from_data(data: &Value) -> Option<(String, ToolUiUpdate)> {
        let id = data.get("toolCallId")?.as_str()?.to_string();
        let s = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
        Some((
            id,
            ToolUiUpdate {
                renderer_id: s("rendererId"),
                display_group: s("displayGroup"),
                icon: s("icon"),
                details: data.get("details").filter(|d| !d.is_null()).cloned(),
            },
        ))
    }
}

/// How many tool calls' `data-tool-ui` updates a session keeps: the newest calls. A server
/// can name any number of calls; an evicted call's `ui` falls back to its result's details
/// and the catalog.
pub const MAX_TOOL_UI_CALLS: usize = 10_000;

/// The `data-tool-ui` updates of a session, by tool call (the latest per call), bounded to
/// the `MAX_TOOL_UI_CALLS` (10,000) calls first seen most recently.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolUiUpdates {
    by_call: HashMap<String, ToolUiUpdate>,
    /// Calls in the order first seen, for eviction.
    order: VecDeque<String>,
}

impl ToolUiUpdates {
    /// No updates.
    pub fn new() -> Self {
        Self::default()
    }

    /// The latest update for the call with this `toolCallId`.
    pub fn get(&self, tool_call_id: &str) -> Option<&ToolUiUpdate> {
        self.by_call.get(tool_call_id)
    }

    /// The number of calls with an update.
    pub fn len(&self) -> usize {
        self.by_call.len()
    }

    /// No call has an update.
    pub fn is_empty(&self) -> bool {
        self.by_call.is_empty()
    }

    /// Records the latest update for a call; a new call past the bound evicts the oldest.
    pub fn insert(&mut self, tool_call_id: String, update: ToolUiUpdate) {
        if self.by_call.insert(tool_call_id.clone(), update).is_some() {
            return;
        }
        self.order.push_back(tool_call_id);
        if self.order.len() > MAX_TOOL_UI_CALLS {
            if let Some(oldest) = self.order.pop_front() {
                self.by_call.remove(&oldest);
            }
        }
    }
}

/// The tool result's structured details: pi's `details`, or an AI SDK output's `details`.
fn result_details(t: &ToolPart) -> Option<Cow<'_, Value>> {
    if let Some(d) = &t.details {
        return Some(d.value());
    }
    let is_details = |d: &&Value| d.is_object();
    match t.output.as_ref()?.value() {
        Cow::Borrowed(o) => o.get("details").filter(is_details).map(Cow::Borrowed),
        Cow::Owned(o) => o.get("details").filter(is_details).cloned().map(Cow::Owned),
    }
}

/// The resolved `ui` of a tool part.
pub fn resolve(t: &ToolPart, updates: &ToolUiUpdates, catalog: &[ToolCatalogEntry]) -> Value {
    let own = t.extra.get("ui").filter(|u| u.is_object());
    let own_str = |k: &str| own.and_then(|u| u.get(k)).and_then(Value::as_str);
    let details = match own.and_then(|u| u.get("details")).filter(|d| !d.is_null()) {
        Some(d) => Some(Cow::Borrowed(d)),
        None => result_details(t),
    };
    let update = updates.get(&t.tool_call_id);
    let hints = catalog
        .iter()
        .find(|e| e.name == t.tool_name)
        .and_then(|e| e.ui.as_ref());
    let from_details = (details.as_deref())
        .and_then(|d| d.get("uiKind"))
        .and_then(Value::as_str);
    let mut ui = Map::new();
    let mut put = |k: &str, v: Option<&str>| {
        if let Some(v) = v {
            ui.insert(k.to_string(), Value::String(v.to_string()));
        }
    };
    put(
        "rendererId",
        (own_str("rendererId").or(from_details))
            .or(update.and_then(|u| u.renderer_id.as_deref()))
            .or(hints.and_then(|h| h.renderer_id.as_deref())),
    );
    put(
        "displayGroup",
        (own_str("displayGroup").or(update.and_then(|u| u.display_group.as_deref())))
            .or(hints.and_then(|h| h.display_group.as_deref())),
    );
    put(
        "icon",
        (own_str("icon").or(update.and_then(|u| u.icon.as_deref())))
            .or(hints.and_then(|h| h.icon.as_deref())),
    );
    if let Some(d) = (details.as_deref()).or(update.and_then(|u| u.details.as_ref())) {
        ui.insert("details".into(), d.clone());
    }
    Value::Object(ui)
}

/// Puts the resolved `ui` of tool part `t` on its JSON `obj`, when there is one: a part with
/// nothing to say has no `ui` key, so a tool part exports as the `ai` package's does.
pub fn put_ui(
    obj: &mut Map<String, Value>,
    t: &ToolPart,
    updates: &ToolUiUpdates,
    catalog: &[ToolCatalogEntry],
) {
    match resolve(t, updates, catalog) {
        Value::Object(ui) if ui.is_empty() => {}
        ui => {
            obj.insert("ui".into(), ui);
        }
    }
}

/// A message as exported to the UI: its JSON with `ui` on every tool part that has one.
pub fn export_message(
    msg: &UIMessage,
    updates: &ToolUiUpdates,
    catalog: &[ToolCatalogEntry],
) -> Value {
    let mut v = serde_json::to_value(msg).unwrap_or(Value::Null);
    if !msg.parts.iter().any(|p| matches!(p, Part::Tool(_))) {
        return v;
    }
    if let Some(parts) = v.get_mut("parts").and_then(Value::as_array_mut) {
        for (json, part) in parts.iter_mut().zip(&msg.parts) {
            if let (Part::Tool(t), Some(obj)) = (part, json.as_object_mut()) {
                put_ui(obj, t, updates, catalog);
            }
        }
    }
    v
}

/// Whether `msg` has a tool part for `tool_call_id`.
pub fn has_call(msg: &UIMessage, tool_call_id: &str) -> bool {
    msg.parts
        .iter()
        .any(|p| p.as_tool().is_some_and(|t| t.tool_call_id == tool_call_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Json;
    use serde_json::json;

    fn part(details: Option<Value>) -> ToolPart {
        let mut t = ToolPart::new("c1", "pi.subagent", true);
        t.details = details.map(Into::into);
        t
    }

    fn catalog() -> Vec<ToolCatalogEntry> {
        parse_catalog(
            br#"{"tools":[{"name":"pi.subagent","ui":{"rendererId":"from-catalog","displayGroup":"agents","icon":"bot"}},{"name":"ls"},{"bad":1}]}"#,
        )
        .map(|(t, skipped)| {
            assert_eq!(skipped, 1);
            t
        })
        .unwrap()
    }

    #[test]
    fn updates_keep_the_newest_calls_only() {
        // A hostile stream can name a new call per chunk: memory stays bounded, the newest
        // calls (the live ones) keep their updates, a repeated call keeps its place.
        let mut updates = ToolUiUpdates::new();
        let update = |n: usize| {
            ToolUiUpdate::from_data(&json!({"toolCallId": format!("c{n}"), "icon": n.to_string()}))
                .unwrap()
        };
        for n in 0..MAX_TOOL_UI_CALLS + 500 {
            let (id, u) = update(n);
            updates.insert(id, u);
            if n < 10 {
                let (id, u) = update(0);
                updates.insert(id, u); // an update for an existing call is not a new entry
            }
        }
        assert_eq!(updates.len(), MAX_TOOL_UI_CALLS);
        assert!(updates.get("c0").is_none() && updates.get("c499").is_none());
        assert!(updates.get("c500").is_some());
        let last = format!("c{}", MAX_TOOL_UI_CALLS + 499);
        assert_eq!(updates.get(&last).unwrap().icon.as_deref(), Some("10499"));
    }

    #[test]
    fn details_win_then_data_part_then_catalog() {
        let cat = catalog();
        let mut updates = ToolUiUpdates::new();
        // Catalog only.
        assert_eq!(
            resolve(&part(None), &updates, &cat),
            json!({"rendererId":"from-catalog","displayGroup":"agents","icon":"bot"})
        );
        // A data-tool-ui chunk beats the catalog, field by field.
        let (id, u) = ToolUiUpdate::from_data(
            &json!({"toolCallId":"c1","rendererId":"from-data","details":{"status":"running"},"icon":"spinner"}),
        )
        .unwrap();
        updates.insert(id, u);
        assert_eq!(
            resolve(&part(None), &updates, &cat),
            json!({"rendererId":"from-data","displayGroup":"agents","icon":"spinner","details":{"status":"running"}})
        );
        // The result's details beat both.
        let d = json!({"uiKind":"pi-subagent","status":"done"});
        assert_eq!(
            resolve(&part(Some(d.clone())), &updates, &cat),
            json!({"rendererId":"pi-subagent","displayGroup":"agents","icon":"spinner","details":d})
        );
        // Nothing known: an empty object, never absent.
        assert_eq!(
            resolve(
                &ToolPart::new("x", "echo", true),
                &ToolUiUpdates::new(),
                &[]
            ),
            json!({})
        );
    }

    #[test]
    fn the_parts_own_hints_come_first() {
        // pi-native's `ui` of a call and its result, kept on the part: over the result's
        // details, an update and the catalog, field by field; its `details` too.
        let mut t = part(Some(json!({"uiKind": "from-details", "status": "done"})));
        t.extra.insert(
            "ui".into(),
            json!({"rendererId": "shell-command", "details": {"exitCode": 0}}),
        );
        assert_eq!(
            resolve(&t, &ToolUiUpdates::new(), &catalog()),
            json!({"rendererId": "shell-command", "displayGroup": "agents", "icon": "bot", "details": {"exitCode": 0}})
        );
    }

    #[test]
    fn ai_sdk_output_details_count_as_result_details() {
        let mut t = ToolPart::new("c2", "weather", false);
        t.output = Some(Json::compact(
            json!({"temp": 3, "details": {"uiKind": "weather-card"}}),
        ));
        assert_eq!(
            resolve(&t, &ToolUiUpdates::new(), &[])["rendererId"],
            "weather-card"
        );
    }

    #[test]
    fn exported_messages_carry_ui_on_tool_parts_only() {
        let msg = UIMessage::from_json(json!({"id":"m","role":"assistant","parts":[
            {"type":"text","text":"hi"},
            {"type":"dynamic-tool","toolName":"ls","toolCallId":"c","state":"output-available","input":{},"output":[],"details":{"uiKind":"listing","n":2}}
        ]}))
        .unwrap();
        let v = export_message(&msg, &ToolUiUpdates::new(), &[]);
        assert!(v["parts"][0].get("ui").is_none());
        assert_eq!(
            v["parts"][1]["ui"],
            json!({"rendererId":"listing","details":{"uiKind":"listing","n":2}})
        );
        assert_eq!(
            v["parts"][1]["details"]["n"], 2,
            "details stay structured on the part too"
        );
    }

    /// The hand-written reader gives what the derived `Deserialize` gives (the oracle, kept
    /// for that), entry by entry, on well-formed, mistyped and oddly shaped entries.
    #[test]
    fn catalog_entry_matches_the_derive() {
        let cases = vec![
            json!({"name": "a"}),
            json!({"name": 1}),
            json!({}),
            json!(null),
            json!("x"),
            json!(3),
            json!({"name": "a", "description": null, "inputSchema": null, "ui": null}),
            json!({"name": "a", "description": "d", "inputSchema": {"type": "object"}, "ui": {}}),
            json!({"name": "a", "description": 5}),
            json!({"name": "a", "inputSchema": 5}),
            json!({"name": "a", "inputSchema": [1, {"b": null}]}),
            json!({"name": "a", "ui": []}),
            json!({"name": "a", "ui": {"rendererId": "r", "displayGroup": "g", "icon": "i", "x": 1}}),
            json!({"name": "a", "ui": {"rendererId": 1}}),
            json!({"name": "a", "ui": {"icon": null}}),
            json!({"name": "a", "ui": "s"}),
            json!({"name": "a", "ui": false}),
            json!({"name": "a", "extra": {"y": 2}}),
            json!({"name": null}),
            json!({"Name": "a"}),
            json!(["a"]),
            json!([]),
            json!(["a", null, {"x": 1}, ["r", "g"]]),
            json!(["a", "d", null, null, 5]),
            json!(["a", 1]),
            json!({"name": "a", "ui": ["r", "g", "i", "z"]}),
            json!({"name": "a", "ui": [null, 2]}),
            json!({"name": "a", "ui": ["r"]}),
            json!({"name": "a", "input_schema": 1}),
            json!({"name": "a", "display_group": 1, "ui": {"display_group": 2}}),
        ];
        for c in cases {
            let want = serde_json::from_value::<ToolCatalogEntry>(c.clone()).ok();
            assert_eq!(catalog_entry(&c), want, "{c}");
        }
    }
}
