//! The workshop: Lua exercises the server judges (`check_solution`, answered by one
//! `solution_verdict` or one `error`), and everything the page keeps about them: the exercise
//! on screen, the student's scripts and progress ([`Book`], kept in this browser only and
//! carried between browsers as a file), the hints shown, the check in flight, and the verdict
//! with its counterexample's tape revealed call by call.
//!
//! Plain Rust: `components/workshop.rs` only draws it, and `session.rs` only routes frames in.
//! The words for each verdict code live here and nowhere else ([`headline`]); the server's
//! sentence under them says what happened.
//!
//! Rules, in short: one check at a time; a verdict updates its exercise's progress (a pass
//! stays passed, whatever later checks say); an `error` frame without a run id, while a check
//! is in flight, is that check's answer; a dropped socket or [`GIVE_UP_MS`] without an answer
//! ends the check with a sentence saying so.

use oversold_protocol::workshop::{
    ExerciseInfo, Figures, MAX_SOURCE_BYTES, SolutionVerdict, TapeLine, VerdictCode,
};
use oversold_protocol::{ServerMessage, WireError};

use super::text::{micros, per_second};

pub mod challenge;

use challenge::Challenge;

/// Where this browser keeps the [`Book`] (localStorage).
pub const BOOK_KEY: &str = "oversold.workshop";
/// The `format` of a workshop file: what Export writes and Import expects.
pub const FORMAT: &str = "oversold-workshop";
/// Files past this size are refused before reading: six exercises' scripts at the judge's
/// limit are 48 KiB.
pub const MAX_BOOK_BYTES: usize = 512 * 1024;
/// A file listing more exercises than this is not one of ours.
const MAX_ENTRIES: usize = 200;
/// A check unanswered for this long is given up (the judge takes 0.1 to 3 s).
pub const GIVE_UP_MS: u32 = 60_000;
/// The judge's limit on a script ([`MAX_SOURCE_BYTES`]) in words (a test keeps them equal).
const LIMIT: &str = "8 KB";
/// The file Export offers.
pub const FILE_NAME: &str = "oversold-workshop.json";

/// How far the student got with one exercise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Progress {
    /// Never checked.
    #[default]
    NotTried,
    /// Checked, never passed.
    Tried,
    /// Passed at least once.
    Passed,
}

impl Progress {
    /// As the list says it (and its `data-progress` attribute, with `_` for the space).
    pub fn words(self) -> &'static str {
        match self {
            Progress::NotTried => "not tried",
            Progress::Tried => "tried",
            Progress::Passed => "passed",
        }
    }

    /// The list's `data-progress` value, and the file's.
    pub fn id(self) -> &'static str {
        match self {
            Progress::NotTried => "not_tried",
            Progress::Tried => "tried",
            Progress::Passed => "passed",
        }
    }

    /// Read back from [`Progress::id`] (absent: not tried).
    fn from_id(id: Option<&str>) -> Option<Progress> {
        match id {
            None | Some("not_tried") => Some(Progress::NotTried),
            Some("tried") => Some(Progress::Tried),
            Some("passed") => Some(Progress::Passed),
            Some(_) => None,
        }
    }
}

/// One exercise in the [`Book`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// The exercise's id.
    pub id: String,
    /// How far the student got.
    pub progress: Progress,
    /// The student's script, when it is not the starter.
    pub script: Option<String>,
}

/// What the browser keeps about the workshop, and what Export writes: each exercise's progress
/// and script. No account: the file is how a student moves to another browser.
///
/// ```json
/// {"format":"oversold-workshop","exercises":[{"id":"reserve","progress":"passed","script":"…"}]}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Book {
    /// The exercises the student touched, in the order they first did.
    pub exercises: Vec<Entry>,
}

/// A workshop file's fields, as the browser's JSON parser found them (`components/workshop.rs`
/// reads them; a JSON reader in the wasm cost the page more than its size budget had left).
/// A field that is absent, or not a string, is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    /// `format`.
    pub format: Option<String>,
    /// `exercises`, each with its `id`, `progress` and `script`.
    pub exercises: Vec<[Option<String>; 3]>,
}

impl Book {
    /// Check a file's fields (`None`: the text was not JSON, or not an object) and make a book
    /// of them; `Err` is the sentence to show.
    pub fn from_fields(fields: Option<Fields>) -> Result<Book, String> {
        let fields = fields.filter(|f| f.format.as_deref() == Some(FORMAT)).ok_or_else(|| {
            format!("This is not an oversold workshop file (a JSON object with \"format\": \"{FORMAT}\").")
        })?;
        if fields.exercises.len() > MAX_ENTRIES {
            return Err(format!(
                "This workshop file lists more than {MAX_ENTRIES} exercises."
            ));
        }
        let mut book = Book::default();
        for [id, progress, script] in fields.exercises {
            let progress = Progress::from_id(progress.as_deref());
            let too_long = script.as_ref().is_some_and(|s| s.len() > MAX_SOURCE_BYTES);
            match (id, progress) {
                (Some(id), Some(progress)) if !id.is_empty() && !too_long => {
                    book.exercises.push(Entry {
                        id,
                        progress,
                        script,
                    });
                }
                _ => {
                    return Err(format!(
                        "This workshop file has an exercise with no id, an unknown progress, or a script over {LIMIT} (the judge's limit)."
                    ));
                }
            }
        }
        Ok(book)
    }

    /// As JSON, for localStorage and for Export (written by hand: a serializer derived for it
    /// would cost the page more than these lines; the strings are escaped by serde_json, which
    /// the socket already carries).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"format\":\"oversold-workshop\",\"exercises\":[");
        for (i, e) in self.exercises.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"id\":");
            out.push_str(&json_string(&e.id));
            out.push_str(",\"progress\":\"");
            out.push_str(e.progress.id());
            out.push('"');
            if let Some(script) = &e.script {
                out.push_str(",\"script\":");
                out.push_str(&json_string(script));
            }
            out.push('}');
        }
        out.push_str("]}");
        out
    }

    /// The entry for `id`, if the student touched it.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.exercises.iter().find(|e| e.id == id)
    }

    /// The entry for `id`, made when missing.
    fn entry_mut(&mut self, id: &str) -> &mut Entry {
        let at = match self.exercises.iter().position(|e| e.id == id) {
            Some(at) => at,
            None => {
                self.exercises.push(Entry {
                    id: id.to_string(),
                    ..Entry::default()
                });
                self.exercises.len() - 1
            }
        };
        &mut self.exercises[at]
    }

    /// How far the student got with `id`.
    pub fn progress(&self, id: &str) -> Progress {
        self.entry(id).map_or(Progress::NotTried, |e| e.progress)
    }

    /// Fold an imported book in: each exercise keeps the better progress of the two, and takes
    /// the file's script when the file has one. Returns how many exercises the file held.
    pub fn merge(&mut self, other: Book) -> usize {
        let n = other.exercises.len();
        for theirs in other.exercises {
            let ours = self.entry_mut(&theirs.id);
            ours.progress = ours.progress.max(theirs.progress);
            if theirs.script.is_some() {
                ours.script = theirs.script;
            }
        }
        n
    }
}

/// `text` as a JSON string, quotes and escapes included.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// Why a file of `bytes` is refused unread, when it is over [`MAX_BOOK_BYTES`].
pub fn too_big(bytes: usize) -> Option<String> {
    (bytes > MAX_BOOK_BYTES).then(|| {
        format!(
            "This file is {} KB; a workshop file is at most {} KB.",
            bytes.div_ceil(1024),
            MAX_BOOK_BYTES / 1024
        )
    })
}

/// The verdict region's content, for one exercise.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The judge's answer, with how many of its tape's calls are shown so far.
    Verdict {
        /// As the server sent it.
        verdict: SolutionVerdict,
        /// Calls of the counterexample's tape on screen (each with its inner commands).
        shown: usize,
    },
    /// No verdict: the server refused the check (an `error` frame), or never answered.
    NotChecked {
        /// The exercise the check was for.
        exercise: String,
        /// Why, in one sentence.
        message: String,
    },
}

impl Outcome {
    /// The exercise it is about.
    pub fn exercise(&self) -> &str {
        match self {
            Outcome::Verdict { verdict, .. } => &verdict.exercise,
            Outcome::NotChecked { exercise, .. } => exercise,
        }
    }

    /// The counterexample's tape lines on screen, and how many calls the whole tape has.
    pub fn tape(&self) -> (&[TapeLine], usize) {
        match self {
            Outcome::Verdict {
                verdict:
                    SolutionVerdict {
                        counterexample: Some(c),
                        ..
                    },
                shown,
            } => (shown_lines(&c.tape, *shown), calls_in(&c.tape)),
            _ => (&[], 0),
        }
    }
}

/// A check to send: `check_solution` with these fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRequest {
    /// Which check this is ([`Workshop::give_up`] names it).
    pub seq: u32,
    /// The exercise's id.
    pub exercise: String,
    /// The script.
    pub source: String,
    /// Submitted to a room's challenge instead (`submit_challenge`): the room and nickname.
    pub to_room: Option<(String, String)>,
}

/// What the student (or the page, for them) does: every change the view asks of the state,
/// through [`Workshop::act`]. One door, so the page carries one way of making a change.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// The book this browser kept, read at start.
    Load(Book),
    /// The address opens the view (on this exercise, if it names one).
    Open(Option<String>),
    /// Put this exercise on screen.
    Choose(String),
    /// The editor's whole text, after a key.
    Edit(String),
    /// Back to the starter script.
    Reset,
    /// One more hint.
    Hint,
    /// One more call of the tape (`true`: all of them).
    Step(bool),
    /// Start a check (answered by the request to send, if one may go).
    Check,
    /// Submit the editor's script to the room's challenge under this nickname (answered like
    /// [`Action::Check`]).
    Submit(String),
    /// The check could not be sent.
    NotSent,
    /// Check this long unanswered: give up.
    GiveUp(u32),
    /// A sentence for the Export/Import line.
    Note(String),
    /// A file to import: its fields, or why it could not be read.
    Import(Result<Option<Fields>, String>),
}

/// The workshop's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workshop {
    /// The page has opened (the address read): the chosen exercise settles from here on.
    pub open: bool,
    /// The exercises, as `hello` lists them.
    pub exercises: Vec<ExerciseInfo>,
    /// Progress and scripts, as this browser keeps them.
    pub book: Book,
    /// Bumped whenever the editor's text is replaced from outside (another exercise, Reset,
    /// Import), so the editor redraws with [`Workshop::draft`]; typing does not bump it.
    pub loaded: u32,
    /// Hints of the exercise on screen revealed so far.
    pub hints_shown: usize,
    /// The verdict region's content (shown only for its own exercise).
    pub outcome: Option<Outcome>,
    /// What the last Import or Export did, in one sentence.
    pub note: Option<String>,
    /// The room's challenge, when the address named a room.
    pub challenge: Option<Challenge>,
    /// Why the last submission to the room could not go, in one sentence.
    pub room_note: Option<String>,
    /// The chosen exercise's id: possibly one the address asked for before `hello` listed any.
    chosen: Option<String>,
    /// The check in flight: its number and exercise.
    checking: Option<(u32, String)>,
    /// The last check's number.
    seq: u32,
}

impl Workshop {
    /// Do `action`; a check to send comes back from [`Action::Check`].
    pub fn act(&mut self, action: Action) -> Option<CheckRequest> {
        match action {
            Action::Load(book) => self.book = book,
            Action::Open(exercise) => self.open_at(exercise.as_deref()),
            Action::Choose(id) => self.choose(&id),
            Action::Edit(text) => self.edit(&text),
            Action::Reset => self.reset(),
            Action::Hint => self.show_hint(),
            Action::Step(all) => self.step(all),
            Action::Check => return self.begin_check(),
            Action::Submit(nickname) => return self.submit(&nickname),
            Action::NotSent => self.not_sent(),
            Action::GiveUp(seq) => self.give_up(seq),
            Action::Note(note) => self.note = Some(note),
            Action::Import(file) => self.import(file),
        }
        None
    }

    /// Open the view, on `exercise` when the address names one.
    pub fn open_at(&mut self, exercise: Option<&str>) {
        self.open = true;
        if let Some(id) = exercise {
            self.choose(id);
        }
        self.settle();
    }

    /// `hello` listed the exercises: the editor shows the chosen one's text from now on.
    pub fn set_exercises(&mut self, exercises: Vec<ExerciseInfo>) {
        self.exercises = exercises;
        self.loaded += 1;
        self.settle();
    }

    /// A chosen id no exercise has (a mistyped link, or none yet) becomes the first exercise.
    fn settle(&mut self) {
        if self.exercises.is_empty() || self.current().is_some() {
            return;
        }
        self.chosen = Some(self.exercises[0].id.clone());
        self.hints_shown = 0;
        self.loaded += 1;
    }

    /// Put exercise `id` on screen.
    pub fn choose(&mut self, id: &str) {
        if self.chosen.as_deref() == Some(id) {
            return;
        }
        self.chosen = Some(id.to_string());
        self.hints_shown = 0;
        self.loaded += 1;
    }

    /// The exercise on screen; `None` before `hello` (or from a server with none).
    pub fn current(&self) -> Option<&ExerciseInfo> {
        let id = self.chosen.as_deref()?;
        self.exercises.iter().find(|e| e.id == id)
    }

    /// The address that opens the view as it is: `view=workshop&exercise=ID`, and the room's
    /// part when in one.
    pub fn query(&self) -> String {
        let mut query = match &self.chosen {
            Some(id) => format!("view=workshop&exercise={id}"),
            None => "view=workshop".to_string(),
        };
        if let Some(c) = &self.challenge {
            query.push_str(&c.query());
        }
        query
    }

    /// A room's challenge frame: kept, and the exercise it opened put on screen.
    pub fn challenge_frame(&mut self, msg: &ServerMessage) {
        let opened = self.challenge.as_mut().and_then(|c| c.apply(msg));
        if let Some(id) = opened {
            self.choose(&id);
            self.room_note = None;
        }
    }

    /// Submit the editor's script to the room's open challenge, as `nickname`.
    pub fn submit(&mut self, nickname: &str) -> Option<CheckRequest> {
        let (room, opened) = match &self.challenge {
            Some(c) => (c.room.clone(), c.exercise.as_ref().map(|e| e.id.clone())),
            None => return None,
        };
        let nickname = match challenge::nickname(nickname) {
            Ok(name) => name,
            Err(why) => {
                self.room_note = Some(why);
                return None;
            }
        };
        if opened.is_none_or(|id| self.current().is_none_or(|e| e.id != id)) {
            self.room_note = Some(
                "The room's challenge is another exercise (or none is open yet): submit that one."
                    .into(),
            );
            return None;
        }
        self.room_note = None;
        let mut req = self.begin_check()?;
        req.to_room = Some((room, nickname));
        Some(req)
    }

    /// The editor's text: the student's script, else the starter.
    pub fn draft(&self) -> &str {
        let Some(ex) = self.current() else { return "" };
        self.book
            .entry(&ex.id)
            .and_then(|e| e.script.as_deref())
            .unwrap_or(&ex.starter)
    }

    /// The student typed: `text` is the editor's whole text.
    pub fn edit(&mut self, text: &str) {
        let Some(ex) = self.current() else { return };
        let (id, starter) = (ex.id.clone(), text == ex.starter);
        let entry = self.book.entry_mut(&id);
        entry.script = (!starter).then(|| text.to_string());
    }

    /// Back to the starter script (the progress stays).
    pub fn reset(&mut self) {
        if let Some(id) = self.current().map(|e| e.id.clone()) {
            self.book.entry_mut(&id).script = None;
            self.loaded += 1;
        }
    }

    /// Reveal one more hint.
    pub fn show_hint(&mut self) {
        let n = self.current().map_or(0, |e| e.hints.len());
        self.hints_shown = (self.hints_shown + 1).min(n);
    }

    /// True while a check of the exercise on screen is in flight.
    pub fn checking_here(&self) -> bool {
        self.current()
            .is_some_and(|e| self.checking() == Some(e.id.as_str()))
    }

    /// The exercise a check is in flight for.
    pub fn checking(&self) -> Option<&str> {
        self.checking.as_ref().map(|(_, id)| id.as_str())
    }

    /// Start a check of the editor's text, unless one is in flight (or there is no exercise, or
    /// the script is over the judge's limit, which is said in the verdict region instead).
    pub fn begin_check(&mut self) -> Option<CheckRequest> {
        if self.checking.is_some() {
            return None;
        }
        let exercise = self.current()?.id.clone();
        let source = self.draft().to_string();
        if source.len() > MAX_SOURCE_BYTES {
            self.outcome = Some(Outcome::NotChecked {
                message: format!(
                    "Your script is over {LIMIT}, the judge's limit: make it shorter."
                ),
                exercise,
            });
            return None;
        }
        self.seq += 1;
        self.checking = Some((self.seq, exercise.clone()));
        Some(CheckRequest {
            seq: self.seq,
            exercise,
            source,
            to_room: None,
        })
    }

    /// End the check in flight, if any, with `message` instead of a verdict.
    fn not_checked(&mut self, message: String) {
        if let Some((_, exercise)) = self.checking.take() {
            self.outcome = Some(Outcome::NotChecked { exercise, message });
        }
    }

    /// The check could not be sent (no connection).
    pub fn not_sent(&mut self) {
        self.not_checked("Not connected: press Check again once the page reconnects.".into());
    }

    /// The socket closed: the check in flight will get no answer.
    pub fn disconnected(&mut self) {
        self.not_checked(
            "The connection dropped before the verdict: press Check again once the page reconnects."
                .into(),
        );
    }

    /// Check `seq` had no answer after [`GIVE_UP_MS`]: the button is freed.
    pub fn give_up(&mut self, seq: u32) {
        if self.checking.as_ref().is_some_and(|(s, _)| *s == seq) {
            self.not_checked(format!(
                "No verdict after {} s. Press Check to try again.",
                GIVE_UP_MS / 1000
            ));
        }
    }

    /// An `error` frame. While a check is in flight, one without a run id is its answer
    /// (refused: busy, rate limited, too big, Redis unavailable, …): true when it was.
    pub fn error(&mut self, err: &WireError) -> bool {
        if self.checking.is_none() || err.run_id.is_some() {
            return false;
        }
        self.not_checked(err.message.clone());
        true
    }

    /// The judge's answer: its exercise's progress moves on, and it takes the verdict region.
    pub fn verdict(&mut self, verdict: SolutionVerdict) {
        let entry = self.book.entry_mut(&verdict.exercise);
        let now = if verdict.passed {
            Progress::Passed
        } else {
            Progress::Tried
        };
        entry.progress = entry.progress.max(now);
        if self.checking() == Some(verdict.exercise.as_str()) {
            self.checking = None;
        }
        let shown = verdict
            .counterexample
            .as_ref()
            .map_or(0, |c| calls_in(&c.tape).min(1));
        self.outcome = Some(Outcome::Verdict { verdict, shown });
    }

    /// The verdict region's content for the exercise on screen.
    pub fn on_screen(&self) -> Option<&Outcome> {
        let id = self.current()?.id.as_str();
        self.outcome.as_ref().filter(|o| o.exercise() == id)
    }

    /// Reveal the tape's next call (`all`: every call).
    pub fn step(&mut self, all: bool) {
        if let Some(Outcome::Verdict {
            verdict:
                SolutionVerdict {
                    counterexample: Some(c),
                    ..
                },
            shown,
        }) = &mut self.outcome
        {
            let calls = calls_in(&c.tape);
            *shown = if all { calls } else { (*shown + 1).min(calls) };
        }
    }

    /// Import a workshop file (its fields, or why it could not be read): merged into the book
    /// (see [`Book::merge`]), the editor reloaded. The sentence says what happened either way.
    pub fn import(&mut self, file: Result<Option<Fields>, String>) {
        let note = match file.and_then(Book::from_fields) {
            Ok(book) => {
                let n = self.book.merge(book);
                self.loaded += 1;
                format!(
                    "Imported {} from the file.",
                    super::text::count(n as u64, "exercise")
                )
            }
            Err(why) => why,
        };
        self.note = Some(note);
    }
}

/// The address's workshop: `Some(exercise)` when it says `view=workshop` (with the exercise it
/// names, if any), `None` otherwise. Ids are plain words, so no decoding is needed: an id that
/// needed it would name no exercise, and the first one opens instead.
pub fn from_query(query: &str) -> Option<Option<String>> {
    let query = query.strip_prefix('?').unwrap_or(query);
    let mut open = false;
    let mut exercise = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("view", "workshop")) => open = true,
            Some(("exercise", id)) if !id.is_empty() => exercise = Some(id.to_string()),
            _ => {}
        }
    }
    open.then_some(exercise)
}

/// The verdict's headline: "Passed", or what went wrong, in a few words (the server's own
/// sentence follows it).
pub fn headline(code: VerdictCode) -> &'static str {
    match code {
        VerdictCode::Passed => "Passed",
        VerdictCode::Oversold => "Oversold",
        VerdictCode::WrongAnswer => "Wrong answer",
        VerdictCode::BadInputAccepted => "Bad input accepted",
        VerdictCode::Duplicate => "Counted twice",
        VerdictCode::SoldTwice => "Sold twice",
        VerdictCode::LimitBroken => "Over the customer's limit",
        VerdictCode::PartialCart => "Partial cart",
        VerdictCode::TooSlow => "Too slow",
        VerdictCode::Killed => "Stopped: ran too long",
        VerdictCode::Restarted => "Sandbox restarted",
        VerdictCode::Noperm => "Not allowed",
        VerdictCode::ScriptError => "Script error",
        VerdictCode::Crossslot => "Keys on different slots",
    }
}

/// How many calls a tape holds (its lines with `inside` false).
pub fn calls_in(tape: &[TapeLine]) -> usize {
    tape.iter().filter(|l| !l.inside).count()
}

/// The first `calls` calls of `tape`, each with the commands its script ran (the lines after it
/// up to the next call).
pub fn shown_lines(tape: &[TapeLine], calls: usize) -> &[TapeLine] {
    let mut seen = 0;
    let end = tape
        .iter()
        .position(|l| {
            if l.inside {
                return false;
            }
            seen += 1;
            seen > calls
        })
        .unwrap_or(tape.len());
    &tape[..end]
}

/// One row of the figures beside the reference's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FigureRow {
    /// What is measured.
    pub label: &'static str,
    /// The student's script.
    pub yours: String,
    /// The reference solution, in the same check.
    pub reference: String,
}

/// A pass's figures beside the reference's: throughput, then the longest call.
pub fn figure_rows(f: &Figures) -> [FigureRow; 2] {
    [
        FigureRow {
            label: "Calls a second",
            yours: per_second(f.calls_per_s),
            reference: per_second(f.reference_calls_per_s),
        },
        FigureRow {
            label: "Longest call inside Redis",
            yours: micros(f.longest_us),
            reference: micros(f.reference_longest_us),
        },
    ]
}

/// What a key does in the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditorKey {
    /// Tab: two spaces, instead of leaving the editor.
    Indent,
    /// Escape: the next Tab leaves the editor.
    Arm,
    /// Anything else, and Tab (or Shift+Tab) after Escape: the browser's own behaviour.
    Default,
}

/// What `key` does in the editor; `armed` when the key before it was Escape.
pub fn editor_key(key: &str, shift: bool, modifier: bool, armed: bool) -> EditorKey {
    match key {
        "Escape" => EditorKey::Arm,
        "Tab" if !shift && !modifier && !armed => EditorKey::Indent,
        _ => EditorKey::Default,
    }
}

/// The gutter's text: one number a line of `text`, `1` to however many lines it has.
pub fn gutter(text: &str) -> String {
    let lines = text.split('\n').count();
    let mut out = String::with_capacity(lines * 3);
    for n in 1..=lines {
        if n > 1 {
            out.push('\n');
        }
        out.push_str(&n.to_string());
    }
    out
}

/// The layer behind the editor: the editor's text, escaped. It sizes the editor (the
/// textarea lies over it, as tall and as wide as its text, so the gutter and the text scroll
/// as one) and shows the text the textarea holds. (Lua highlighting would go here; the page's
/// size budget had no room for it.)
pub fn layer(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    escape_into(&mut out, text);
    // A final newline needs something after it, or the layer is a line shorter than the text.
    out.push(' ');
    out
}

/// `text` with `&`, `<`, `>` and `"` escaped, appended to `out`: safe as text and inside a
/// double-quoted attribute.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

// The panels' markup. Built here as HTML strings (everything from the server or the student
// escaped) and set whole by the component: a template filled in costs the page far less wasm
// than a Leptos view per row would, and the exact markup is pinned by host tests. Buttons
// inside carry `data-*` attributes that the view's one listener reads.

/// Append `template` to `out` with each `\u{1}` replaced by the next of `args`, escaped.
fn fill(out: &mut String, template: &str, args: &[&str]) {
    let mut args = args.iter();
    for (i, piece) in template.split('\u{1}').enumerate() {
        if i > 0 {
            escape_into(out, args.next().copied().unwrap_or_default());
        }
        out.push_str(piece);
    }
}

/// The exercise list: a button per exercise (`id="ws-ex-ID"`, so the view can mark the one on
/// screen without drawing the list again), its title and its progress.
pub fn list_html(w: &Workshop) -> String {
    let mut out = String::new();
    for e in &w.exercises {
        let progress = w.book.progress(&e.id);
        fill(
            &mut out,
            "<li><button class=\"ws-ex\" id=\"ws-ex-\u{1}\" data-exercise=\"\u{1}\" data-progress=\"\u{1}\"><span>\u{1}</span><span class=\"ws-badge\">\u{1}</span></button></li>",
            &[&e.id, &e.id, progress.id(), &e.title, progress.words()],
        );
    }
    out
}

/// The exercise on screen: title, story, contract, and the hints revealed so far.
pub fn task_html(w: &Workshop) -> String {
    let mut out = String::new();
    let Some(ex) = w.current() else {
        out.push_str(
            "<p class=\"muted\">No exercises yet: they come with the server's greeting.</p>",
        );
        return out;
    };
    fill(
        &mut out,
        "<h2 id=\"ws-title\">\u{1}</h2><p class=\"ws-story\">\u{1}</p><h3>Contract</h3><pre class=\"ws-contract\" tabindex=\"0\" aria-label=\"Contract\">\u{1}</pre><ol class=\"ws-hints\">",
        &[&ex.title, &ex.story, &ex.contract],
    );
    for hint in ex.hints.iter().take(w.hints_shown) {
        fill(&mut out, "<li>\u{1}</li>", &[hint]);
    }
    out.push_str("</ol>");
    out
}

/// The hint button's words, and whether it can reveal another.
pub fn hint_button(w: &Workshop) -> (&'static str, bool) {
    let total = w.current().map_or(0, |e| e.hints.len());
    if w.hints_shown < total {
        ("Show a hint", true)
    } else if total == 0 {
        ("No hints for this one", false)
    } else {
        ("No more hints", false)
    }
}

/// The verdict region's summary (its live part): what the check in flight is doing, or the
/// last outcome's headline and the server's sentence.
pub fn summary_html(w: &Workshop) -> String {
    let mut out = String::new();
    let (tone, code, headline, message) = if w.checking_here() {
        (
            "wait",
            "checking",
            "Checking…",
            "The judge is racing your script against crowds of buyers on a Redis of its own.",
        )
    } else {
        match w.on_screen() {
            None => {
                out.push_str(
                    "<p class=\"muted\">Press Check: the judge's verdict appears here.</p>",
                );
                return out;
            }
            Some(Outcome::NotChecked { message, .. }) => {
                ("warn", "not_checked", "Not checked", message.as_str())
            }
            Some(Outcome::Verdict { verdict: v, .. }) => (
                if v.passed { "good" } else { "bad" },
                v.verdict.as_str(),
                headline(v.verdict),
                v.message.as_str(),
            ),
        }
    };
    fill(
        &mut out,
        "<p class=\"ws-headline\" id=\"ws-headline\" data-tone=\"\u{1}\" data-verdict=\"\u{1}\">\u{1}</p><p>\u{1}</p>",
        &[tone, code, headline, message],
    );
    out
}

/// The verdict's details: the figures beside the reference's (a pass) or the counterexample
/// with the tape shown so far (a fail), and how long the check took; empty without a verdict.
pub fn details_html(w: &Workshop) -> String {
    let mut out = String::new();
    let Some(Outcome::Verdict { verdict: v, shown }) = w.on_screen().filter(|_| !w.checking_here())
    else {
        return out;
    };
    if let Some(f) = &v.figures {
        out.push_str("<table class=\"ws-figures\" id=\"ws-figures\"><tr><th></th><th scope=\"col\">Yours</th><th scope=\"col\">Reference</th></tr>");
        for r in figure_rows(f) {
            fill(
                &mut out,
                "<tr><th scope=\"row\">\u{1}</th><td>\u{1}</td><td>\u{1}</td></tr>",
                &[r.label, &r.yours, &r.reference],
            );
        }
        out.push_str("</table>");
    }
    if let Some(c) = &v.counterexample {
        out.push_str("<h3>Before the first call</h3><ul class=\"ws-setup\">");
        for s in &c.setup {
            fill(&mut out, "<li><code>\u{1}</code></li>", &[s]);
        }
        out.push_str("</ul><h3>The tape, in the order Redis ran it</h3><ol class=\"ws-tape\" id=\"ws-tape\">");
        for l in shown_lines(&c.tape, *shown) {
            tape_row(&mut out, l);
        }
        out.push_str("</ol>");
    }
    let took = super::text::millis(u32::try_from(v.took_ms).unwrap_or(u32::MAX));
    fill(
        &mut out,
        "<p class=\"muted\">Judged in \u{1}.</p>",
        &[&took],
    );
    out
}

/// What the last Import or Export did, as markup (the sentence may quote a file).
pub fn note_html(w: &Workshop) -> String {
    let mut out = String::new();
    escape_into(&mut out, w.note.as_deref().unwrap_or_default());
    out
}

/// The room panel's note, as markup.
pub fn room_note_html(w: &Workshop) -> String {
    let mut out = String::new();
    escape_into(&mut out, w.room_note.as_deref().unwrap_or_default());
    out
}

/// One line of the tape: a call (its buyer, its reply, the stock after, and what the contract
/// expected, marked), or a command its script ran, indented under it.
fn tape_row(out: &mut String, l: &TapeLine) {
    if l.inside {
        fill(
            out,
            "<li class=\"ws-inside\"><code>\u{1}</code></li>",
            &[&l.command],
        );
        return;
    }
    fill(
        out,
        "<li class=\"ws-call\"><span class=\"ws-buyer\">buyer \u{1}</span><code>\u{1}</code><span>→ <b>\u{1}</b></span>",
        &[&l.buyer.to_string(), &l.command, &l.reply],
    );
    if let Some(s) = &l.stock_after {
        fill(
            out,
            "<span class=\"ws-after\">stock after <b>\u{1}</b></span>",
            &[s],
        );
    }
    if let Some(e) = &l.expected {
        fill(
            out,
            "<mark class=\"ws-expected\">expected <b>\u{1}</b></mark>",
            &[e],
        );
    }
    out.push_str("</li>");
}

/// The state of the controls that are not markup (one value, so the component reads them all
/// through one memo).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Controls {
    /// A check is in flight: Check waits.
    pub checking: bool,
    /// Another hint can be revealed.
    pub more_hints: bool,
    /// A tape is on screen (Step and Show all apply)…
    pub tape: bool,
    /// …and every call of it is shown.
    pub tape_done: bool,
}

/// [`Controls`] as `w` stands.
pub fn controls(w: &Workshop) -> Controls {
    let shown_of = match w.on_screen() {
        Some(o @ Outcome::Verdict { shown, .. }) => Some((*shown, o.tape().1)),
        _ => None,
    };
    let (tape, tape_done) = match shown_of {
        Some((shown, calls)) if calls > 0 && w.checking().is_none() => (true, shown >= calls),
        _ => (false, true),
    };
    Controls {
        checking: w.checking().is_some(),
        more_hints: hint_button(w).1,
        tape,
        tape_done,
    }
}

#[cfg(test)]
mod tests;
