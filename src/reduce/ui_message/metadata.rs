//! Message metadata merged as the `ai` package merges it (`mergeObjects`), with JavaScript's
//! spread, `in` and number-to-string rules.

use super::*;

/// `updateMessageMetadata`: a non-null patch replaces a null or absent metadata, else is
/// merged into it with the `ai` package's `mergeObjects`.
pub(super) fn merge_metadata(msg: &mut UIMessage, patch: Option<Value>) -> Result<(), Violation> {
    let Some(patch) = patch else { return Ok(()) };
    let merged = match &msg.metadata {
        Some(base) if !base.is_null() => merge_objects(base, &patch)?,
        _ => patch,
    };
    msg.metadata = Some(Box::new(merged));
    Ok(())
}

/// The `ai` package's `mergeObjects(base, overrides)` with JavaScript's semantics, for
/// non-null JSON: the result is `{...base}` with each own key of `overrides` set (objects
/// merged deeply, anything else, arrays included, replacing). Spreading a string or an array
/// gives its indices as keys; a number or boolean gives nothing; and looking a key up in a
/// string, number or boolean `base` is a `TypeError`.
pub fn merge_objects(base: &Value, overrides: &Value) -> Result<Value, Violation> {
    // Inserted one by one: `collect` into the map would sort first (a stable-sort instance).
    let mut result = Object::new();
    for (key, value) in js_own_entries(base) {
        result.insert(key, value);
    }
    for (key, value) in js_own_entries(overrides) {
        if matches!(key.as_str(), "__proto__" | "constructor" | "prototype") {
            continue;
        }
        let base_value = match base {
            Value::Object(o) => o.get(&key),
            Value::Array(a) => key
                .parse::<usize>()
                .ok()
                .filter(|i| i.to_string() == key)
                .and_then(|i| a.get(i)),
            Value::Null => None,
            primitive => {
                return Err(Violation(format!(
                    "Cannot use 'in' operator to search for '{key}' in {}",
                    js_string(primitive)
                )))
            }
        };
        let merged = match (base_value, &value) {
            (Some(b @ Value::Object(_)), Value::Object(_)) => merge_objects(b, &value)?,
            _ => value,
        };
        result.insert(key, merged);
    }
    Ok(Value::Object(result))
}

/// The own enumerable string-keyed properties of a JSON value as JavaScript sees them.
pub(super) fn js_own_entries(v: &Value) -> Box<dyn Iterator<Item = (String, Value)> + '_> {
    match v {
        Value::Object(o) => Box::new(o.iter().map(|(k, v)| (k.clone(), v.clone()))),
        Value::Array(a) => Box::new(
            a.iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v.clone())),
        ),
        Value::String(s) => Box::new(s.encode_utf16().enumerate().map(|(i, u)| {
            let c = String::from_utf16_lossy(&[u]);
            (i.to_string(), Value::String(c))
        })),
        _ => Box::new(std::iter::empty()),
    }
}

/// `String(v)` for a JSON primitive.
pub(super) fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) => js_number(f),
            None => crate::protocol::json::to_string(n),
        },
        // Not through `Value`'s `Display`: that is one more instance of its serialiser.
        Value::Bool(b) => String::from(if *b { "true" } else { "false" }),
        other => crate::protocol::json::to_string(other),
    }
}

/// JavaScript's `Number.prototype.toString()` for a finite number: the shortest round-trip
/// digits (serde_json's, as for every number the crate writes; Rust's float formatting would
/// add its own code to the wasm), placed as ECMAScript's `Number::toString` places them.
pub(super) fn js_number(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let s = crate::protocol::json::to_string(&f);
    let (sign, s) = match s.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", s.as_str()),
    };
    let (mantissa, exp) = s.split_once(['e', 'E']).unwrap_or((s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let point = mantissa.find('.').unwrap_or(mantissa.len()) as i32;
    let all: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = all.trim_start_matches('0');
    // The value is 0.DIGITS × 10^n.
    let n = point - (all.len() - digits.len()) as i32 + exp;
    let digits = digits.trim_end_matches('0');
    let k = digits.len() as i32;
    let mut out = String::from(sign);
    let zeros = |out: &mut String, n: i32| (0..n).for_each(|_| out.push('0'));
    if k <= n && n <= 21 {
        out.push_str(digits);
        zeros(&mut out, n - k);
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        zeros(&mut out, -n);
        out.push_str(digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push_str(if n > 1 { "e+" } else { "e-" });
        out.push_str(&(n - 1).unsigned_abs().to_string());
    }
    out
}
