//! A room's workshop challenge as the workshop page sees it (`/?view=workshop&room=CODE`, and
//! `&as=presenter` on the projector): the exercise the presenter opened, the leaderboard (each
//! participant's latest submission), and the submission whose tape the presenter put on every
//! screen. The frames are `challenge_opened`, `challenge_entry` and `challenge_tape`; a late
//! joiner gets the first two again, so this state is rebuilt from them after a reload.
//!
//! Plain Rust, with its markup (escaped, like the rest of the workshop's): the page sets it.

use std::cmp::Ordering;

use oversold_protocol::ServerMessage;
use oversold_protocol::challenge::{ChallengeEntry, ChallengeTape, MAX_NICKNAME_CHARS};
use oversold_protocol::room::is_room_code;
use oversold_protocol::workshop::ExerciseInfo;

use super::{calls_in, fill, headline, shown_lines, tape_row};
use crate::model::text::per_second;

/// Most entries the leaderboard keeps (the server keeps one per seat; a room has a few hundred).
const MAX_ENTRIES: usize = 500;

/// This page's place in a room's challenge.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Challenge {
    /// The room's code.
    pub room: String,
    /// The page asked to present (the projector): it opens exercises and shows tapes.
    pub presenter: bool,
    /// The exercise the presenter opened, once one is.
    pub exercise: Option<ExerciseInfo>,
    /// Each participant's latest submission, in the order they first submitted.
    pub entries: Vec<ChallengeEntry>,
    /// The submission on every screen.
    pub shown: Option<ChallengeTape>,
}

impl Challenge {
    /// The challenge an address asks for: `room=CODE` (a valid code), presenting with
    /// `as=presenter`.
    pub fn from_query(query: &str) -> Option<Challenge> {
        let query = query.strip_prefix('?').unwrap_or(query);
        let mut room = None;
        let mut presenter = false;
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some(("room", code)) if is_room_code(code) => room = Some(code.to_string()),
                Some(("as", "presenter")) => presenter = true,
                _ => {}
            }
        }
        Some(Challenge {
            room: room?,
            presenter,
            ..Challenge::default()
        })
    }

    /// The address's part for it: `&room=CODE` (and `&as=presenter`).
    pub fn query(&self) -> String {
        let role = if self.presenter { "&as=presenter" } else { "" };
        format!("&room={}{role}", self.room)
    }

    /// Fold a frame in; returns the exercise to put on screen when the challenge opened one.
    /// Frames about another room are ignored.
    pub fn apply(&mut self, msg: &ServerMessage) -> Option<String> {
        match msg {
            ServerMessage::ChallengeOpened(o) if o.room == self.room => {
                let new = self.exercise.as_ref().is_none_or(|e| e.id != o.exercise.id);
                if new {
                    self.entries.clear();
                    self.shown = None;
                }
                self.exercise = Some(o.exercise.clone());
                Some(o.exercise.id.clone())
            }
            ServerMessage::ChallengeEntry(e) if e.room == self.room => {
                let kept = self
                    .entries
                    .iter()
                    .position(|x| x.participant == e.participant);
                match kept {
                    Some(at) => self.entries[at] = e.clone(),
                    None if self.entries.len() < MAX_ENTRIES => self.entries.push(e.clone()),
                    None => {}
                }
                None
            }
            ServerMessage::ChallengeTape(t) if t.room == self.room => {
                self.shown = Some(t.clone());
                None
            }
            _ => None,
        }
    }

    /// The leaderboard's order: passes first, fastest first; then the rest, in the order they
    /// first submitted.
    pub fn ranked(&self) -> Vec<&ChallengeEntry> {
        let mut ranked: Vec<&ChallengeEntry> = self.entries.iter().collect();
        ranked.sort_by(|a, b| match (a.passed, b.passed) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (true, true) => {
                let speed = |e: &ChallengeEntry| e.calls_per_s.unwrap_or(0.0);
                speed(b).total_cmp(&speed(a))
            }
            (false, false) => Ordering::Equal,
        });
        ranked
    }
}

/// Why a nickname cannot be sent, in the words the room panel shows; `Ok` with it trimmed.
pub fn nickname(raw: &str) -> Result<String, String> {
    oversold_protocol::challenge::check_nickname(raw).map_err(|_| {
        format!("Pick a nickname of 1 to {MAX_NICKNAME_CHARS} characters: the projector shows it.")
    })
}

/// The room panel's heading: which room, what it is racing.
pub fn head_html(c: &Challenge, origin: &str) -> String {
    let mut out = String::new();
    let what = c
        .exercise
        .as_ref()
        .map_or("no exercise open yet", |e| e.title.as_str());
    let role = if c.presenter {
        "presenting"
    } else {
        "taking part"
    };
    fill(
        &mut out,
        "<h2 id=\"ws-room-title\">Room \u{1}: \u{1}</h2><p class=\"muted\">You are \u{1}. Laptops join at <code>\u{1}/?view=workshop&amp;room=\u{1}</code></p>",
        &[&c.room, what, role, origin, &c.room],
    );
    out
}

/// The leaderboard: rank, nickname, verdict, throughput, and (for the presenter) a button that
/// puts a submission's tape on every screen.
pub fn board_html(c: &Challenge) -> String {
    let mut out = String::new();
    if c.entries.is_empty() {
        out.push_str("<p class=\"muted\" id=\"ws-board-empty\">No submissions yet.</p>");
        return out;
    }
    out.push_str("<table class=\"ws-board\" id=\"ws-board-table\"><tr><th scope=\"col\">#</th><th scope=\"col\">Nickname</th><th scope=\"col\">Verdict</th><th scope=\"col\">Calls a second</th>");
    if c.presenter {
        out.push_str("<th scope=\"col\"><span class=\"sr-only\">Projector</span></th>");
    }
    out.push_str("</tr>");
    for (i, e) in c.ranked().into_iter().enumerate() {
        let speed = e.calls_per_s.map(per_second).unwrap_or_default();
        fill(
            &mut out,
            "<tr data-participant=\"\u{1}\" data-passed=\"\u{1}\"><td>\u{1}</td><td class=\"ws-nick\">\u{1}</td><td data-verdict=\"\u{1}\">\u{1}</td><td>\u{1}</td>",
            &[
                &e.participant.to_string(),
                if e.passed { "true" } else { "false" },
                &(i + 1).to_string(),
                &e.nickname,
                e.verdict.as_str(),
                headline(e.verdict),
                &speed,
            ],
        );
        if c.presenter {
            fill(
                &mut out,
                "<td><button class=\"link\" data-act=\"show\" data-participant=\"\u{1}\">Show on every screen</button></td>",
                &[&e.participant.to_string()],
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// The submission the presenter put on every screen: whose, its verdict, and its whole tape.
pub fn shown_html(c: &Challenge) -> String {
    let mut out = String::new();
    let Some(t) = &c.shown else {
        return out;
    };
    let v = &t.verdict;
    fill(
        &mut out,
        "<h3 id=\"ws-shown-title\">On every screen: \u{1}'s script</h3><p class=\"ws-headline\" data-tone=\"\u{1}\">\u{1}</p><p>\u{1}</p>",
        &[
            &t.nickname,
            if v.passed { "good" } else { "bad" },
            headline(v.verdict),
            &v.message,
        ],
    );
    if let Some(ce) = &v.counterexample {
        out.push_str("<ol class=\"ws-tape\" id=\"ws-shown-tape\">");
        for l in shown_lines(&ce.tape, calls_in(&ce.tape)) {
            tape_row(&mut out, l);
        }
        out.push_str("</ol>");
    }
    out
}
