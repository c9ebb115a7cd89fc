//! Keys `1`–`4` press buyer 1–4's button while step mode is open, the way a speaker clicks
//! through slides; never while the visitor types in a field, nor with a modifier held (so
//! browser shortcuts like Ctrl+1 still switch tabs).

/// Where a key press came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Press<'a> {
    /// `KeyboardEvent.key`, e.g. `"1"`.
    pub key: &'a str,
    /// Ctrl, Alt or Meta held.
    pub modifier: bool,
    /// The focus is in a text field, a select or an editable element.
    pub typing: bool,
    /// The key is being held down (auto-repeat).
    pub repeat: bool,
}

/// The buyer a press moves, if any, in a session of `buyers` buyers.
pub fn buyer_for(press: Press<'_>, buyers: usize) -> Option<u32> {
    if press.modifier || press.typing || press.repeat {
        return None;
    }
    let n: u32 = press.key.parse().ok()?;
    (1..=buyers as u32).contains(&n).then_some(n)
}

/// True for the tag names of elements that take typing (`INPUT`, `TEXTAREA`, `SELECT`).
pub fn takes_typing(tag: &str) -> bool {
    matches!(tag, "INPUT" | "TEXTAREA" | "SELECT")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_move_buyers_unless_typing_or_holding_a_modifier() {
        let key = |key| Press {
            key,
            ..Press::default()
        };
        assert_eq!(buyer_for(key("1"), 2), Some(1));
        assert_eq!(buyer_for(key("2"), 2), Some(2));
        assert_eq!(
            buyer_for(key("3"), 2),
            None,
            "only as many as there are buyers"
        );
        assert_eq!(buyer_for(key("4"), 4), Some(4));
        assert_eq!(buyer_for(key("0"), 4), None);
        assert_eq!(buyer_for(key("a"), 4), None);
        let typing = Press {
            typing: true,
            ..key("1")
        };
        assert_eq!(buyer_for(typing, 2), None);
        let ctrl = Press {
            modifier: true,
            ..key("1")
        };
        assert_eq!(buyer_for(ctrl, 2), None);
        let held = Press {
            repeat: true,
            ..key("1")
        };
        assert_eq!(
            buyer_for(held, 2),
            None,
            "holding a key sends one command, not dozens"
        );
        assert!(takes_typing("INPUT") && takes_typing("SELECT") && !takes_typing("BUTTON"));
    }
}
