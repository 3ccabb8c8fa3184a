//! Reading the server's session items and pages, and deriving titles.

use super::*;

/// Reads one session object of a list or `PATCH` answer; `None` without a string `id`. A
/// pi-native summary (`{ref: {sessionId}, status, …}`, SPEC §14) is read the same way: its id
/// is `ref.sessionId`, and it runs while its status is `running` or `aborting`.
pub fn parse_item(v: &Value) -> Option<SessionItem> {
    let obj = v.as_object()?;
    let id = (obj.get("id"))
        .or_else(|| obj.get("ref")?.get("sessionId"))?
        .as_str()
        .filter(|s| !s.is_empty())?;
    let stamp = |key: &str| {
        obj.get(key)
            .filter(|v| v.is_string() || v.is_number())
            .cloned()
    };
    let flag = |key: &str| obj.get(key).and_then(Value::as_bool).unwrap_or(false);
    Some(SessionItem {
        id: id.to_string(),
        title: obj.get("title").and_then(Value::as_str).and_then(title_of),
        created_at: stamp("createdAt"),
        updated_at: stamp("updatedAt"),
        running: flag("running")
            || matches!(
                obj.get("status").and_then(Value::as_str),
                Some("running" | "aborting")
            ),
        archived: flag("archived"),
        local: false,
    })
}

/// Reads a list answer (`{sessions: [...], nextCursor?}`).
pub fn parse_page(body: &[u8]) -> Result<Page, &'static str> {
    let v = crate::protocol::json::from_slice(body).map_err(|_| "session list is not JSON")?;
    let list = (v.get("sessions").and_then(Value::as_array))
        .ok_or("session list has no sessions array")?;
    let mut items: Vec<SessionItem> = Vec::with_capacity(list.len());
    let mut skipped = 0;
    // The ids listed so far (a page of a list that ignores `limit` may hold them all).
    let mut listed: HashMap<String, usize> = HashMap::default();
    for entry in list {
        match parse_item(entry) {
            Some(item) if listed.insert(item.id.clone(), 0).is_none() => items.push(item),
            _ => skipped += 1,
        }
    }
    let next_cursor = (v.get("nextCursor").and_then(Value::as_str))
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok(Page {
        items,
        next_cursor,
        skipped,
    })
}

/// The longest title the list shows of a first user message, in characters.
pub(super) const DERIVED_TITLE_CHARS: usize = 80;

/// The longest session title, in UTF-16 units (JS string length): a title the user gives
/// (`renameSession`, on both transports, and the title a pi-native session is created with) or
/// the server lists is cut there. The pi-native protocol's rename and create take 1–200
/// (`pi-native-protocol.md`, rename), so a longer one would be refused by the server; a chat
/// UI's title is one line of a list, and a longer one (a pasted document) is kept as its
/// start rather than refused, as a text field with a `maxlength` would.
pub const MAX_TITLE_CHARS: usize = 200;

/// A title as given or shown: trimmed, at most [`MAX_TITLE_CHARS`] UTF-16 units (cut on a
/// character, trimmed again), `None` when empty.
pub fn title_of(s: &str) -> Option<String> {
    let t = s.trim();
    let mut units = 0;
    let cut = t.char_indices().find_map(|(at, c)| {
        units += c.len_utf16();
        (units > MAX_TITLE_CHARS).then_some(at)
    });
    let t = match cut {
        Some(cut) => t[..cut].trim_end(),
        None => t,
    };
    (!t.is_empty()).then(|| t.to_string())
}

/// The title of a session the server gave none: the first non-empty line of its first user
/// message, at most `DERIVED_TITLE_CHARS` characters.
pub fn derived_title(first_user_text: &str) -> Option<String> {
    let line = first_user_text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    Some(match line.char_indices().nth(DERIVED_TITLE_CHARS) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_string(),
    })
}
