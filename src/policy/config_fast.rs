//! A faster reading of a config file's JSON for `config::parse_settings`, with exactly its
//! result: a 10,000-entry whitelist parsed into a `serde_json::Value` tree was most of the cost
//! of every command with a big config (docs/BENCHMARKS.md).
//!
//! The top-level object is read with each value left as raw text; the whitelist and blacklist
//! are read straight into strings, and each of the `rules` typed (`custom_rules::parse_raw`);
//! every other key goes through `config::validate` as before.
//! Anything unusual (an item that is not a string or is blank, a key given twice, a value
//! `Value` cannot hold) returns `None`, and the caller takes the original path, so warnings,
//! positions and fail-closed outcomes stay its own.

use crate::policy::config::FileSettings;
use crate::text::json::Text;
use crate::text::strlist::StrList;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

/// The top-level object's keys and values, in file order.
struct Top<'t>(Vec<(String, Item<'t>)>);

enum Item<'t> {
    /// `commandWhitelist` and `commandBlacklist`, read straight into one buffer each: a list
    /// with anything else in it (or a blank string) fails the whole reading, and the caller
    /// takes the original path.
    Whitelist(Trimmed),
    Blacklist(Trimmed),
    /// `rules`: each rule's raw text, read typed by `custom_rules::parse_raw`.
    Rules(Vec<&'t RawValue>),
    Raw(&'t RawValue),
}

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let item = match key.as_str() {
                        "commandWhitelist" => Item::Whitelist(map.next_value()?),
                        "commandBlacklist" => Item::Blacklist(map.next_value()?),
                        "rules" => Item::Rules(map.next_value()?),
                        _ => Item::Raw(map.next_value()?),
                    };
                    out.push((key, item));
                }
                Ok(Top(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// `Some(settings)` equal to what `config::parse_settings` gives for this text, or `None`.
/// `shared` is the same text, kept: rules may then be built when first needed
/// (`custom_rules::parse_raw`).
pub fn parse_settings(name: &str, text: &str, shared: Option<&std::sync::Arc<String>>) -> Option<FileSettings> {
    let Top(entries) = serde_json::from_str(text).ok()?;
    // A repeated key: `Value`'s map keeps the last value in the first place. Rare; not here.
    if entries.iter().enumerate().any(|(i, (k, _))| entries[..i].iter().any(|(seen, _)| seen == k)) {
        return None;
    }
    let mut s = FileSettings::default();
    for (key, item) in entries {
        match item {
            Item::Whitelist(Trimmed(items)) => s.whitelist.append(items),
            Item::Blacklist(Trimmed(items)) => s.blacklist.append(items),
            Item::Rules(items) => {
                // As `config::validate` takes a `rules` value.
                let parsed = crate::judge::custom_rules::parse_raw(name, text, &items, shared)?;
                s.rules = parsed.rules;
                s.warnings.extend(parsed.warnings);
                s.rules_broken = parsed.broken;
            }
            Item::Raw(raw) => {
                // `Value` refuses what the raw reading lets through (nesting over its limit).
                let value: Value = serde_json::from_str(raw.get()).ok()?;
                let mut one = Map::new();
                one.insert(key, value);
                crate::policy::config::validate(name, text, &one, &mut s);
            }
        }
    }
    Some(s)
}

/// A list of strings, each trimmed, when every one is a non-blank string (what `validate`
/// keeps as is). Into one buffer, borrowing from the text while reading: a 10,000-entry
/// whitelist is read on every command.
struct Trimmed(StrList);

impl<'de> Deserialize<'de> for Trimmed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Trimmed;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of non-blank strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Trimmed, A::Error> {
                let mut list = StrList::new();
                while let Some(Text(text)) = seq.next_element()? {
                    match trim(&text) {
                        "" => return Err(serde::de::Error::custom("a blank entry")),
                        t => list.push(t),
                    }
                }
                Ok(Trimmed(list))
            }
        }
        d.deserialize_seq(V)
    }
}

/// `str::trim`, answered from the two end bytes when both are visible ASCII (nearly every
/// entry of a 10,000-entry whitelist, read on every command).
fn trim(text: &str) -> &str {
    let visible = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_graphic());
    if visible(text.as_bytes().first()) && visible(text.as_bytes().last()) { text } else { text.trim() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_the_original_reading_or_declines() {
        let texts = [
            r#"{"commandWhitelist": ["ls", " npm test ", "git log"], "commandBlacklist": ["rm -rf"]}"#,
            r#"{"commandWhitelist": ["ls", 3, ""], "commandBlacklist": [""]}"#,
            r#"{"commandWhitelist": "ls", "commandBlacklist": {}}"#,
            r#"{"level": "intern", "requireCommandConfirmation": true, "confirmationTimeoutSeconds": 500,
                "commandTimeoutSeconds": 5, "colour": 1, "auditKeep": 3, "approvalQueue": true,
                "rules": [{"pattern": ["git", "push"], "decision": "deny", "reason": "no", "match": "git push"}]}"#,
            "{\n \"rules\": [{\"pattern\": [\"x\"], \"decision\": \"allow\", \"bogus\": 1}],\n \"commandWhitelist\": [\"a\\u00e9\"]}",
            r#"{"commandWhitelist": ["a"], "commandWhitelist": ["b"]}"#,
            r#"{"commandWhitelist": ["\ud800"]}"#,
            r#"{"x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
            r#"[1]"#,
            // Rules: typed where every field has its JSON type, else the `Value` reading.
            "{\"rules\": [\n  {\"pattern\": [\"git\", [\"Push\", \"fetch\"]], \"decision\": \"deny\", \"reason\": \" no \",\n   \"hasFlag\": [\"-f\"], \"anyArgMatches\": \"*.env\", \"match\": [\"git push -f a.env\"], \"notMatch\": \"git pull\"},\n  {\"pattern\": [\"np\\u006d\"], \"decision\": \"allow\", \"reason\": null, \"match\": \"npm run x\"},\n  {\"pattern\": [\"a b\"], \"decision\": \"ask\"},\n  {\"pattern\": [], \"decision\": \"allow\"},\n  {\"pattern\": [\"x\"], \"decision\": \"block\"},\n  {\"pattern\": [\"x\"], \"decision\": \"deny\", \"hasFlag\": \"force\"},\n  {\"pattern\": [[]], \"decision\": \"deny\"}]}",
            r#"{"rules": [{"pattern": ["x"], "decision": "deny", "hasFlag": 3}]}"#,
            r#"{"rules": [{"pattern": "x", "decision": "allow"}]}"#,
            r#"{"rules": [{"pattern": ["x", 1], "decision": "ask"}]}"#,
            r#"{"rules": [{"pattern": ["x"], "decision": "ask", "reason": 5}]}"#,
            r#"{"rules": [{"pattern": ["x"], "decision": "ask", "decision": "deny"}]}"#,
            r#"{"rules": [1, {"pattern": ["x"], "decision": "ask"}]}"#,
            r#"{"rules": {"pattern": ["x"]}}"#,
            r#"{"rules": []}"#,
            r#"{"commandWhitelist": ["ls",]}"#,
            "",
            "{}",
        ];
        let mut taken = 0;
        for text in texts {
            if let Some(fast) = parse_settings("t.json", text, None) {
                taken += 1;
                assert_eq!(fast, crate::policy::config::parse_settings_slowly("t.json", text), "{text}");
            }
        }
        assert!(taken >= 5, "the fast reading should take the well-formed files ({taken})");
        assert!(parse_settings("t.json", texts[9], None).is_some(), "typed rules are read the fast way");
        assert!(parse_settings("t.json", texts[4], None).is_none(), "a rule with an unknown field is declined");
        assert!(parse_settings("t.json", texts[5], None).is_none(), "a repeated key is declined");
        assert!(parse_settings("t.json", texts[1], None).is_none(), "a bad whitelist item is declined");
    }
}
