//! Reading a check's tape from `MONITOR`: every command Redis ran, in the order it ran
//! them, with the client that sent it (`127.0.0.1:PORT`, or `lua` for a command a script
//! ran). The judge tells its connections apart by a marker each sends first (`PING app-K`),
//! and ends a crowd's tape with a marker of its own.

/// One line of `MONITOR` output: who ran it and the command's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `127.0.0.1:PORT`, or `lua` for a command run by a script.
    pub client: String,
    /// The command and its arguments, unquoted.
    pub words: Vec<String>,
}

impl Line {
    /// The command's name, upper case.
    pub fn command(&self) -> String {
        self.words
            .first()
            .map(|w| w.to_ascii_uppercase())
            .unwrap_or_default()
    }

    /// True for a script's own command.
    pub fn is_inside_script(&self) -> bool {
        self.client == "lua"
    }
}

/// Parse `1733072000.123456 [0 127.0.0.1:50000] "GET" "k"`. `None` for anything else.
pub fn parse(line: &str) -> Option<Line> {
    let open = line.find('[')?;
    let close = open + line[open..].find(']')?;
    let inside = &line[open + 1..close];
    let client = inside.split_whitespace().nth(1)?.to_string();
    let words = unquote_all(&line[close + 1..])?;
    Some(Line { client, words })
}

/// The quoted words of a `MONITOR` line (`"a" "b\"c" "\x00"`).
fn unquote_all(rest: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        match chars.next() {
            None => return Some(words),
            Some('"') => {}
            Some(_) => return None,
        }
        let mut word = String::new();
        loop {
            match chars.next()? {
                '"' => break,
                '\\' => match chars.next()? {
                    'n' => word.push('\n'),
                    'r' => word.push('\r'),
                    't' => word.push('\t'),
                    'a' => word.push('\u{7}'),
                    'b' => word.push('\u{8}'),
                    'x' => {
                        let hex: String = [chars.next()?, chars.next()?].iter().collect();
                        word.push(char::from(u8::from_str_radix(&hex, 16).ok()?));
                    }
                    other => word.push(other),
                },
                c => word.push(c),
            }
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_lines_parse_with_their_quoting() {
        let l =
            parse(r#"1733072000.123456 [0 127.0.0.1:50000] "EVALSHA" "ab" "1" "k" "2""#).unwrap();
        assert_eq!(l.client, "127.0.0.1:50000");
        assert_eq!(l.words, ["EVALSHA", "ab", "1", "k", "2"]);
        let l = parse(r#"1.5 [0 lua] "SET" "k" "a \"b\"\x41\n""#).unwrap();
        assert!(l.is_inside_script());
        assert_eq!(l.words, ["SET", "k", "a \"b\"A\n"]);
        assert_eq!(parse("OK"), None);
        assert_eq!(parse(r#"1 [0 lua] "unterminated"#), None);
    }
}
