//! A unit enum on the wire is its name, a string: `"sold_out"`. serde's derive writes a reader
//! per enum that also accepts an index and a one-key object, about a kilobyte and a half of a
//! page's wasm each; [`wire_names!`] lists each enum's names once and reads every enum with
//! one shared reader, [`read`], that accepts the string only (all a frame ever carries).

use std::fmt;

use serde::de::{Deserializer, Error, Visitor};

/// `Serialize` and `Deserialize` for a unit enum, as the names given here, plus
/// `WIRE_NAMES` (every name, in order), `as_str()` and `from_wire_name()`. The match in `as_str` is
/// exhaustive, so a variant added without a name does not compile.
macro_rules! wire_names {
    ($ty:ident { $($variant:ident = $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every variant's name on the wire, in declaration order.
            pub const WIRE_NAMES: &'static [&'static str] = &[$($name),+];

            /// The variant named `name` on the wire, if there is one.
            pub fn from_wire_name(name: &str) -> Option<Self> {
                let index = Self::WIRE_NAMES.iter().position(|n| *n == name)?;
                Some(Self::IN_WIRE_ORDER[index])
            }

            /// Every variant, in the order of [`Self::WIRE_NAMES`].
            const IN_WIRE_ORDER: &'static [$ty] = &[$($ty::$variant),+];

            /// This variant's name on the wire, e.g. `"sold_out"`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::wire_names::read(deserializer, Self::WIRE_NAMES)
                    .map(|i| Self::IN_WIRE_ORDER[i])
            }
        }
    };
}

pub(crate) use wire_names;

/// The index in `names` of the string `deserializer` holds; an unknown name is serde's
/// "unknown variant" error, listing the names.
pub(crate) fn read<'de, D: Deserializer<'de>>(
    deserializer: D,
    names: &'static [&'static str],
) -> Result<usize, D::Error> {
    deserializer.deserialize_str(NameIn(names))
}

struct NameIn(&'static [&'static str]);

impl<'de> Visitor<'de> for NameIn {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "one of {:?}", self.0)
    }

    fn visit_str<E: Error>(self, name: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|n| *n == name)
            .ok_or_else(|| E::unknown_variant(name, self.0))
    }
}

#[cfg(test)]
mod tests {
    use crate::{ErrorCode, OutcomeResult, checkout::StepOutcome, eviction::EvictionPolicy};

    #[test]
    fn a_name_reads_back_as_its_variant_and_nothing_else_reads() {
        assert_eq!(
            serde_json::to_string(&OutcomeResult::SoldOut).unwrap(),
            "\"sold_out\""
        );
        let read: OutcomeResult = serde_json::from_str("\"sold_out\"").unwrap();
        assert_eq!(read, OutcomeResult::SoldOut);
        assert_eq!(
            serde_json::from_str::<EvictionPolicy>("\"allkeys-lru\"").unwrap(),
            EvictionPolicy::AllkeysLru
        );
        let unknown = serde_json::from_str::<ErrorCode>("\"teapot\"").unwrap_err();
        assert!(
            unknown
                .to_string()
                .starts_with("unknown variant `teapot`, expected one of `bad_json`"),
            "{unknown}"
        );
        assert!(serde_json::from_str::<OutcomeResult>("1").is_err());
        assert!(serde_json::from_str::<OutcomeResult>("{\"sold_out\":null}").is_err());
        // Through serde's buffered path too (an internally tagged enum, a flattened struct).
        let value = serde_json::json!({"x": "held"});
        #[derive(serde::Deserialize)]
        struct Holder {
            x: StepOutcome,
        }
        assert_eq!(
            serde_json::from_value::<Holder>(value).unwrap().x,
            StepOutcome::Held
        );
    }
}
