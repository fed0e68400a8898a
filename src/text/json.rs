//! A JSON string borrowed from the config text unless it has escapes (serde's own `Cow`
//! always copies): the typed config readings deserialize thousands of them per command.

use serde::de::{Deserialize, Deserializer, Visitor};
use std::fmt;

/// A string, borrowed from the text unless it has escapes (serde's own `Cow` always copies).
pub struct Text<'de>(pub std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(v.into()))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(v.to_string().into()))
            }
        }
        d.deserialize_str(V)
    }
}
