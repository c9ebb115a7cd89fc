use oversold_protocol::workshop::{Call, Counterexample};
use oversold_protocol::{ErrorCode, WireError};

use super::*;

const STARTER: &str = "local stock = tonumber(redis.call('GET', KEYS[1]) or '0')\nreturn 0\n";

fn exercise(id: &str, hints: usize) -> ExerciseInfo {
    ExerciseInfo {
        id: id.into(),
        title: format!("The {id} exercise"),
        story: "A shop.".into(),
        contract: "-- KEYS[1] the stock".into(),
        starter: STARTER.into(),
        hints: (1..=hints).map(|n| format!("hint {n}")).collect(),
    }
}

fn exercises() -> Vec<ExerciseInfo> {
    vec![exercise("reserve", 3), exercise("quantity", 2)]
}

fn line(buyer: u32, inside: bool, command: &str) -> TapeLine {
    TapeLine {
        buyer,
        inside,
        command: command.into(),
        reply: if inside { String::new() } else { "1".into() },
        stock_after: (!inside).then(|| "0".into()),
        expected: None,
    }
}

/// Two calls, each with the two commands its script ran, then a third call with none.
fn tape() -> Vec<TapeLine> {
    vec![
        line(1, false, "EVALSHA stock \"2\""),
        line(1, true, "GET stock"),
        line(1, true, "DECRBY stock 2"),
        line(2, false, "EVALSHA stock \"1\""),
        line(2, true, "GET stock"),
        line(2, true, "DECRBY stock 1"),
        line(3, false, "EVALSHA stock \"1\""),
    ]
}

fn verdict(exercise: &str, code: VerdictCode) -> SolutionVerdict {
    let passed = code == VerdictCode::Passed;
    SolutionVerdict {
        exercise: exercise.into(),
        passed,
        verdict: code,
        message: "One sentence.".into(),
        counterexample: (!passed).then(|| Counterexample {
            setup: vec!["stock = 1".into()],
            calls: vec![Call {
                buyer: 1,
                keys: vec!["stock".into()],
                args: vec!["2".into()],
            }],
            tape: tape(),
        }),
        figures: passed.then_some(Figures {
            calls: 1_200,
            calls_per_s: 14_321.4,
            longest_us: 85,
            reference_calls_per_s: 15_000.0,
            reference_longest_us: 1_260,
        }),
        took_ms: 420,
    }
}

fn workshop() -> Workshop {
    let mut w = Workshop::default();
    w.set_exercises(exercises());
    w
}

#[test]
fn every_verdict_code_has_its_own_words_in_one_place() {
    use VerdictCode::*;
    let all = [
        Passed,
        Oversold,
        WrongAnswer,
        BadInputAccepted,
        Duplicate,
        SoldTwice,
        LimitBroken,
        PartialCart,
        TooSlow,
        Killed,
        Restarted,
        Noperm,
        ScriptError,
        Crossslot,
    ];
    assert_eq!(headline(Passed), "Passed");
    assert_eq!(headline(Oversold), "Oversold");
    assert_eq!(headline(WrongAnswer), "Wrong answer");
    assert_eq!(headline(ScriptError), "Script error");
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(headline(*a), headline(*b));
        }
    }
}

#[test]
fn the_address_opens_the_workshop_on_an_exercise() {
    assert_eq!(
        from_query("?view=workshop&exercise=reserve"),
        Some(Some("reserve".into()))
    );
    assert_eq!(
        from_query("exercise=quantity&view=workshop"),
        Some(Some("quantity".into()))
    );
    assert_eq!(from_query("?view=workshop"), Some(None));
    assert_eq!(from_query("?view=workshop&exercise="), Some(None));
    assert_eq!(from_query("?view=stage"), None);
    assert_eq!(from_query("?strategy=naive&seed=3"), None);
    assert_eq!(from_query(""), None);
}

#[test]
fn an_exercise_asked_for_before_hello_opens_once_listed_and_a_wrong_one_opens_the_first() {
    let mut w = Workshop::default();
    w.open_at(Some("quantity"));
    assert!(w.open);
    assert_eq!(w.current(), None);
    assert_eq!(w.draft(), "");
    let loaded = w.loaded;
    w.set_exercises(exercises());
    assert!(w.loaded > loaded, "the editor is given the exercise's text");
    assert_eq!(w.current().map(|e| e.id.as_str()), Some("quantity"));
    assert_eq!(w.query(), "view=workshop&exercise=quantity");

    let mut w = Workshop::default();
    w.open_at(Some("teleport"));
    w.set_exercises(exercises());
    assert_eq!(w.query(), "view=workshop&exercise=reserve");
    // No exercise named: the first.
    let mut w = workshop();
    w.open_at(None);
    assert_eq!(w.current().map(|e| e.id.as_str()), Some("reserve"));
}

#[test]
fn the_editor_starts_from_the_starter_keeps_the_students_script_and_resets() {
    let mut w = workshop();
    let loaded = w.loaded;
    assert_eq!(w.draft(), STARTER);
    w.edit("return 1\n");
    assert_eq!(w.draft(), "return 1\n");
    assert_eq!(w.loaded, loaded, "typing does not redraw the editor");
    assert_eq!(
        w.book.entry("reserve").and_then(|e| e.script.as_deref()),
        Some("return 1\n")
    );
    // Another exercise has its own text; back again, the script is still there.
    w.choose("quantity");
    assert_eq!(w.draft(), STARTER);
    assert_eq!(w.loaded, loaded + 1);
    w.choose("reserve");
    assert_eq!(w.draft(), "return 1\n");
    // Typed back to the starter: nothing kept.
    w.edit(STARTER);
    assert_eq!(w.book.entry("reserve").unwrap().script, None);
    w.edit("x");
    w.reset();
    assert_eq!(w.draft(), STARTER);
    assert_eq!(w.loaded, loaded + 3);
}

#[test]
fn hints_come_one_at_a_time_and_start_over_with_each_exercise() {
    let mut w = workshop();
    for expected in [1, 2, 3, 3] {
        w.show_hint();
        assert_eq!(w.hints_shown, expected);
    }
    w.choose("quantity");
    assert_eq!(w.hints_shown, 0);
}

#[test]
fn a_check_runs_alone_and_its_verdict_moves_progress_on() {
    let mut w = workshop();
    w.edit("return 0\n");
    let req = w.begin_check().unwrap();
    assert_eq!(
        req,
        CheckRequest {
            seq: 1,
            exercise: "reserve".into(),
            source: "return 0\n".into(),
            to_room: None,
        }
    );
    assert_eq!(w.checking(), Some("reserve"));
    assert_eq!(w.begin_check(), None, "one check at a time");
    assert_eq!(w.book.progress("reserve"), Progress::NotTried);

    w.verdict(verdict("reserve", VerdictCode::Oversold));
    assert_eq!(w.checking(), None);
    assert_eq!(w.book.progress("reserve"), Progress::Tried);
    // The tape starts with its first call (and that call's commands) on screen.
    let (lines, calls) = w.on_screen().unwrap().tape();
    assert_eq!((lines.len(), calls), (3, 3));
    w.step(false);
    assert_eq!(w.on_screen().unwrap().tape().0.len(), 6);
    w.step(true);
    assert_eq!(w.on_screen().unwrap().tape().0.len(), 7);
    w.step(false);
    assert_eq!(w.on_screen().unwrap().tape().0.len(), 7);

    w.begin_check().unwrap();
    w.verdict(verdict("reserve", VerdictCode::Passed));
    assert_eq!(w.book.progress("reserve"), Progress::Passed);
    assert_eq!(w.on_screen().unwrap().tape(), (&[][..], 0));
    // A pass stays a pass.
    w.begin_check().unwrap();
    w.verdict(verdict("reserve", VerdictCode::ScriptError));
    assert_eq!(w.book.progress("reserve"), Progress::Passed);
    assert_eq!(w.book.progress("quantity"), Progress::NotTried);
    // The verdict is shown with its own exercise only.
    w.choose("quantity");
    assert_eq!(w.on_screen(), None);
    w.choose("reserve");
    assert!(w.on_screen().is_some());
}

#[test]
fn a_refusal_a_dropped_socket_or_silence_ends_the_check_in_words() {
    let mut w = workshop();
    let busy = WireError::new(ErrorCode::Busy, "The judge is busy; try again in a moment.");
    assert!(!w.error(&busy), "no check in flight: not ours");
    w.begin_check().unwrap();
    let mut of_a_run = busy.clone();
    of_a_run.run_id = Some("r1".into());
    assert!(
        !w.error(&of_a_run),
        "a run's error ends that run, not the check"
    );
    assert!(w.error(&busy));
    assert_eq!(w.checking(), None);
    assert_eq!(
        w.on_screen(),
        Some(&Outcome::NotChecked {
            exercise: "reserve".into(),
            message: "The judge is busy; try again in a moment.".into()
        })
    );
    assert_eq!(w.book.progress("reserve"), Progress::NotTried, "not a try");

    let seq = w.begin_check().unwrap().seq;
    w.give_up(seq + 1);
    assert!(w.checking().is_some(), "another check's timer");
    w.give_up(seq);
    assert!(matches!(
        w.on_screen(),
        Some(Outcome::NotChecked { message, .. }) if message == "No verdict after 60 s. Press Check to try again."
    ));

    w.begin_check().unwrap();
    w.disconnected();
    assert_eq!(w.checking(), None);
    w.begin_check().unwrap();
    w.not_sent();
    assert!(matches!(
        w.on_screen(),
        Some(Outcome::NotChecked { message, .. }) if message.starts_with("Not connected")
    ));
}

#[test]
fn a_script_over_the_judges_limit_is_not_sent() {
    assert_eq!(LIMIT, format!("{} KB", MAX_SOURCE_BYTES / 1024));
    let mut w = workshop();
    w.edit(&"-".repeat(MAX_SOURCE_BYTES + 1));
    assert_eq!(w.begin_check(), None);
    assert_eq!(w.checking(), None);
    assert!(matches!(
        w.on_screen(),
        Some(Outcome::NotChecked { message, .. })
            if message == "Your script is over 8 KB, the judge's limit: make it shorter."
    ));
    w.edit(&"-".repeat(MAX_SOURCE_BYTES));
    assert!(w.begin_check().is_some());
}

/// A file's fields, as the browser would read them.
fn fields(format: &str, exercises: &[[Option<&str>; 3]]) -> Option<Fields> {
    Some(Fields {
        format: Some(format.into()),
        exercises: exercises
            .iter()
            .map(|e| e.map(|f| f.map(Into::into)))
            .collect(),
    })
}

#[test]
fn the_book_is_written_as_json_and_read_back_from_its_fields() {
    let mut w = workshop();
    w.edit("return \"1\"\n");
    w.begin_check().unwrap();
    w.verdict(verdict("reserve", VerdictCode::Passed));
    w.choose("quantity");
    w.begin_check().unwrap();
    w.verdict(verdict("quantity", VerdictCode::Oversold));
    assert_eq!(
        w.book.to_json(),
        r#"{"format":"oversold-workshop","exercises":[{"id":"reserve","progress":"passed","script":"return \"1\"\n"},{"id":"quantity","progress":"tried"}]}"#
    );
    let read = Book::from_fields(fields(
        FORMAT,
        &[
            [Some("reserve"), Some("passed"), Some("return \"1\"\n")],
            [Some("quantity"), Some("tried"), None],
        ],
    ));
    assert_eq!(read, Ok(w.book.clone()));
    // No progress is no try yet.
    let book = Book::from_fields(fields(FORMAT, &[[Some("quantity"), None, None]])).unwrap();
    assert_eq!(book.progress("quantity"), Progress::NotTried);
}

#[test]
fn a_file_that_is_not_a_workshop_book_is_refused_in_one_sentence() {
    let not_ours = "This is not an oversold workshop file (a JSON object with \"format\": \"oversold-workshop\").";
    assert_eq!(Book::from_fields(None), Err(not_ours.into()));
    assert_eq!(
        Book::from_fields(fields("oversold-run", &[])),
        Err(not_ours.into())
    );
    assert_eq!(
        Book::from_fields(Some(Fields::default())),
        Err(not_ours.into())
    );
    let damaged = "This workshop file has an exercise with no id, an unknown progress, or a script over 8 KB (the judge's limit).";
    let big = "x".repeat(MAX_SOURCE_BYTES + 1);
    for bad in [
        [None, Some("passed"), None],
        [Some(""), None, None],
        [Some("a"), Some("won"), None],
        [Some("a"), None, Some(big.as_str())],
    ] {
        assert_eq!(
            Book::from_fields(fields(FORMAT, &[bad])),
            Err(damaged.into()),
            "{bad:?}"
        );
    }
    let many = vec![[Some("a"), None, None]; 201];
    assert_eq!(
        Book::from_fields(fields(FORMAT, &many)),
        Err("This workshop file lists more than 200 exercises.".into())
    );
    assert_eq!(
        too_big(MAX_BOOK_BYTES + 1).as_deref(),
        Some("This file is 513 KB; a workshop file is at most 512 KB.")
    );
    assert_eq!(too_big(MAX_BOOK_BYTES), None);
}

#[test]
fn an_import_keeps_the_better_progress_and_takes_the_files_scripts() {
    let mut w = workshop();
    w.begin_check().unwrap();
    w.verdict(verdict("reserve", VerdictCode::Passed));
    w.edit("mine\n");
    let loaded = w.loaded;
    let file = fields(
        FORMAT,
        &[
            [Some("reserve"), Some("tried"), None],
            [Some("quantity"), Some("tried"), Some("theirs\n")],
        ],
    );
    w.import(Ok(file));
    assert_eq!(
        w.note.as_deref(),
        Some("Imported 2 exercises from the file.")
    );
    assert_eq!(w.loaded, loaded + 1, "the editor shows what came in");
    assert_eq!(w.book.progress("reserve"), Progress::Passed);
    assert_eq!(w.draft(), "mine\n", "the file had no script for it");
    assert_eq!(w.book.progress("quantity"), Progress::Tried);
    w.choose("quantity");
    assert_eq!(w.draft(), "theirs\n");

    let before = w.book.clone();
    w.import(Ok(None));
    assert!(
        w.note
            .as_deref()
            .unwrap()
            .starts_with("This is not an oversold workshop file")
    );
    w.import(Err("The browser could not read this file.".into()));
    assert_eq!(
        w.note.as_deref(),
        Some("The browser could not read this file.")
    );
    assert_eq!(w.book, before, "a bad file changes nothing");
    assert_eq!(
        [Progress::NotTried, Progress::Tried, Progress::Passed].map(Progress::words),
        ["not tried", "tried", "passed"]
    );
}

#[test]
fn the_tape_is_shown_call_by_call_with_each_calls_commands() {
    let t = tape();
    assert_eq!(calls_in(&t), 3);
    assert_eq!(shown_lines(&t, 0).len(), 0);
    assert_eq!(shown_lines(&t, 1).len(), 3);
    assert_eq!(shown_lines(&t, 2).len(), 6);
    assert_eq!(shown_lines(&t, 3).len(), 7);
    assert_eq!(shown_lines(&t, 9).len(), 7);
    // Commands before any call (none expected) go with the first.
    let mut odd = vec![line(1, true, "GET stock")];
    odd.extend(tape());
    assert_eq!(shown_lines(&odd, 1).len(), 4);
    assert_eq!(shown_lines(&[], 1).len(), 0);
}

#[test]
fn figures_read_beside_the_references() {
    let f = verdict("reserve", VerdictCode::Passed).figures.unwrap();
    let rows = figure_rows(&f);
    assert_eq!(
        rows.map(|r| (r.label, r.yours, r.reference)),
        [
            ("Calls a second", "14,321/s".into(), "15,000/s".into()),
            ("Longest call inside Redis", "85 µs".into(), "1.3 ms".into()),
        ]
    );
}

#[test]
fn tab_indents_and_escape_then_tab_leaves() {
    assert_eq!(editor_key("Tab", false, false, false), EditorKey::Indent);
    assert_eq!(editor_key("Tab", true, false, false), EditorKey::Default);
    assert_eq!(editor_key("Tab", false, true, false), EditorKey::Default);
    assert_eq!(editor_key("Tab", false, false, true), EditorKey::Default);
    assert_eq!(editor_key("Escape", false, false, false), EditorKey::Arm);
    assert_eq!(editor_key("a", false, false, true), EditorKey::Default);
}

#[test]
fn the_gutter_numbers_every_line() {
    assert_eq!(gutter(""), "1");
    assert_eq!(gutter("a"), "1");
    assert_eq!(gutter("ab\nabcd\n"), "1\n2\n3");
}

#[test]
fn the_layer_behind_the_editor_is_its_text_escaped_with_room_for_a_last_empty_line() {
    assert_eq!(
        layer("if n < 2 then return 'a&b' end\n"),
        "if n &lt; 2 then return 'a&amp;b' end\n "
    );
    assert_eq!(layer(""), " ");
}

#[test]
fn the_list_shows_progress_escaping_the_servers_words() {
    let mut w = Workshop::default();
    let mut odd = exercise("quantity", 0);
    odd.title = "Quantities <& \"more\">".into();
    w.set_exercises(vec![exercise("reserve", 1), odd]);
    w.begin_check().unwrap();
    w.verdict(verdict("reserve", VerdictCode::Passed));
    assert_eq!(
        list_html(&w),
        "<li><button class=\"ws-ex\" id=\"ws-ex-reserve\" data-exercise=\"reserve\" data-progress=\"passed\">\
         <span>The reserve exercise</span><span class=\"ws-badge\">passed</span></button></li>\
         <li><button class=\"ws-ex\" id=\"ws-ex-quantity\" data-exercise=\"quantity\" data-progress=\"not_tried\">\
         <span>Quantities &lt;&amp; &quot;more&quot;&gt;</span><span class=\"ws-badge\">not tried</span></button></li>"
    );
}

#[test]
fn the_task_shows_the_hints_revealed_so_far() {
    let mut w = Workshop::default();
    assert_eq!(
        task_html(&w),
        "<p class=\"muted\">No exercises yet: they come with the server's greeting.</p>"
    );
    assert_eq!(hint_button(&w), ("No hints for this one", false));
    w.set_exercises(exercises());
    w.show_hint();
    assert_eq!(
        task_html(&w),
        "<h2 id=\"ws-title\">The reserve exercise</h2><p class=\"ws-story\">A shop.</p>\
         <h3>Contract</h3><pre class=\"ws-contract\" tabindex=\"0\" aria-label=\"Contract\">-- KEYS[1] the stock</pre>\
         <ol class=\"ws-hints\"><li>hint 1</li></ol>"
    );
    assert_eq!(hint_button(&w), ("Show a hint", true));
    w.show_hint();
    w.show_hint();
    assert_eq!(hint_button(&w), ("No more hints", false));
    assert!(!controls(&w).more_hints);
}

#[test]
fn the_verdict_region_says_checking_then_the_verdict_with_its_tape() {
    let mut w = workshop();
    assert_eq!(
        summary_html(&w),
        "<p class=\"muted\">Press Check: the judge's verdict appears here.</p>"
    );
    assert_eq!(details_html(&w), "");
    w.begin_check().unwrap();
    assert_eq!(
        summary_html(&w),
        "<p class=\"ws-headline\" id=\"ws-headline\" data-tone=\"wait\" data-verdict=\"checking\">Checking…</p>\
         <p>The judge is racing your script against crowds of buyers on a Redis of its own.</p>"
    );
    assert!(controls(&w).checking);
    let mut v = verdict("reserve", VerdictCode::Oversold);
    v.counterexample.as_mut().unwrap().tape[0].expected = Some("0".into());
    w.verdict(v);
    assert_eq!(
        summary_html(&w),
        "<p class=\"ws-headline\" id=\"ws-headline\" data-tone=\"bad\" data-verdict=\"oversold\">Oversold</p><p>One sentence.</p>"
    );
    assert_eq!(
        details_html(&w),
        "<h3>Before the first call</h3><ul class=\"ws-setup\"><li><code>stock = 1</code></li></ul>\
         <h3>The tape, in the order Redis ran it</h3><ol class=\"ws-tape\" id=\"ws-tape\">\
         <li class=\"ws-call\"><span class=\"ws-buyer\">buyer 1</span><code>EVALSHA stock &quot;2&quot;</code>\
         <span>→ <b>1</b></span><span class=\"ws-after\">stock after <b>0</b></span>\
         <mark class=\"ws-expected\">expected <b>0</b></mark></li>\
         <li class=\"ws-inside\"><code>GET stock</code></li>\
         <li class=\"ws-inside\"><code>DECRBY stock 2</code></li></ol>\
         <p class=\"muted\">Judged in 420 ms.</p>"
    );
    assert_eq!(
        controls(&w),
        Controls {
            checking: false,
            more_hints: true,
            tape: true,
            tape_done: false
        }
    );
    w.step(true);
    assert!(controls(&w).tape_done);
    assert_eq!(details_html(&w).matches("<li class=\"ws-").count(), 7);

    w.begin_check().unwrap();
    assert!(!controls(&w).tape, "no Step while the next check runs");
    assert_eq!(details_html(&w), "");
    w.verdict(verdict("reserve", VerdictCode::Passed));
    assert_eq!(
        summary_html(&w),
        "<p class=\"ws-headline\" id=\"ws-headline\" data-tone=\"good\" data-verdict=\"passed\">Passed</p><p>One sentence.</p>"
    );
    assert_eq!(
        details_html(&w),
        "<table class=\"ws-figures\" id=\"ws-figures\"><tr><th></th><th scope=\"col\">Yours</th><th scope=\"col\">Reference</th></tr>\
         <tr><th scope=\"row\">Calls a second</th><td>14,321/s</td><td>15,000/s</td></tr>\
         <tr><th scope=\"row\">Longest call inside Redis</th><td>85 µs</td><td>1.3 ms</td></tr></table>\
         <p class=\"muted\">Judged in 420 ms.</p>"
    );
    assert!(!controls(&w).tape);

    w.begin_check().unwrap();
    w.error(&WireError::new(ErrorCode::RateLimited, "Slow down <now>."));
    assert_eq!(
        summary_html(&w),
        "<p class=\"ws-headline\" id=\"ws-headline\" data-tone=\"warn\" data-verdict=\"not_checked\">Not checked</p><p>Slow down &lt;now&gt;.</p>"
    );
    assert_eq!(details_html(&w), "");
    w.note = Some("Bad <file>".into());
    assert_eq!(note_html(&w), "Bad &lt;file&gt;");
}

#[test]
fn every_change_goes_through_one_door() {
    let mut w = Workshop::default();
    w.act(Action::Open(Some("quantity".into())));
    w.act(Action::Load(Book {
        exercises: vec![Entry {
            id: "quantity".into(),
            progress: Progress::Tried,
            script: Some("mine".into()),
        }],
    }));
    w.set_exercises(exercises());
    assert_eq!(w.draft(), "mine");
    w.act(Action::Edit("x".into()));
    w.act(Action::Hint);
    assert_eq!((w.draft(), w.hints_shown), ("x", 1));
    w.act(Action::Choose("reserve".into()));
    w.act(Action::Reset);
    assert_eq!(w.draft(), STARTER);
    let req = w.act(Action::Check).unwrap();
    assert_eq!(w.act(Action::Check), None, "one at a time");
    w.act(Action::GiveUp(req.seq));
    assert!(w.checking().is_none());
    w.act(Action::Check).unwrap();
    w.act(Action::NotSent);
    assert!(w.checking().is_none());
    w.act(Action::Note("saved".into()));
    assert_eq!(w.note.as_deref(), Some("saved"));
    w.act(Action::Step(true));
    w.act(Action::Import(Ok(None)));
    assert!(w.note.as_deref().unwrap().starts_with("This is not"));
}

mod room {
    use oversold_protocol::ServerMessage;
    use oversold_protocol::challenge::{ChallengeEntry, ChallengeOpened, ChallengeTape};

    use super::*;
    use crate::model::workshop::challenge::{Challenge, board_html, head_html, shown_html};

    fn entry(participant: u32, nickname: &str, passed: bool, speed: Option<f64>) -> ServerMessage {
        ServerMessage::ChallengeEntry(ChallengeEntry {
            room: "ABC23".into(),
            participant,
            nickname: nickname.into(),
            passed,
            verdict: if passed {
                VerdictCode::Passed
            } else {
                VerdictCode::Oversold
            },
            calls_per_s: speed,
            took_ms: 300,
        })
    }

    fn opened(id: &str) -> ServerMessage {
        ServerMessage::ChallengeOpened(ChallengeOpened {
            room: "ABC23".into(),
            exercise: exercise(id, 1),
        })
    }

    fn in_room(presenter: bool) -> Workshop {
        let mut w = workshop();
        let query = if presenter {
            "?view=workshop&room=ABC23&as=presenter"
        } else {
            "?view=workshop&room=ABC23"
        };
        w.challenge = Challenge::from_query(query);
        w
    }

    #[test]
    fn the_address_names_the_room_and_the_presenter_and_keeps_them() {
        assert_eq!(Challenge::from_query("?view=workshop"), None);
        assert_eq!(
            Challenge::from_query("?room=<script>"),
            None,
            "not a room code"
        );
        let c = Challenge::from_query("view=workshop&room=ABC23&as=presenter").unwrap();
        assert_eq!((c.room.as_str(), c.presenter), ("ABC23", true));
        let w = in_room(false);
        assert_eq!(w.query(), "view=workshop&exercise=reserve&room=ABC23");
        assert_eq!(
            in_room(true).query(),
            "view=workshop&exercise=reserve&room=ABC23&as=presenter"
        );
    }

    #[test]
    fn an_opened_challenge_takes_the_screen_and_a_new_one_clears_the_board() {
        let mut w = in_room(false);
        w.challenge_frame(&opened("quantity"));
        assert_eq!(w.current().unwrap().id, "quantity");
        w.challenge_frame(&entry(1, "ada", true, Some(900.0)));
        // Another room's frames are not ours.
        let mut other = entry(2, "eve", true, Some(1.0));
        if let ServerMessage::ChallengeEntry(e) = &mut other {
            e.room = "ZZZ99".into();
        }
        w.challenge_frame(&other);
        assert_eq!(w.challenge.as_ref().unwrap().entries.len(), 1);
        // The same exercise again (a late join's catch-up) keeps the board; another clears it.
        w.challenge_frame(&opened("quantity"));
        assert_eq!(w.challenge.as_ref().unwrap().entries.len(), 1);
        w.challenge_frame(&opened("reserve"));
        assert!(w.challenge.as_ref().unwrap().entries.is_empty());
        assert_eq!(w.current().unwrap().id, "reserve");
    }

    #[test]
    fn the_board_ranks_passes_by_speed_then_the_rest_and_escapes_nicknames() {
        let mut w = in_room(true);
        w.challenge_frame(&opened("reserve"));
        w.challenge_frame(&entry(1, "slow", true, Some(100.0)));
        w.challenge_frame(&entry(2, "<b>bob</b>", false, None));
        w.challenge_frame(&entry(3, "fast", true, Some(5000.0)));
        // A resubmission replaces its participant's entry.
        w.challenge_frame(&entry(2, "<b>bob</b>", true, Some(200.0)));
        let c = w.challenge.as_ref().unwrap();
        let order: Vec<u32> = c.ranked().iter().map(|e| e.participant).collect();
        assert_eq!(order, [3, 2, 1]);
        let html = board_html(c);
        assert!(html.contains("&lt;b&gt;bob&lt;/b&gt;"), "{html}");
        assert!(!html.contains("<b>bob"));
        assert_eq!(
            html.matches("data-act=\"show\"").count(),
            3,
            "the presenter can show each"
        );
        let mut seat = c.clone();
        seat.presenter = false;
        assert!(
            !board_html(&seat).contains("data-act"),
            "a participant cannot"
        );
        assert!(head_html(c, "http://x").contains("Room ABC23: The reserve exercise"));
    }

    #[test]
    fn a_submission_needs_a_nickname_and_the_open_exercise() {
        let mut w = in_room(false);
        assert_eq!(
            w.act(Action::Submit("ada".into())),
            None,
            "nothing open yet"
        );
        assert!(w.room_note.as_deref().unwrap().contains("another exercise"));
        w.challenge_frame(&opened("reserve"));
        assert_eq!(w.room_note, None);
        assert_eq!(w.act(Action::Submit("   ".into())), None);
        assert!(
            w.room_note
                .as_deref()
                .unwrap()
                .starts_with("Pick a nickname")
        );
        let long = "x".repeat(25);
        assert_eq!(w.act(Action::Submit(long)), None);
        let req = w.act(Action::Submit(" ada ".into())).unwrap();
        assert_eq!(req.to_room, Some(("ABC23".into(), "ada".into())));
        assert_eq!(w.checking(), Some("reserve"));
        // Its verdict lands like a check's.
        w.verdict(verdict("reserve", VerdictCode::Passed));
        assert_eq!(w.book.progress("reserve"), Progress::Passed);
        // Not in a room: no submission.
        let mut alone = workshop();
        assert_eq!(alone.act(Action::Submit("ada".into())), None);
    }

    #[test]
    fn the_shown_tape_names_its_author_and_shows_every_call() {
        let mut w = in_room(false);
        w.challenge_frame(&opened("reserve"));
        let v = verdict("reserve", VerdictCode::Oversold);
        w.challenge_frame(&ServerMessage::ChallengeTape(ChallengeTape {
            room: "ABC23".into(),
            participant: 4,
            nickname: "<i>eve</i>".into(),
            verdict: v.clone(),
        }));
        let html = shown_html(w.challenge.as_ref().unwrap());
        assert!(html.contains("&lt;i&gt;eve&lt;/i&gt;'s script"), "{html}");
        let calls = calls_in(&v.counterexample.unwrap().tape);
        assert_eq!(html.matches("class=\"ws-call\"").count(), calls);
    }
}
